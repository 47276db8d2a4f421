"""The HTTP client under every model client, on one TLS context per process (shell).

Left to itself, each httpx2 client builds its own ``ssl.SSLContext``, loading the
CA bundle again for every client. Which context a route gets is in docs/configuration.md
"Configuration" ("Certificates"). The contexts live as long as the process (cached
here, the one owner): what they hold depends on the process's environment only,
never on a route's settings, so a route changed on the memory page reuses them.
"""

from __future__ import annotations

import functools
import ssl
from urllib.parse import urlsplit

import httpx2

from xtyserver.model.bounds import is_loopback
from xtyserver.model.provider import Provider

__all__ = ["context_for", "http_client", "provider_client", "verifying_context"]

_LIMITS = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)


@functools.cache
def verifying_context() -> ssl.SSLContext:
    """The process's verifying context, as httpx2 builds its default one."""
    return httpx2.create_ssl_context()


@functools.cache
def _no_ca_context() -> ssl.SSLContext:
    # PROTOCOL_TLS_CLIENT requires a certificate and checks the host name; with no
    # CA loaded no certificate can be valid, so any TLS handshake is refused.
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def context_for(base_url: str) -> ssl.SSLContext:
    """The context a client of ``base_url`` uses: no CA for plain HTTP on loopback."""
    if urlsplit(base_url.strip()).scheme.lower() == "http" and is_loopback(base_url.strip()):
        return _no_ca_context()
    return verifying_context()


def http_client(base_url: str, *, timeout: float) -> httpx2.AsyncClient:
    """An HTTP client of ``base_url`` on the process's context for it (``timeout``: a backstop)."""
    return httpx2.AsyncClient(
        base_url=base_url.strip(),
        timeout=timeout,
        limits=_LIMITS,
        follow_redirects=True,
        verify=context_for(base_url),
    )


def provider_client(base_url: str, api_key: str, *, timeout: float) -> Provider:
    """The provider client of one route, on :func:`http_client` (the callers retry)."""
    return Provider(http_client(base_url, timeout=timeout), api_key)
