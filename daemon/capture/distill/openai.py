"""Pure: the OpenAI chat-completions wire format (OpenAI, Ollama /v1, llama.cpp, vLLM, LM Studio…)."""

from __future__ import annotations

from typing import Any

from daemon.capture.distill.base import MalformedAnswer

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAIChat:
    """Requests and answers of `POST {base_url}/chat/completions`, streaming off."""

    provider = "openai"

    def endpoint(self, base_url: str) -> str:
        """Return the URL to post to; a full …/chat/completions URL is taken as is."""
        base = (base_url or DEFAULT_BASE_URL).rstrip("/")
        return base if base.endswith("/chat/completions") else base + "/chat/completions"

    def key_env(self, base_url: str) -> str:
        """Return the key variable implied when llm.api_key_env is empty."""
        # Only OpenAI's own server needs a key by default; local servers need none.
        return "OPENAI_API_KEY" if not base_url or base_url.rstrip("/") == DEFAULT_BASE_URL else ""

    def headers(self, api_key: str) -> dict[str, str]:
        return {"authorization": f"Bearer {api_key}"} if api_key else {}

    def body(self, llm: Any, system: str, user: str) -> dict[str, Any]:
        """Return the request body for LLMSettings `llm`."""
        body: dict[str, Any] = {
            "model": llm.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "temperature": llm.temperature,
            "max_tokens": llm.max_output_tokens,
            "stream": False,
        }
        if llm.disable_thinking:
            # Read by the chat template of Qwen3-style reasoning models (vLLM, llama.cpp, SGLang).
            body["chat_template_kwargs"] = {"enable_thinking": False}
        return body

    def usage(self, data: Any) -> int | None:
        """Return the tokens the server says this call used, or None."""
        usage = data.get("usage") if isinstance(data, dict) else None
        if not isinstance(usage, dict):
            return None
        total = usage.get("total_tokens")
        if isinstance(total, int):
            return total
        parts = [usage.get("prompt_tokens"), usage.get("completion_tokens")]
        return sum(p for p in parts if isinstance(p, int)) if any(isinstance(p, int) for p in parts) else None

    def text(self, data: Any) -> str:
        """Return the answer's text; raise ValueError saying what is missing."""
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise MalformedAnswer("the answer has no choices[0]")
        choice = choices[0]
        message = choice.get("message")
        if not isinstance(message, dict):
            raise MalformedAnswer("the answer has no choices[0].message")
        if choice.get("finish_reason") == "content_filter" or message.get("refusal"):
            raise ValueError("the model refused to write a note (content filter)")
        content = message.get("content")
        if isinstance(content, list):  # some servers send content parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        if content is None or (isinstance(content, str) and not content.strip()):
            if message.get("reasoning_content") or message.get("reasoning"):
                raise ValueError(
                    "the model spent its output on reasoning and wrote no note: "
                    "raise llm.max_output_tokens or set llm.disable_thinking = true"
                )
            return ""
        if not isinstance(content, str):
            raise MalformedAnswer(f"choices[0].message.content is {type(content).__name__}, not text")
        return content
