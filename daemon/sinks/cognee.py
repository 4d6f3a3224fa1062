"""A small client for the Cognee 1.6 REST API: add, delete, cognify, status, search.

Only what the sink needs. Every failure is a `SinkError` saying whether a retry can
help (server down, 5xx, 429) or not (a bad token, a refused request).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Self

import httpx
from tenacity import (
    retry,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
)

from daemon.config import CogneeSinkSettings


class SinkError(Exception):
    """A request Cognee did not carry out; `retryable` says whether waiting can help."""

    def __init__(self, message: str, retryable: bool = True) -> None:
        super().__init__(message)
        self.retryable = retryable


@dataclass(frozen=True)
class Upload:
    """One document for `add`: a file name, its text and its metadata object."""

    filename: str
    text: str
    metadata: dict[str, Any]


def _auth_headers(settings: CogneeSinkSettings) -> dict[str, str]:
    headers: dict[str, str] = {}
    for env, header, prefix in ((settings.token_env, "Authorization", "Bearer "), (settings.api_key_env, "X-Api-Key", "")):
        if not env:
            continue
        value = os.environ.get(env, "")
        if not value:
            raise SinkError(f"sinks.cognee: the variable {env} is not set", retryable=False)
        headers[header] = prefix + value
    return headers


# Connection failures are retried at once a few times; anything longer is the outbox's backoff.
_transient = retry(
    retry=retry_if_exception_type((httpx.ConnectError, httpx.RemoteProtocolError)),
    stop=stop_after_attempt(3),
    wait=wait_exponential(multiplier=0.2, max=2),
    reraise=True,
)


class CogneeClient:
    """One Cognee server and dataset, as configured in `[sinks.cognee]`."""

    def __init__(
        self, settings: CogneeSinkSettings, transport: httpx.BaseTransport | None = None, timeout_s: float | None = None
    ) -> None:
        if not settings.url:
            raise SinkError("sinks.cognee.url is empty: set it to your Cognee server", retryable=False)
        self.settings = settings
        self.dataset = settings.dataset
        self.http = httpx.Client(
            base_url=settings.url.rstrip("/"),
            timeout=settings.timeout_s if timeout_s is None else timeout_s,
            headers=_auth_headers(settings),
            transport=transport,
        )
        self._logged_in = False
        self._dataset_id = ""

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing -------------------------------------------------------------------

    def _login(self) -> None:
        """Log in with the configured variables once; the token is kept for this client."""
        s = self.settings
        if self._logged_in or not (s.username_env and s.password_env):
            return
        username, password = os.environ.get(s.username_env, ""), os.environ.get(s.password_env, "")
        if not username or not password:
            raise SinkError(f"sinks.cognee: set {s.username_env} and {s.password_env} to log in", retryable=False)
        response = self._send("POST", "/api/v1/auth/login", data={"username": username, "password": password}, login=False)
        token = response.json().get("access_token") if response.content else None
        if token:
            self.http.headers["Authorization"] = f"Bearer {token}"
        self._logged_in = True  # without a token the session cookie set by the login is used

    @_transient
    def _raw(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return self.http.request(method, path, **kwargs)

    def _send(self, method: str, path: str, login: bool = True, **kwargs: Any) -> httpx.Response:
        if login:
            self._login()
        try:
            response = self._raw(method, path, **kwargs)
        except httpx.TimeoutException as exc:
            raise SinkError(f"Cognee at {self.settings.url}: no answer to {method} {path} in time ({exc})") from exc
        except httpx.TransportError as exc:
            raise SinkError(f"Cognee at {self.settings.url} unreachable: {exc}") from exc
        if response.status_code >= 400:
            detail = response.text[:300].strip()
            retryable = response.status_code >= 500 or response.status_code in (408, 409, 429)
            hint = " (check token_env / api_key_env / the login variables)" if response.status_code in (401, 403) else ""
            raise SinkError(f"Cognee {method} {path}: HTTP {response.status_code} {detail}{hint}", retryable)
        return response

    def _json(self, response: httpx.Response) -> Any:
        try:
            return response.json()
        except ValueError as exc:
            raise SinkError(f"Cognee {response.request.url.path}: not JSON: {response.text[:200]!r}") from exc

    # -- the API ----------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        return self._json(self._send("GET", "/health", login=False))

    def add(self, uploads: Sequence[Upload]) -> tuple[str, list[str]]:
        """Add documents in one request; return the dataset id and one data id per upload, in order."""
        files = [("data", (u.filename, u.text.encode("utf-8"), "text/markdown")) for u in uploads]
        form = {"datasetName": self.dataset, "external_metadata": json.dumps([u.metadata for u in uploads])}
        body = self._json(self._send("POST", "/api/v1/add", data=form, files=files))
        items = body.get("data_ingestion_info") or [] if isinstance(body, dict) else []
        ids = [str(item.get("data_id") or "") for item in items if isinstance(item, dict)]
        if len(ids) != len(uploads) or not all(ids):
            raise SinkError(f"Cognee add: expected {len(uploads)} data ids, got {body!r:.300}", retryable=False)
        self._dataset_id = str(body.get("dataset_id") or self._dataset_id)
        return self._dataset_id, ids

    def delete(self, dataset_id: str, data_id: str) -> None:
        """Delete one document; deleting one that is already gone succeeds."""
        self._send("DELETE", "/api/v1/delete", params={"data_id": data_id, "dataset_id": dataset_id})

    def dataset_id(self) -> str:
        """The configured dataset's id, or "" when the server has no such dataset yet."""
        if not self._dataset_id:
            for row in self._json(self._send("GET", "/api/v1/datasets")):
                if isinstance(row, dict) and row.get("name") == self.dataset:
                    self._dataset_id = str(row["id"])
        return self._dataset_id

    def count(self, dataset_id: str) -> int:
        return int(self._json(self._send("GET", f"/api/v1/datasets/{dataset_id}/data/count")).get("count", 0))

    def documents(self, dataset_id: str) -> list[dict[str, Any]]:
        return list(self._json(self._send("GET", f"/api/v1/datasets/{dataset_id}/data")))

    def raw(self, dataset_id: str, data_id: str) -> str:
        return self._send("GET", f"/api/v1/datasets/{dataset_id}/data/{data_id}/raw").text

    def cognify(self) -> str:
        """Ask for a background cognify of the dataset; return the pipeline run id."""
        body = self._json(self._send("POST", "/api/v1/cognify", json={"datasets": [self.dataset], "runInBackground": True}))
        runs = [v for v in body.values() if isinstance(v, dict)] if isinstance(body, dict) else []
        return str(runs[0].get("pipeline_run_id") or "") if runs else ""

    def processing_status(self, dataset_id: str) -> dict[str, Any]:
        """How many of the dataset's documents cognify has processed."""
        return self._json(self._send("GET", f"/api/v1/datasets/{dataset_id}/processing-status"))

    def search(self, query: str, limit: int = 5) -> list[Any]:
        body = {"query": query, "datasets": [self.dataset], "searchType": "CHUNKS", "topK": limit}
        answer = self._json(self._send("POST", "/api/v1/search", json=body))
        return answer if isinstance(answer, list) else [answer]
