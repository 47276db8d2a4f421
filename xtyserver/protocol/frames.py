"""msgspec Structs for every protocol/v1 frame (v1.md "Frames").

Client frames form one tagged union on ``type`` (:data:`ClientFrame`), the
server's another (:data:`ServerFrame`); their pieces are in ``frame_base``, the
memory and pairing frames in ``memory_frames`` and ``pair_frames``.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Annotated, Literal, get_args

import msgspec
import msgspec.inspect as mi
from msgspec import Meta

from xtyserver.protocol.action_frames import (
    ActionList,
    ActionRequest,
    ActionResult,
    ActionsDeclare,
    ActionsDeclared,
)
from xtyserver.protocol.event_frames import GameEvent
from xtyserver.protocol.frame_base import (
    AdapterInfo,
    ChatText,
    ContextStr,
    Count,
    Distance,
    FrameId,
    GameDay,
    GameId,
    Gauge,
    ImageData,
    SaveId,
    SaveName,
    StatusList,
    Timezone,
    Token,
    frame_type,
)
from xtyserver.protocol.frame_base import ClientBase as _Client
from xtyserver.protocol.frame_base import Obj as _Obj
from xtyserver.protocol.frame_base import ServerBase as _Server
from xtyserver.protocol.limits import CONTEXT_ARRAY_MAX, CONTEXT_NEARBY_MAX, Limits
from xtyserver.protocol.memory_frames import (
    MemoryConfirm,
    MemoryConfirmRequest,
    MemoryForget,
    MemoryForgotten,
    MemoryGet,
    MemoryNotice,
    MemoryPin,
    MemoryPreview,
    MemoryResult,
    ProfileUpdate,
)
from xtyserver.protocol.pair_frames import (
    AdapterPair,
    PairDenied,
    PairExpired,
    PairGranted,
    PairPending,
)
from xtyserver.protocol.voice_frames import (
    VoiceAudio,
    VoiceCancel,
    VoiceError,
    VoiceSpeech,
    VoiceStart,
    VoiceStop,
    VoiceTranscript,
)

__all__ = [
    "ActionRequest",
    "ActionResult",
    "ActionsDeclare",
    "ActionsDeclared",
    "AdapterInfo",
    "AdapterPair",
    "GameEvent",
    "MemoryConfirm",
    "MemoryConfirmRequest",
    "MemoryForget",
    "MemoryForgotten",
    "MemoryNotice",
    "MemoryPreview",
    "MemoryResult",
    "PairDenied",
    "PairExpired",
    "PairGranted",
    "PairPending",
    "ProfileUpdate",
    "VoiceAudio",
    "VoiceCancel",
    "VoiceError",
    "VoiceSpeech",
    "VoiceStart",
    "VoiceStop",
    "VoiceTranscript",
    "frame_type",
]

# -- identity and hello -------------------------------------------------------


class Identity(_Obj):
    """Which game and save a connection speaks for (v1.md "Identity")."""

    game_id: GameId
    save_id: SaveId
    save_name: SaveName | None = None


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
    # The held item's name as the game shows it, in the player's language, beside its id
    # (``heldItem`` may be an internal id such as ``(O)128``).
    held_item_name: ContextStr | None = None


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
    # The player is typing to the companion (the chat box is open): it does not speak up.
    typing: bool | None = None


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


class Hello(_Client, tag="adapter.hello"):
    """First frame of every connection (v1.md "adapter.hello")."""

    protocol: Literal["v1"]
    adapter: AdapterInfo
    identity: Identity
    id: FrameId | None = None
    token: Token | None = None
    capabilities: Capabilities | None = None
    timezone: Timezone | None = None
    # What the companion may do in this game (v1.md "Actions"); actions.declare replaces it.
    actions: ActionList | None = None


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


ClientFrame = (
    Hello
    | Heartbeat
    | StateUpdate
    | ChatSend
    | ChatCancel
    | StatsGet
    | MemoryGet
    | MemoryForget
    | MemoryPin
    | ProfileUpdate
    | MemoryConfirm
    | ActionsDeclare
    | ActionResult
    | GameEvent
    | AdapterPair
    | VoiceStart
    | VoiceStop
    | VoiceCancel
    | VoiceAudio
)
CLIENT_FRAME_TYPES: tuple[type[_Client], ...] = get_args(ClientFrame)


@functools.cache
def client_frame_info() -> dict[type[_Client], mi.Type]:
    """Each client frame type's msgspec description, built once on first use, not at import."""
    return dict(zip(CLIENT_FRAME_TYPES, mi.multi_type_info(CLIENT_FRAME_TYPES), strict=True))


# -- server frames ------------------------------------------------------------


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


# Who started the turn a reply belongs to: the player's chat.send, or the companion
# speaking up about a game.event (omitted on the wire for the player: v1.md "chat.delta").
Origin = Literal["player", "companion"]


class ChatDelta(_Server, tag="chat.delta"):
    id: str
    text: str
    origin: Origin = "player"


ContextUse = Literal["fresh", "stale", "dropped", "none"]


class ChatDone(_Server, tag="chat.done"):
    id: str
    text: str
    context: ContextUse
    usage: Usage | None = None
    image_sent: bool = False
    truncated: bool = False
    incomplete: bool = False
    notice: str | None = None
    question: str | None = None
    confirm_id: str | None = None
    origin: Origin = "player"
    # A proactive line's reason and how to stop it, in the player's language (v1.md "chat.done").
    why: str | None = None


class ChatError(_Server, tag="chat.error"):
    id: str
    code: str
    message: str
    origin: Origin = "player"


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


class TokenStats(_Obj):
    date: str
    game_id: str
    save_id: str
    purpose: Literal["chat", "extraction", "summary"]
    calls: int
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class StatsResult(_Server, tag="stats.result"):
    saves: list[SaveStats]
    games: list[GameStats]
    id: str | None = None
    tokens: list[TokenStats] = msgspec.field(default_factory=list)


ServerFrame = (
    ServerHello
    | ChatDelta
    | ChatDone
    | ChatError
    | Error
    | StatsResult
    | MemoryResult
    | MemoryPreview
    | MemoryForgotten
    | MemoryConfirmRequest
    | PairPending
    | PairGranted
    | PairDenied
    | PairExpired
    | MemoryNotice
    | ActionsDeclared
    | ActionRequest
    | VoiceTranscript
    | VoiceError
    | VoiceSpeech
)
SERVER_FRAME_TYPES: tuple[type[_Server], ...] = get_args(ServerFrame)
