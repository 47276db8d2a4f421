"""A small typed client of an OpenAI-compatible provider over httpx2 (shell).

What xtyserver asks of a provider is three calls: a streamed
``POST /chat/completions``, ``POST /embeddings`` and ``GET /models``. The body
is built and encoded here (msgspec), the stream decoded by the bounded SSE
reader (:mod:`xtyserver.model.request`), the chunks read leniently by
:mod:`xtyserver.model.client`, and the retries are the callers' own; what is
left to an HTTP client is auth, timeouts and the transport, so httpx2's public
API is all this needs. The openai SDK (17.5 MiB, some 500 type modules and
pydantic models imported at start) is a test tool only: tests check that it
sends the same bytes (``tests/model/test_chat_body.py``).

Every failure is one of three :class:`ProviderError` kinds, mapped to
``chat.error`` codes by :func:`xtyserver.model.client.model_error`:
:class:`ProviderStatus` (an HTTP error answer), :class:`ProviderTimeout` and
:class:`ProviderConnection`; a malformed answer is :class:`ProviderAnswerError`.
"""

from __future__ import annotations

import ssl
from typing import Any

import anyio
import httpx2
import msgspec

from xtyserver.model.provider_errors import (
    ProviderAnswerError,
    ProviderConnection,
    ProviderError,
    ProviderStatus,
    ProviderTimeout,
)

__all__ = ["ERROR_BODY_BYTES", "TRANSPORT_ERRORS", "Provider"]

ERROR_BODY_BYTES = 64 * 1024
"""The most of an error answer's body that is read (it is only ever classified)."""

ANSWER_BYTES = 64 * 1024 * 1024
"""The most of a plain JSON answer (an embeddings batch, a model list) that is read."""

_ENCODER = msgspec.json.Encoder()
TRANSPORT_ERRORS = (httpx2.RequestError, ssl.SSLError, anyio.EndOfStream)
"""What the transport raises for a broken connection (TLS failures can surface raw)."""


class Provider:
    """One provider route: its base URL, key (never in a repr, log or error) and connections.

    Owns ``http`` (:func:`xtyserver.model.tls.http_client`) from here on.
    """

    def __init__(self, http: httpx2.AsyncClient, api_key: str) -> None:
        self._client = http
        # A local server (Ollama, vLLM) may need no key; providers expect the header.
        self._headers = {"Authorization": f"Bearer {api_key or 'EMPTY'}"}

    def __repr__(self) -> str:
        return f"Provider({str(self._client.base_url)!r})"

    def is_closed(self) -> bool:
        """Whether :meth:`close` has been called."""
        return self._client.is_closed

    async def close(self) -> None:
        """Close the HTTP connections."""
        await self._client.aclose()

    async def open_stream(self, path: str, body: dict[str, Any]) -> httpx2.Response:
        """POST ``body`` and return the answer, status checked, its body for the caller to read.

        The caller must ``aclose()`` the answer.
        """
        request = self._client.build_request(
            "POST",
            path,
            content=_ENCODER.encode(body),
            headers={
                **self._headers,
                "Content-Type": "application/json",
                "Accept": "text/event-stream",
                # The bytes read are the bytes sent: the SSE reader's cap holds.
                "Accept-Encoding": "identity",
            },
        )
        response = await self._send(request)
        await self._raise_for_status(response)
        return response

    async def post_json(self, path: str, body: dict[str, Any]) -> object:
        """POST ``body`` and return the answer's JSON."""
        content = _ENCODER.encode(body)
        headers = {**self._headers, "Content-Type": "application/json"}
        request = self._client.build_request("POST", path, content=content, headers=headers)
        return await self._json(request)

    async def get_json(self, path: str) -> object:
        """GET ``path`` and return the answer's JSON."""
        return await self._json(self._client.build_request("GET", path, headers=self._headers))

    async def _json(self, request: httpx2.Request) -> object:
        response = await self._send(request)
        try:
            await self._raise_for_status(response)
            data = await _read(response, ANSWER_BYTES)
        finally:
            await response.aclose()
        try:
            return msgspec.json.decode(data)
        except msgspec.DecodeError:
            raise ProviderAnswerError("the answer is not JSON") from None

    async def _send(self, request: httpx2.Request) -> httpx2.Response:
        try:
            return await self._client.send(request, stream=True)
        except httpx2.TimeoutException as err:
            raise ProviderTimeout("no answer in time") from err
        except TRANSPORT_ERRORS as err:
            raise ProviderConnection("cannot reach the provider") from err

    async def _raise_for_status(self, response: httpx2.Response) -> None:
        if response.status_code < 400:
            return
        try:
            data = await _read(response, ERROR_BODY_BYTES)
        except ProviderError:
            data = b""
        finally:
            await response.aclose()
        body: object
        try:
            body = msgspec.json.decode(data)
        except msgspec.DecodeError:
            body = data.decode("utf-8", "replace")
        raise ProviderStatus(response.status_code, response.headers, body)


async def _read(response: httpx2.Response, cap: int) -> bytes:
    """At most ``cap`` bytes of the answer's body (a longer one is cut there)."""
    parts: list[bytes] = []
    size = 0
    try:
        async for chunk in response.aiter_bytes():
            parts.append(chunk)
            size += len(chunk)
            if size >= cap:
                break
    except httpx2.TimeoutException as err:
        raise ProviderTimeout("the answer stopped") from err
    except TRANSPORT_ERRORS as err:
        raise ProviderConnection("the answer broke off") from err
    return b"".join(parts)[:cap]
