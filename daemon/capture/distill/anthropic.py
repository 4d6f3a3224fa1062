"""Pure: the Anthropic Messages wire format (`POST {base_url}/v1/messages`)."""

from __future__ import annotations

from typing import Any

from daemon.capture.distill.base import MalformedAnswer

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"  # override with llm.extra_headers = {"anthropic-version" = "…"}


class AnthropicMessages:
    """Requests and answers of Anthropic's Messages API, streaming off."""

    provider = "anthropic"

    def endpoint(self, base_url: str) -> str:
        """Return the URL to post to; a base URL that already ends in /v1 is accepted."""
        base = (base_url or DEFAULT_BASE_URL).rstrip("/")
        if base.endswith("/v1/messages"):
            return base
        return base + ("/messages" if base.endswith("/v1") else "/v1/messages")

    def key_env(self, base_url: str) -> str:
        """Return the key variable implied when llm.api_key_env is empty."""
        return "ANTHROPIC_API_KEY"

    def headers(self, api_key: str) -> dict[str, str]:
        headers = {"anthropic-version": API_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        return headers

    def body(self, llm: Any, system: str, user: str) -> dict[str, Any]:
        """Return the request body for LLMSettings `llm`."""
        return {
            "model": llm.model,
            "system": system,
            "messages": [{"role": "user", "content": user}],
            "max_tokens": llm.max_output_tokens,
            "temperature": llm.temperature,
            "stream": False,
        }

    def usage(self, data: Any) -> int | None:
        """Return the tokens the server says this call used, or None."""
        usage = data.get("usage") if isinstance(data, dict) else None
        if not isinstance(usage, dict):
            return None
        keys = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        counts = [usage[k] for k in keys if isinstance(usage.get(k), int)]
        return sum(counts) if counts else None

    def text(self, data: Any) -> str:
        """Return the answer's text blocks joined; raise ValueError saying what is wrong."""
        content = data.get("content") if isinstance(data, dict) else None
        if not isinstance(content, list):
            raise MalformedAnswer("the answer has no content list")
        if data.get("stop_reason") == "refusal":
            raise ValueError("the model refused to write a note (stop_reason refusal)")
        # Thinking blocks, when a proxy turns them on, are not part of the note.
        return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
