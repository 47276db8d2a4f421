"""Pairing from the adapter's side (v1.md "Pairing"): ask once, keep the key in a file.

A mod without a key connects without a token and sends ``adapter.pair``; the
server answers ``pair.pending`` with a code the mod may show, then
``pair.granted`` with the mod's own key once the player allows it on the
memory page. The key is kept in a file the mod owns (owner-only) and sent in
the ``adapter.hello`` that follows on the same connection, and on every
connection after.

Beside the key the mod keeps its install id (``<key file>.install``, v1.md
"Keys per install"): 32 random hex digits made once, sent in ``adapter.pair``
so that each install (each key file) has its own key on the server. A server
older than the field refuses it (``invalid_frame`` naming ``installId``); the
request is then sent again without it, and that install shares its mod's key.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from pathlib import Path

import anyio
import msgspec
from websockets.asyncio.client import ClientConnection

from xtyserver.adapter.precheck import Refused, encode, precheck
from xtyserver.files import replace_private
from xtyserver.protocol.frames import (
    AdapterInfo,
    AdapterPair,
    Error,
    PairDenied,
    PairExpired,
    PairGranted,
    PairPending,
    ServerFrame,
)

_DECODER = msgspec.json.Decoder(ServerFrame)
GRACE_SECONDS = 10.0  # past the request's own life, for the server's answer to arrive


def read_key(path: Path | None) -> str:
    """The key kept in ``path``; "" when there is none yet."""
    if path is None:
        return ""
    try:
        return path.read_text(encoding="ascii").strip()
    except (FileNotFoundError, UnicodeDecodeError):
        return ""


def store_key(path: Path, key: str) -> None:
    """Keep ``key`` in ``path`` (owner-only, replaced whole)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_private(path, key.encode("ascii"))


_INSTALL_ID = re.compile(r"[0-9a-f]{32}")


def install_id(key_file: Path) -> str:
    """This install's id, kept beside ``key_file``: made at random on first use, then the same."""
    path = key_file.with_name(key_file.name + ".install")
    kept = read_key(path)
    if _INSTALL_ID.fullmatch(kept):
        return kept
    made = secrets.token_hex(16)  # random: never a path, a user name or an account id
    store_key(path, made)
    return made


def _names_install(frame: ServerFrame) -> bool:
    """An older server's refusal of the ``installId`` field (or of its content)."""
    return isinstance(frame, Error) and "installId" in (frame.fields or [])


async def pair(
    ws: ClientConnection,
    adapter: AdapterInfo,
    game_id: str,
    *,
    timeout: float,
    on_code: Callable[[str], None] | None = None,
    install: str | None = None,
) -> str:
    """Ask to pair on ``ws`` (a connection without a token) and return the granted key.

    ``install``: this install's id (:func:`install_id`); a server that does not know the field
    is asked again without it. Refused: ``pair_denied``, ``pair_expired``, or the server's
    ``error`` (``pair_busy``, ...).
    """
    for sent in (install, None) if install is not None else (None,):
        data = encode(AdapterPair(id="pair", adapter=adapter, game_id=game_id, install_id=sent))
        precheck(data)
        await ws.send(data, text=True)
        with anyio.fail_after(timeout):
            first = _DECODER.decode(await ws.recv())
        if not _names_install(first):
            break
    if isinstance(first, Error):
        raise Refused(first.code, first.message, frame_id="pair")
    if not isinstance(first, PairPending):
        raise Refused("unexpected_frame", f"expected pair.pending, got {type(first).__name__}")
    if on_code is not None:
        on_code(first.code)
    with anyio.fail_after(first.expires_in_seconds + GRACE_SECONDS):
        answer = _DECODER.decode(await ws.recv())
    match answer:
        case PairGranted(key=key):
            return key
        case PairDenied():
            raise Refused("pair_denied", "the player did not allow this mod", frame_id="pair")
        case PairExpired():
            raise Refused("pair_expired", "nobody answered the pair request", frame_id="pair")
        case Error(code=code, message=message):
            raise Refused(code, message, frame_id="pair")
    raise Refused("unexpected_frame", f"expected pair.granted, got {type(answer).__name__}")
