"""Test and demo fixtures that run real parts, like ``trio.testing``.

:class:`FakeModelServer` is a scripted OpenAI-compatible model server on a real
loopback socket; the tests, ``xtyserver demo`` and ``xtyserver fake-model`` use it.
It is not part of the server's serving path.
"""

from xtyserver.testing.model_server import FakeModelServer, run_fake_model
from xtyserver.testing.script import (
    DEFAULT_MODEL,
    RecordedRequest,
    Reply,
    ToolCallScript,
    default_reply_text,
    message_text,
    split_chunks,
)

__all__ = [
    "DEFAULT_MODEL",
    "FakeModelServer",
    "RecordedRequest",
    "Reply",
    "ToolCallScript",
    "default_reply_text",
    "message_text",
    "run_fake_model",
    "split_chunks",
]
