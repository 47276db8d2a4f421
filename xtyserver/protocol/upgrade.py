"""The upgrade guard: which HTTP requests may become a protocol/v1 connection (v1.md "Upgrade").

Pure: a request's path and headers in, a refusal (status and reason) or None
out, before any handler runs. ``Host`` guards against DNS rebinding, ``Origin``
against cross-site WebSocket hijacking; a repeated header is refused like a
wrong one.

Only an upgrade that carries the right token counts against ``max_connections``:
one without a token is let through to the pre-auth pool, where its hello must
prove the token within the shorter pre-auth deadline, so a local process without
the token cannot fill the server and keep the mod out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import msgspec

from xtyserver.errors import PeerError
from xtyserver.protocol.codec import decode_client_frame
from xtyserver.protocol.frames import Hello
from xtyserver.token import matches as token_matches

PATH = "/v1"
HTTP_PATH = "/v1/http"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_ANY_OR_LOOPBACK_BINDS = ("127.0.0.1", "localhost", "::1", "0.0.0.0", "::")


class Refusal(msgspec.Struct, frozen=True):
    """An HTTP answer instead of the upgrade."""

    status: int
    reason: str


def header_values(headers: Iterable[tuple[str, str]], name: str) -> list[str]:
    """Every value of header ``name`` (case-insensitive), in order."""
    wanted = name.lower()
    return [value for key, value in headers if key.lower() == wanted]


def bearer(headers: Iterable[tuple[str, str]]) -> str | None:
    """The token of a single ``Authorization: Bearer`` header, else None."""
    values = header_values(headers, "Authorization")
    if len(values) != 1:
        return None
    scheme, _, credentials = values[0].partition(" ")
    return credentials.strip() if scheme.lower() == "bearer" else None


def hello_token(message: bytes | str) -> str | None:
    """The token of a message that is a well-formed ``adapter.hello``, else None."""
    try:
        frame = decode_client_frame(message).frame
    except PeerError:
        return None
    return frame.token if isinstance(frame, Hello) else None


def allowed_hosts(bind_host: str, port: int) -> frozenset[str]:
    """``Host`` values naming this server: loopback names (and a specific bind) with the port."""
    hosts = {f"{name}:{port}" for name in LOOPBACK_NAMES}
    if bind_host not in _ANY_OR_LOOPBACK_BINDS:
        shown = f"[{bind_host}]" if ":" in bind_host else bind_host
        hosts.add(f"{shown}:{port}")
    return frozenset(hosts)


def check_upgrade(
    path: str,
    headers: Sequence[tuple[str, str]],
    *,
    bind_host: str,
    port: int,
    allowed_origins: Sequence[str],
    token: str,
    connections: int,
    max_connections: int,
    accepts: Callable[[str], bool] | None = None,
) -> Refusal | None:
    """Decide whether an upgrade request may go on (None) or is refused.

    ``path`` is the request target (a query string is ignored); ``connections``
    the authenticated ones open now; ``accepts`` whether a bearer that is not the
    token is a paired mod's key.
    """
    if path.split("?", 1)[0] != PATH:
        return Refusal(404, "not found; the endpoint is /v1")
    refusal = check_headers(
        headers,
        bind_host=bind_host,
        port=port,
        allowed_origins=allowed_origins,
        token=token,
        accepts=accepts,
    )
    if refusal is not None:
        return refusal
    if header_values(headers, "Authorization") and connections >= max_connections:
        return Refusal(503, "too many connections")
    return None


def check_headers(
    headers: Sequence[tuple[str, str]],
    *,
    bind_host: str,
    port: int,
    allowed_origins: Sequence[str],
    token: str,
    accepts: Callable[[str], bool] | None = None,
) -> Refusal | None:
    """The header checks shared by the upgrade and ``POST /v1/http``: Host, Origin, token.

    ``POST /v1/http``'s token is in ``adapter.hello``; a wrong ``Authorization`` is refused too.
    """
    hosts = header_values(headers, "Host")
    if len(hosts) != 1 or hosts[0].lower() not in allowed_hosts(bind_host, port):
        return Refusal(403, "host not allowed")
    origins = header_values(headers, "Origin")
    if origins and (len(origins) > 1 or origins[0] not in allowed_origins):
        return Refusal(403, "origin not allowed")
    authorizations = header_values(headers, "Authorization")
    if authorizations and (len(authorizations) > 1 or not _proves(bearer(headers), token, accepts)):
        return Refusal(401, "wrong token")
    return None


def _proves(given: str | None, token: str, accepts: Callable[[str], bool] | None) -> bool:
    """The adapter token, or a paired mod's key (v1.md "Pairing")."""
    if token_matches(given, token):
        return True
    return given is not None and accepts is not None and accepts(given)
