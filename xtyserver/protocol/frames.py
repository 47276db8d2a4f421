"""msgspec Structs for every protocol/v1 frame (v1.md "Frames").

Client frames form one tagged union on ``type`` (:data:`ClientFrame`); the
server's frames form another (:data:`ServerFrame`). Field names are camelCase on
the wire. Constraints live in the named ``Annotated`` aliases below so that the
JSON Schemas in ``schemas/`` and the decoder enforce the same numbers.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from xtyserver.protocol.limits import (
    CHAT_TEXT_MAX,
    CONTEXT_ARRAY_MAX,
    CONTEXT_NEARBY_MAX,
    CONTEXT_STRING_MAX,
    FRAME_ID_MAX,
    IMAGE_MAX_B64_CHARS,
    PROFILE_ITEM_MAX,
    PROFILE_ITEMS_MAX,
    PROFILE_TEXT_MAX,
    SAVE_NAME_MAX,
    Limits,
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
    str, Meta(pattern=r"^[A-Za-z][A-Za-z0-9_+/-]{0,63}$", description="IANA time zone name.")
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
ErrorCode = Annotated[str, Meta(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
ProfileField = Literal[
    "nickname",
    "language",
    "replyStyle",
    "personality",
    "hobbies",
    "games",
    "companionName",
    "companionPersona",
    "notes",
    "autoShared",
]


def frame_type(frame: msgspec.Struct | type[msgspec.Struct]) -> str:
    """The ``type`` tag of a frame or frame class, e.g. ``"chat.send"``."""
    return str(frame.__struct_config__.tag)


class _Obj(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, rename="camel"):
    """Base of every nested object: unknown fields are refused."""


# -- identity and hello -------------------------------------------------------


class Identity(_Obj):
    """Which game and save a connection speaks for (v1.md "Identity")."""

    game_id: GameId
    save_id: SaveId
    save_name: SaveName | None = None


class AdapterInfo(_Obj):
    name: AdapterName
    version: AdapterVersion


class Capabilities(_Obj):
    image: bool = False
    voice: bool = False


# -- modelContext -------------------------------------------------------------


class World(_Obj):
    location: ContextStr | None = None
    time: ContextStr | None = None
    season: ContextStr | None = None
    weather: ContextStr | None = None
    day: GameDay | None = None


class PlayerState(_Obj):
    health: Gauge | None = None
    stamina: Gauge | None = None
    status: StatusList | None = None
    held_item: ContextStr | None = None


class Focus(_Obj):
    kind: ContextStr | None = None
    name: ContextStr | None = None
    reachable: bool | None = None


class NearbyEntity(_Obj):
    kind: ContextStr | None = None
    name: ContextStr | None = None
    distance: Distance | None = None


class RelevantItem(_Obj):
    name: ContextStr
    count: Count | None = None


class UiState(_Obj):
    busy: bool | None = None
    menu: ContextStr | None = None


class ModelContext(_Obj):
    """The whitelisted, budgeted game state (v1.md "modelContext").

    Every field is optional: a missing ``schemaVersion`` means 1, a missing
    ``capturedAt`` means "captured when the server received it".
    """

    schema_version: Literal[1] = 1
    captured_at: Annotated[datetime, Meta(tz=True)] | None = None
    world: World | None = None
    player: PlayerState | None = None
    focus: Focus | None = None
    nearby: Annotated[list[NearbyEntity], Meta(max_length=CONTEXT_NEARBY_MAX)] | None = None
    relevant_items: Annotated[list[RelevantItem], Meta(max_length=CONTEXT_ARRAY_MAX)] | None = None
    ui: UiState | None = None


class ImageInput(_Obj):
    mime: Literal["image/png", "image/jpeg", "image/webp"]
    data: ImageData


class ChatContext(_Obj):
    model_context: ModelContext | None = None
    identity: Identity | None = None
    # Legacy full observation: size-bounded, never parsed, prompted or stored.
    observation: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


# -- client frames ------------------------------------------------------------


class _Client(_Obj, tag_field="type"):
    """Base of client frames."""


class Hello(_Client, tag="adapter.hello"):
    """First frame of every connection (v1.md "adapter.hello")."""

    protocol: Literal["v1"]
    adapter: AdapterInfo
    identity: Identity
    id: FrameId | None = None
    token: Token | None = None
    capabilities: Capabilities | None = None
    timezone: Timezone | None = None


class Heartbeat(_Client, tag="heartbeat"):
    """The game is running (v1.md "heartbeat")."""

    id: FrameId | None = None


class StateUpdate(_Client, tag="state.update"):
    """Replace the latest modelContext (v1.md "state.update")."""

    model_context: ModelContext
    identity: Identity | None = None
    id: FrameId | None = None


class ChatSend(_Client, tag="chat.send"):
    """One player turn (v1.md "chat.send")."""

    id: FrameId
    text: ChatText
    source: Literal["text", "voice"]
    image: ImageInput | None = None
    context: ChatContext | None = None


class ChatCancel(_Client, tag="chat.cancel"):
    """Stop the reply to the chat.send with this id (v1.md "chat.cancel")."""

    id: FrameId


class StatsGet(_Client, tag="stats.get"):
    """Ask for play statistics (v1.md "stats.get")."""

    id: FrameId | None = None


class MemoryGet(_Client, tag="memory.get"):
    """Show what the companion remembers for this save (v1.md "memory.get")."""

    id: FrameId | None = None


class MemoryForget(_Client, tag="memory.forget"):
    """Delete one event, this save's events, the shared profile, or everything."""

    target: Literal["event", "save", "profile", "all"]
    confirm: Literal[True]
    event_id: Annotated[int, Meta(ge=1, le=2**63 - 1)] | None = None
    id: FrameId | None = None


class ProfileUpdate(_Client, tag="profile.update"):
    """Correct one shared-profile field (v1.md "profile.update")."""

    field: ProfileField
    value: (
        Annotated[str, Meta(max_length=PROFILE_TEXT_MAX)]
        | Annotated[
            list[Annotated[str, Meta(max_length=PROFILE_ITEM_MAX)]],
            Meta(max_length=PROFILE_ITEMS_MAX),
        ]
        | bool
        | None
    )
    id: FrameId | None = None


ClientFrame = (
    Hello
    | Heartbeat
    | StateUpdate
    | ChatSend
    | ChatCancel
    | StatsGet
    | MemoryGet
    | MemoryForget
    | ProfileUpdate
)
CLIENT_FRAME_TYPES: tuple[type[_Client], ...] = (
    Hello,
    Heartbeat,
    StateUpdate,
    ChatSend,
    ChatCancel,
    StatsGet,
    MemoryGet,
    MemoryForget,
    ProfileUpdate,
)

# -- server frames ------------------------------------------------------------


class _Server(msgspec.Struct, tag_field="type", omit_defaults=True, rename="camel"):
    """Base of server frames."""


class ServerInfo(_Obj):
    name: str
    version: str


class ServerHello(_Server, tag="server.hello"):
    protocol: Literal["v1"]
    session_id: str
    heartbeat_ms: int
    limits: Limits
    server: ServerInfo
    id: FrameId | None = None


class Usage(_Obj):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None


class ChatDelta(_Server, tag="chat.delta"):
    id: str
    text: str


ContextUse = Literal["fresh", "stale", "dropped", "none"]


class ChatDone(_Server, tag="chat.done"):
    id: str
    text: str
    context: ContextUse
    usage: Usage | None = None
    image_sent: bool = False


class ChatError(_Server, tag="chat.error"):
    id: str
    code: str
    message: str


class Error(_Server, tag="error"):
    code: str
    message: str
    id: str | None = None
    fields: list[str] | None = None


class SaveStats(_Obj):
    game_id: str
    save_id: str
    days: int
    sessions: int
    active_ms: int
    last_played: str | None = None
    save_name: str | None = None


class GameStats(_Obj):
    game_id: str
    days: int
    sessions: int
    active_ms: int
    last_played: str | None = None


class StatsResult(_Server, tag="stats.result"):
    saves: list[SaveStats]
    games: list[GameStats]
    id: str | None = None


class MemoryItem(_Obj):
    id: int
    kind: str
    subject: str
    summary: str
    importance: int
    status: str
    pinned: bool
    updated_at: str
    day: int | None = None


class MemoryResult(_Server, tag="memory.result"):
    profile: dict[str, str | list[str] | bool | None]
    events: list[MemoryItem]
    id: str | None = None


ServerFrame = ServerHello | ChatDelta | ChatDone | ChatError | Error | StatsResult | MemoryResult
SERVER_FRAME_TYPES: tuple[type[_Server], ...] = (
    ServerHello,
    ChatDelta,
    ChatDone,
    ChatError,
    Error,
    StatsResult,
    MemoryResult,
)
