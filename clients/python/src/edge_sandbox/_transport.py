"""How calls reach the service: one httpx client per sandbox object, the token, error answers
turned into SandboxError subclasses, and transport failures into SandboxConnectionError.

A call whose body names its run (a process id, an idempotency key) is sent again when its connection
fails before the answer: the service runs it at most once and the retry gets the first run's answer.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import httpx

from ._api import Call, segment
from ._streams import RetryPolicy
from .errors import InvalidRequestError, SandboxConnectionError, SandboxError, error_from_body

#: No limit on reading: commands and streams take as long as they take (streams send keepalives).
DEFAULT_TIMEOUT = httpx.Timeout(None, connect=10.0)


def _answer_error(response: httpx.Response) -> SandboxError:
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    return error_from_body(body, response.status_code)


class _Base:
    def __init__(self, sandbox_id: str, url: str | None, token: str | None, retry: RetryPolicy | None, headers: dict[str, str] | None) -> None:
        url = url or os.environ.get("EDGE_SANDBOX_URL")
        if not url:
            raise InvalidRequestError("No service URL: pass url= or set EDGE_SANDBOX_URL")
        token = token if token is not None else os.environ.get("EDGE_SANDBOX_TOKEN")
        self.url = url.rstrip("/")
        self.base = f"{self.url}/v1/sandboxes/{segment(sandbox_id)}"
        self.headers = {"user-agent": "edge-sandbox-python", **(headers or {})}
        if token:
            self.headers["authorization"] = f"Bearer {token}"
        self.retry = retry or RetryPolicy()

    def _request(self, client: httpx.Client | httpx.AsyncClient, call: Call, stream: bool, timeout: httpx.Timeout | None) -> httpx.Request:
        headers = {**self.headers, **call.headers}
        if stream:
            headers["accept"] = "text/event-stream"
        query = {name: str(value).lower() if isinstance(value, bool) else value for name, value in call.query.items() if value is not None}
        return client.build_request(
            call.method,
            self.base + call.path,
            params=query or None,
            json=call.body,
            headers=headers,
            timeout=timeout if timeout is not None else client.timeout,
        )

    def _unreachable(self, error: Exception) -> SandboxConnectionError:
        return SandboxConnectionError(f"Cannot reach the sandbox service at {self.url}: {error}")


class SyncTransport(_Base):
    """The sync transport (httpx.Client)."""

    def __init__(self, sandbox_id: str, url: str | None, token: str | None, retry: RetryPolicy | None, headers: dict[str, str] | None, client: httpx.Client | None) -> None:
        super().__init__(sandbox_id, url, token, retry, headers)
        self.owns_client = client is None
        self.client = client or httpx.Client(timeout=DEFAULT_TIMEOUT)

    def send(self, call: Call, stream: bool = False, timeout: httpx.Timeout | None = None) -> httpx.Response:
        """The answer to a call (raises the error of a failed one); with ``stream``, unread."""
        request = self._request(self.client, call, stream, timeout)
        retries = self.retry.attempts if call.names_its_run else 0
        attempt = 0
        while True:
            try:
                response = self.client.send(request, stream=stream)
                break
            except httpx.TransportError as error:
                if attempt >= retries:
                    raise self._unreachable(error) from error
                attempt += 1
                time.sleep(self.retry.delay(attempt))
        if response.status_code >= 400:
            if stream:
                response.read()
                response.close()
            raise _answer_error(response)
        return response

    def json(self, call: Call) -> Any:
        response = self.send(call)
        return None if response.status_code == 204 or not response.content else response.json()

    def close(self) -> None:
        if self.owns_client:
            self.client.close()


class AsyncTransport(_Base):
    """The async transport (httpx.AsyncClient)."""

    def __init__(
        self, sandbox_id: str, url: str | None, token: str | None, retry: RetryPolicy | None, headers: dict[str, str] | None, client: httpx.AsyncClient | None
    ) -> None:
        super().__init__(sandbox_id, url, token, retry, headers)
        self.owns_client = client is None
        self.client = client or httpx.AsyncClient(timeout=DEFAULT_TIMEOUT)

    async def send(self, call: Call, stream: bool = False, timeout: httpx.Timeout | None = None) -> httpx.Response:
        """The answer to a call (raises the error of a failed one); with ``stream``, unread."""
        request = self._request(self.client, call, stream, timeout)
        retries = self.retry.attempts if call.names_its_run else 0
        attempt = 0
        while True:
            try:
                response = await self.client.send(request, stream=stream)
                break
            except httpx.TransportError as error:
                if attempt >= retries:
                    raise self._unreachable(error) from error
                attempt += 1
                await asyncio.sleep(self.retry.delay(attempt))
        if response.status_code >= 400:
            if stream:
                await response.aread()
                await response.aclose()
            raise _answer_error(response)
        return response

    async def json(self, call: Call) -> Any:
        response = await self.send(call)
        return None if response.status_code == 204 or not response.content else response.json()

    async def close(self) -> None:
        if self.owns_client:
            await self.client.aclose()
