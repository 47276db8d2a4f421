"""Shared pieces of every protocol/v1 frame: constraint aliases and base Structs (v1.md "Frames").

Field names are camelCase on the wire. Constraints live in the named
``Annotated`` aliases so that the JSON Schemas in ``schemas/`` and the decoder
enforce the same numbers.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from xtyserver.protocol.limits import (
    CHAT_TEXT_MAX,
    CONTEXT_ARRAY_MAX,
    CONTEXT_STRING_MAX,
    FRAME_ID_MAX,
    IMAGE_MAX_B64_CHARS,
    SAVE_NAME_MAX,
)

# -- named constraint aliases -------------------------------------------------

FrameId = Annotated[
    str, Meta(min_length=1, max_length=FRAME_ID_MAX, description="Client-chosen frame id.")
]
GameId = Annotated[
    str,
    Meta(
        pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$",
        description="Stable game id, e.g. stardew-valley.",
    ),
]
SaveId = Annotated[
    str,
    Meta(
        pattern=r"^[A-Za-z0-9_-]{1,128}$",
        description="Opaque save id derived on the player's machine; never a path or name.",
    ),
]
SaveName = Annotated[str, Meta(min_length=1, max_length=SAVE_NAME_MAX)]
AdapterName = Annotated[str, Meta(pattern=r"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$")]
AdapterVersion = Annotated[str, Meta(pattern=r"^[A-Za-z0-9][A-Za-z0-9.+_-]{0,31}$")]
Token = Annotated[str, Meta(min_length=1, max_length=512)]
Timezone = Annotated[
    str,
    Meta(
        pattern=r"^[A-Za-z][A-Za-z0-9_+/. ()-]{0,63}$",
        description=(
            "IANA time zone name (Asia/Shanghai), or a Windows zone id"
            " (China Standard Time, as .NET's TimeZoneInfo.Local.Id gives it)."
        ),
    ),
]
ContextStr = Annotated[str, Meta(max_length=CONTEXT_STRING_MAX)]
GameDay = Annotated[
    int, Meta(ge=0, le=1_000_000_000, description="Monotonic in-game day or cycle of the save.")
]
Gauge = Annotated[float, Meta(ge=-1e9, le=1e9)]
Distance = Annotated[float, Meta(ge=0, le=1e9)]
Count = Annotated[int, Meta(ge=0, le=1_000_000_000)]
StatusList = Annotated[list[ContextStr], Meta(max_length=CONTEXT_ARRAY_MAX)]
ChatText = Annotated[str, Meta(min_length=1, max_length=CHAT_TEXT_MAX)]
ImageData = Annotated[
    str, Meta(min_length=1, max_length=IMAGE_MAX_B64_CHARS, description="Base64 image bytes.")
]


def frame_type(frame: msgspec.Struct | type[msgspec.Struct]) -> str:
    """The ``type`` tag of a frame or frame class, e.g. ``"chat.send"``."""
    return str(frame.__struct_config__.tag)


class Obj(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, rename="camel"):
    """Base of every nested object: unknown fields are refused."""


class AdapterInfo(Obj):
    """The mod: its name and version (``adapter`` in ``adapter.hello`` and ``adapter.pair``)."""

    name: AdapterName
    version: AdapterVersion


class ClientBase(Obj, tag_field="type"):
    """Base of client frames."""


class ServerBase(msgspec.Struct, tag_field="type", omit_defaults=True, rename="camel"):
    """Base of server frames."""
