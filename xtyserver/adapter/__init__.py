"""An async client for adapter authors: protocol/v1 done right (docs/adapter-client.md).

A shell (websockets, anyio); the frame checks it runs before sending are the
server's own, in the pure :mod:`xtyserver.adapter.precheck`.
"""

from xtyserver.adapter.backoff import Backoff, should_reconnect
from xtyserver.adapter.client import AdapterClient
from xtyserver.adapter.precheck import Refused, precheck
from xtyserver.adapter.projection import context_bytes, project, topics
from xtyserver.adapter.reply import CONNECTION_LOST, ChatOutcome, ChatReply, CompanionLine
from xtyserver.adapter.saveid import derive_save_id, new_salt
from xtyserver.adapter.support import (
    ConnectionLost,
    captured_at,
    screenshot,
)
from xtyserver.protocol.frames import (
    AdapterInfo,
    Capabilities,
    ChatDone,
    ChatError,
    Error,
    Identity,
    MemoryResult,
    ModelContext,
    StatsResult,
)

__all__ = [
    "CONNECTION_LOST",
    "AdapterClient",
    "AdapterInfo",
    "Backoff",
    "Capabilities",
    "ChatDone",
    "ChatError",
    "ChatOutcome",
    "ChatReply",
    "CompanionLine",
    "ConnectionLost",
    "Error",
    "Identity",
    "MemoryResult",
    "ModelContext",
    "Refused",
    "StatsResult",
    "captured_at",
    "context_bytes",
    "derive_save_id",
    "new_salt",
    "precheck",
    "project",
    "screenshot",
    "should_reconnect",
    "topics",
]
