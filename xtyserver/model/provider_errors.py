"""The provider client's failures, importable without the HTTP client (shell).

:mod:`xtyserver.model.client` classifies these into ``chat.error`` codes; they
live apart from :mod:`xtyserver.model.provider` so that the model client, the
embedding client and the doctor name them without importing httpx2, which is
loaded with the first provider client (after the server listens).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "ProviderAnswerError",
    "ProviderConnection",
    "ProviderError",
    "ProviderStatus",
    "ProviderTimeout",
]


class ProviderError(Exception):
    """The provider failed a request (always turned into a ModelError by the caller)."""


class ProviderStatus(ProviderError):
    """An HTTP error answer (status 400 or more); ``body`` is its JSON, or its text."""

    def __init__(self, status: int, headers: httpx2.Headers, body: object) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.headers = headers
        self.body = body

    @property
    def message(self) -> str:
        """The provider's own error text, only to be read (it may echo the key)."""
        body = self.body
        if isinstance(body, dict):
            inner = body.get("error", body)
            if isinstance(inner, dict):
                return f"{inner.get('message', '')} {inner.get('param', '')}"
            return str(inner)
        return str(body)


class ProviderTimeout(ProviderError):
    """The transport's own timeout (the client's backstop) ran out."""


class ProviderConnection(ProviderError):
    """The connection could not be made or broke."""


class ProviderAnswerError(ProviderError):
    """The answer is not what the API defines (malformed JSON, an error event)."""
