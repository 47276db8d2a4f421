"""What the first frames and turns need, made once the server listens.

Each of these is built on first use rather than at import (character sets
spanning most of the BMP, the look-alike tables, msgspec's descriptions of the
frames, the model's HTTP client library), so the listening line does not wait
for them; :func:`after_listening` makes them on a worker thread right after it,
so the first connection seldom does either.
"""

from __future__ import annotations

import anyio.to_thread

from xtyserver import log
from xtyserver.errors import UsageError
from xtyserver.memory.glossary import Glossary
from xtyserver.memory.tokenize import run_patterns
from xtyserver.protocol.forbidden import compile_patterns
from xtyserver.protocol.frames import client_frame_info
from xtyserver.protocol.judged import confusables
from xtyserver.protocol.normalize import inert_sets
from xtyserver.serve.glossary import GlossaryOnce


def after_listening(glossary: Glossary | GlossaryOnce, model_url: str) -> None:
    """What only frames and turns need, made on a worker thread once the server listens.

    The glossary's files may not open now (out of file descriptors under a flood
    of connections): then the first save index that needs it reads it. With a
    model configured, its HTTP client's library and TLS context are loaded too.
    Logs ``server.warmed`` when done (what a memory figure of the idle server waits for).
    """
    compile_patterns()
    inert_sets()
    client_frame_info()
    confusables()
    run_patterns()
    if isinstance(glossary, GlossaryOnce):
        try:
            glossary()
        except (OSError, UsageError) as exc:
            log.get("xtyserver.memory").warning("glossary.read_later", error=type(exc).__name__)
    if model_url:
        try:
            from xtyserver.model import request  # noqa: F401 - the first chat's
            from xtyserver.model.tls import context_for

            context_for(model_url)
        except (ImportError, OSError) as exc:  # out of descriptors: the first call loads it
            log.get("xtyserver.model").warning("model.load_later", error=type(exc).__name__)
    log.get("xtyserver").info("server.warmed")


async def warm(glossary: Glossary | GlossaryOnce, model_url: str) -> None:
    """:func:`after_listening` on a worker thread that a stop does not wait for.

    What it makes serves only turns to come, and a stop is bounded
    (``server.stop_timeout``): on a busy machine the thread may outlast it.
    """
    await anyio.to_thread.run_sync(after_listening, glossary, model_url, abandon_on_cancel=True)
