"""What the player sets in the browser: stored choices and the provider key.

The backend of the page's settings view. The key lives in the
:class:`~xtyserver.serve.key_store.KeyStore`; what leaves this module of it is
:func:`mask` (``sk-…7890`` at most). :class:`PlayerSettings` keeps the other
choices (:data:`EDITABLE`) in ``<data_dir>/settings.json`` (0600) and builds the
effective :class:`~xtyserver.config.Settings` afresh on each call: defaults,
then the stored choices and key, then the TOML file, the environment and flags,
which win. A running server takes a change with
:meth:`xtyserver.server.Server.apply_settings`, without a restart.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from xtyserver.config import Settings, load_settings, pinned_keys
from xtyserver.errors import UsageError
from xtyserver.files import private_dir, replace_private
from xtyserver.model.routing import origin
from xtyserver.serve.key_store import KeyStore, backend_name
from xtyserver.serve.provider_log import ProviderBook, ProviderChange
from xtyserver.session.speakup import PAGE_GAMES, page_keys

SETTINGS_FILE = "settings.json"
KEY_SETTING = "model.api_key"

# What the page may store, taken by a running server for its next turn
# (Server.apply_settings: extend the two together). The key goes through set_api_key.
EDITABLE: tuple[str, ...] = (
    "model.daily_token_budget",
    "memory.trash_hours",
    "model.base_url",
    "model.model",
    "model.vision",
    "model.extraction_model",
    "models.vision.base_url",
    "models.vision.model",
    "models.vision.vision",
    # Memory vectors (记忆向量): used from the next start, the embedder is built once.
    "memory.local_embedding",
    "memory.provider_embedding",
    "models.embedding.base_url",
    "models.embedding.model",
    # Speaking up (主动说话), per game: counts from the next game.event (Sessions.reconfigure).
    *page_keys(),
)


def mask(key: str | None) -> str:
    """How a key may be shown: its first 3 and last 4 characters at most (``sk-…7890``)."""
    if not key:
        return ""
    if len(key) < 12:
        return "…" + key[-2:] if len(key) > 4 else "…"
    return f"{key[:3]}…{key[-4:]}"


class NoProvider(UsageError):
    """A key was given before any provider (``model.base_url``) to bind it to."""


class KeyStatus(msgspec.Struct, frozen=True):
    """Where the effective key comes from, as the page may show it.

    Attributes:
        source: ``"env"`` (XTY_MODEL_API_KEY), ``"config"`` (the TOML file),
            ``"keyring"``, ``"file"`` (the owner-only fallback) or ``"none"``.
        shown: :func:`mask` of the effective key ("" without one).
        pinned: The environment or the TOML sets it: what the page stores is not used.
        warning: Set when the stored key lives in the fallback file.
        backend: The keyring backend's name (``"Windows Credential Manager"`` ...).
        origin: The provider (base URL origin) the stored key was saved for.
        applies: Whether the stored key goes to the chat provider now: False when
            ``model.base_url`` names another origin (that provider needs its own key).
        provider: The chat provider's origin now.
    """

    source: str
    shown: str
    pinned: bool
    warning: str | None = None
    backend: str = ""
    origin: str = ""
    applies: bool = True
    provider: str = ""


class SettingsView(msgspec.Struct, frozen=True, rename="camel"):
    """The page's settings view: each editable value, who pins it, and the key's status.

    Attributes:
        values: Effective value of every :data:`EDITABLE` key (dotted).
        stored: What the player stored (dotted keys), pinned or not.
        pinned: Dotted key -> ``"env"`` or ``"config"`` for keys the player cannot change here.
        key: The provider key's status (never the key).
        provider_changes: The last changes of a base URL's origin and of the key, newest last.
    """

    values: dict[str, Any]
    stored: dict[str, Any]
    pinned: dict[str, str]
    key: KeyStatus
    provider_changes: list[ProviderChange] = msgspec.field(default_factory=list)


class PlayerSettings:
    """The stored choices and key of one data folder, merged under TOML, environment, flags.

    The stored key is bound to the origin of ``model.base_url`` it was saved
    with (:mod:`xtyserver.serve.provider_log`) and left out for another origin.

    Args:
        config: The TOML file the server was started with, or None.
        env: The environment (``XTY_*``).
        overrides: The command line's dotted keys.
        keys: The key store; None: :class:`KeyStore` with this machine's keyring.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        config: Path | None = None,
        env: Mapping[str, str] = os.environ,
        overrides: Mapping[str, Any] | None = None,
        keys: KeyStore | None = None,
    ) -> None:
        self.data_dir = data_dir
        self.config = config
        self.env = dict(env)
        self.overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
        self.keys = keys if keys is not None else KeyStore(data_dir)
        self.file = data_dir / SETTINGS_FILE
        self.provider = ProviderBook(data_dir)

    def stored(self) -> dict[str, Any]:
        """The player's stored choices (dotted keys); {} when none or unreadable."""
        try:
            doc = json.loads(self.file.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}
        if not isinstance(doc, dict):
            return {}
        return {k: v for k, v in doc.items() if k in EDITABLE}

    def pinned(self) -> dict[str, str]:
        found = pinned_keys(self.config, self.env)
        found.update({k: "flag" for k in self.overrides})
        return found

    def effective(self) -> Settings:
        """The settings to run with now (read afresh: a change counts from the next call)."""
        return self._effective(self.stored())

    def _effective(self, stored: Mapping[str, Any]) -> Settings:
        settings = load_settings(
            self.config, env=self.env, overrides=self.overrides, stored=dict(stored)
        )
        # A key from the environment or the TOML wins: no credential store lookup then.
        pinned = self.pinned()
        if KEY_SETTING in pinned:
            given = settings.model.api_key
            if not given or "model.base_url" in pinned:
                return settings  # the page cannot send it elsewhere
            if self.provider.pinned_key_goes_to(given, origin(settings.model.base_url)):
                return settings
            model = msgspec.structs.replace(settings.model, api_key="")
            return msgspec.structs.replace(settings, model=model)
        key = self.keys.get()
        if not key or not self._key_goes_to(settings.model.base_url):
            return settings
        model = msgspec.structs.replace(settings.model, api_key=key)
        return msgspec.structs.replace(settings, model=model)

    def _key_goes_to(self, base_url: str) -> bool:
        """Whether the stored key is the key of ``base_url``'s provider."""
        bound, here = self.provider.key_origin(), origin(base_url)
        if bound is None and here:
            # Stored before keys had an origin: it belongs to the provider it was in use with.
            self.provider.bind_key(here, "key_adopted")
            bound = here
        return bool(here) and bound == here

    def _origins(self, settings: Settings) -> dict[str, str]:
        urls = {"model.base_url": settings.model.base_url}
        if settings.models.vision is not None:
            urls["models.vision.base_url"] = settings.models.vision.base_url
        return {k: origin(v) for k, v in urls.items() if v}

    def set(self, dotted: str, value: Any) -> SettingsView:
        """Store one choice (None removes it): :meth:`set_many` of one."""
        return self.set_many({dotted: value})

    def check(self, changes: Mapping[str, Any]) -> tuple[dict[str, Any], Settings]:
        """The stored choices after ``changes`` and the effective settings they give.

        Validated whole, as the TOML would be; nothing is written.

        Raises:
            UsageError: a key that is not editable or a bad value (``fields`` names the keys).
        """
        for dotted in changes:
            if dotted == KEY_SETTING:
                raise UsageError(
                    "the key is stored with set_api_key, never as a setting", fields=[dotted]
                )
            if dotted not in EDITABLE:
                raise UsageError(f"{dotted} cannot be set here", fields=[dotted])
        old = self.stored()
        choices = _changed(old, changes)
        try:
            load_settings(None, env={}, stored=choices)  # refuses a bad value, naming the key
        except UsageError as exc:
            raise UsageError(exc.message, fields=self._culprits(old, changes)) from None
        return choices, self._effective(choices)

    def _culprits(self, old: dict[str, Any], changes: Mapping[str, Any]) -> list[str]:
        """The keys of ``changes`` refused on their own (all of them when only together)."""
        bad = []
        for dotted, value in changes.items():
            try:
                load_settings(None, env={}, stored=_changed(old, {dotted: value}))
            except UsageError:
                bad.append(dotted)
        return bad or list(changes)

    def set_many(self, changes: Mapping[str, Any]) -> SettingsView:
        """Store several choices at once (None removes one), validated whole, atomically.

        Raises:
            UsageError: refused (see :meth:`check`); nothing was written.
            OSError: the file could not be written; the old one stays.
        """
        before = self._origins(self.effective())
        choices, after = self.check(changes)
        self.write(choices)
        self.provider.note_origins(before, self._origins(after))
        return self.view()

    def write(self, choices: Mapping[str, Any]) -> None:
        """Replace the stored choices whole (owner-only, atomically)."""
        private_dir(self.data_dir)
        data = json.dumps(dict(choices), ensure_ascii=False, indent=2).encode("utf-8")
        replace_private(self.file, data)

    def set_api_key(self, key: str) -> KeyStatus:
        """Store ``key`` as the key of the chat provider now (``model.base_url``'s origin).

        Raises:
            NoProvider: no provider is chosen yet.
            UsageError: the key is empty.
        """
        here = origin(self.effective().model.base_url)
        if not here:
            raise NoProvider(
                "choose the provider (model.base_url) before its key", fields=["model.base_url"]
            )
        self.keys.set(key)
        self.provider.bind_key(here)
        return self.key_status()

    def clear_api_key(self) -> KeyStatus:
        self.keys.delete()
        self.provider.unbind_key()
        return self.key_status()

    def key_status(self) -> KeyStatus:
        pinned = self.pinned().get(KEY_SETTING)
        where = self.keys.where()
        backend = backend_name(self.keys.backend) if where == "keyring" else ""
        effective = self.effective()
        here = origin(effective.model.base_url)
        if pinned is not None:
            given = load_settings(self.config, env=self.env, overrides=self.overrides).model.api_key
            return KeyStatus(
                source=pinned,
                shown=mask(given),
                pinned=True,
                backend=backend,
                applies=effective.model.api_key == given,
                provider=here,
            )
        bound = self.provider.key_origin() or "" if where != "none" else ""
        return KeyStatus(
            source=where,
            shown=mask(self.keys.get()),
            pinned=False,
            warning=self.keys.warning() if where == "file" else None,
            backend=backend,
            origin=bound,
            applies=where == "none" or bound == here,
            provider=here,
        )

    def view(self) -> SettingsView:
        effective = self.effective()
        settings = msgspec.to_builtins(effective)
        # A game without its own speak-up table follows [speakup.default]: shown as such.
        games = settings["speakup"]["games"]
        for game in PAGE_GAMES:
            games.setdefault(game, msgspec.to_builtins(effective.speakup.of(game)))
        values: dict[str, Any] = {}
        for dotted in EDITABLE:
            node: Any = settings
            for part in dotted.split("."):
                node = node.get(part) if isinstance(node, dict) else None
            values[dotted] = node
        pinned = {k: v for k, v in self.pinned().items() if k in EDITABLE}
        return SettingsView(
            values=values,
            stored=self.stored(),
            pinned=pinned,
            key=self.key_status(),
            provider_changes=self.provider.changes(),
        )


def _changed(old: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    choices = dict(old)
    for dotted, value in changes.items():
        if value is None:
            choices.pop(dotted, None)
        else:
            choices[dotted] = value
    return choices
