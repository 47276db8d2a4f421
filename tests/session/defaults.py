"""The session's settings as the default configuration makes them (the only defaults)."""

from __future__ import annotations

from typing import Any

import msgspec

from xtyserver.config import Settings
from xtyserver.serve.runtime_settings import session_settings as derive_session
from xtyserver.serve.runtime_settings import working_settings as derive_working
from xtyserver.session.settings import SessionSettings
from xtyserver.session.working import WorkingSettings


def session_settings(**changes: Any) -> SessionSettings:
    """:func:`derive_session` of the default ``Settings``, with ``changes``."""
    settings = derive_session(Settings(), model_configured=True)
    return msgspec.structs.replace(settings, **changes)


def working_settings(**changes: Any) -> WorkingSettings:
    """:func:`derive_working` of the default ``Settings``, with ``changes``."""
    return msgspec.structs.replace(derive_working(Settings()), **changes)
