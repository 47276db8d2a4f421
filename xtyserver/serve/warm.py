"""What the first frames and turns need, made once the server listens.

Character sets, look-alike tables, msgspec's frame descriptions and the model's
HTTP client library are built on first use, so the listening line does not wait
for them; :func:`after_listening` makes them right after, so the first
connection seldom waits either.
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

    A glossary that cannot open now (out of file descriptors) is read by the
    first save index instead. Logs ``server.warmed`` when done.
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
    """:func:`after_listening` on a worker thread that a bounded stop does not wait for."""
    await anyio.to_thread.run_sync(after_listening, glossary, model_url, abandon_on_cancel=True)
