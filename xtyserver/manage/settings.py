"""The page's settings view: the provider, its key, the models, the model check.

Steps over :class:`~xtyserver.serve.player_settings.PlayerSettings` (stored
choices under TOML, environment and flags, which win; the key in the OS
credential store or a 0600 file, never sent back: only ``sk-…7890``) and
:func:`~xtyserver.model.doctor.check_routing` ("测试连接"). A saved change is
handed to ``apply`` (the running server's ``apply_settings``), so it counts
from the next turn without a restart. What the player's companion is called,
its persona, the reply language and the automatic shared memory are fields of
the shared profile and go through the page's ``POST profile``.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import msgspec

from xtyserver.config import Settings
from xtyserver.errors import UsageError
from xtyserver.manage import embedding
from xtyserver.manage.ops import Refused
from xtyserver.model.doctor import DoctorReport, check_routing
from xtyserver.model.embedding import Embedder
from xtyserver.model.presets import KEY_PAGES, PRESETS
from xtyserver.model.routing import resolve, typed_base_url
from xtyserver.serve.player_settings import EDITABLE, NoProvider, PlayerSettings

DOCTOR_SECONDS = 15.0
"""Longest wait for one check of "测试连接" (the page waits for the whole table)."""


URL_KEYS = ("model.base_url", "models.vision.base_url", "models.embedding.base_url")
"""The settings a player types an address into (made whole by :func:`typed_urls`)."""

# What the page shows in the player's language (i18n.js ``refused``, by ``code``); these
# texts are for any other client of the page's API.
NEEDS_BASE_URL = (
    "请先填写「接口地址」（或选一个服务商），再保存 API 密钥；密钥只会发给这个地址。"
    " · Fill in 接口地址 (the provider's address) or choose a provider before saving its key."
)
BAD_BASE_URL = (
    "「接口地址」不是网址：请填服务商给的地址，例如 https://api.deepseek.com/v1；没有保存任何内容。"
    " · 接口地址 (the provider's address) is not a web address: enter the one your provider"
    " gives, e.g. https://api.deepseek.com/v1; nothing was saved."
)


def typed_urls(changes: dict[str, str | bool | int | float | None]) -> dict[str, Any]:
    """``changes`` with each typed address made whole (:func:`typed_base_url`).

    Raises:
        Refused: an address that names no provider (400, ``bad_base_url``, its key).
    """
    out: dict[str, Any] = dict(changes)
    for dotted in URL_KEYS:
        value = out.get(dotted)
        if not isinstance(value, str) or not value.strip():
            continue
        whole = typed_base_url(value)
        if not whole:
            raise Refused(BAD_BASE_URL, 400, [dotted], code="bad_base_url")
        out[dotted] = whole
    return out


class Preset(msgspec.Struct, frozen=True, rename="camel"):
    """One provider preset as the page fills the form from it."""

    name: str
    base_url: str
    model: str
    vision: bool
    key_page: str = ""


class KeyBody(msgspec.Struct, frozen=True, forbid_unknown_fields=True, rename="camel"):
    """``POST key``: store the provider key (None: forget the stored one)."""

    api_key: str | None


class SettingsBody(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``POST settings``: dotted keys of :data:`EDITABLE` to their new values (None: unset)."""

    changes: dict[str, str | bool | int | float | None]


def presets() -> list[Preset]:
    return [
        Preset(
            name=name,
            base_url=str(p.get("base_url", "")),
            model=str(p.get("model", "")),
            vision=bool(p.get("vision", False)),
            key_page=KEY_PAGES.get(name, ""),
        )
        for name, p in PRESETS.items()
    ]


class PageSettings:
    """The settings view's steps for one running server.

    Args:
        player: The data folder's stored choices and key.
        apply: Takes the new effective settings for the next turn (``Server.apply_settings``).
        env: Where routed models' keys are read (None: the process environment).
        configured: Whether the running server has a chat model now (its router's
            answer, not the stored file's: the page opens on 设置 without one).
        embedder: The running server's memory-vector embedder, or None.
    """

    def __init__(
        self,
        player: PlayerSettings,
        apply: Callable[[Settings], Awaitable[None]],
        env: Mapping[str, str] | None = None,
        configured: Callable[[], bool] = lambda: True,
        embedder: Callable[[], Embedder | None] = lambda: None,
    ) -> None:
        self.player = player
        self.apply = apply
        self.env = os.environ if env is None else env
        self.configured = configured
        self.embedder = embedder

    async def view(self) -> dict[str, Any]:
        """The effective values, what is pinned and by whom, the key's status, the presets.

        ``modelConfigured`` says whether the running server has a chat model now;
        without one the page opens on this view (the first run). ``embedding``: the
        memory-vector embedder in use and the one chosen (:mod:`xtyserver.manage.embedding`).
        """
        view, settings = await anyio.to_thread.run_sync(
            lambda: (self.player.view(), self.player.effective())
        )
        return {
            "editable": list(EDITABLE),
            "presets": presets(),
            "modelConfigured": self.configured(),
            "embedding": embedding.view(settings, self.embedder(), self.env),
            **msgspec.to_builtins(view),
        }

    async def change(self, body: SettingsBody) -> dict[str, Any]:
        """Store the changes and apply them: all of them, or none.

        Validated whole first (a pinned key: 409; a bad value: 400 naming the keys),
        then written once, atomically, then applied to the running server. A write
        that fails leaves the old file and the running server as they were (500);
        so does an apply that fails, which puts the old file back. ``embedding``
        (a choice) stands for the settings it stores (:func:`embedding.expand`).
        """
        changes = typed_urls(body.changes)
        if embedding.CHOICE in changes:
            settings = await anyio.to_thread.run_sync(self.player.effective)
            changes = embedding.expand(changes, settings)
        pinned = self.player.pinned()
        held = [dotted for dotted in changes if dotted in pinned]
        if held:
            by = ", ".join(f"{k} is set by {pinned[k]}" for k in held)
            raise Refused(f"{by} and wins there; nothing was saved", 409, held)

        def store() -> tuple[dict[str, Any], Settings]:
            before = self.player.stored()
            try:
                _, effective = self.player.check(changes)
            except UsageError as exc:
                message = f"{exc.message}; nothing was saved"
                raise Refused(message, 400, exc.fields, code="bad_value") from None
            try:
                self.player.set_many(changes)
            except OSError as exc:
                raise _not_written(exc) from None
            return before, effective

        before, effective = await anyio.to_thread.run_sync(store)
        try:
            await self.apply(effective)
        except Exception:
            await anyio.to_thread.run_sync(self.player.write, before)
            raise
        return await self.view()

    async def key(self, body: KeyBody) -> dict[str, Any]:
        """Store or forget the provider key; the answer shows it masked at most."""

        def store() -> None:
            try:
                if body.api_key is None or not body.api_key.strip():
                    self.player.clear_api_key()
                else:
                    self.player.set_api_key(body.api_key)
            except NoProvider:
                raise Refused(
                    NEEDS_BASE_URL, 400, ["model.base_url"], code="needs_base_url"
                ) from None
            except UsageError as exc:
                raise Refused(exc.message, 400, ["apiKey"]) from None
            except OSError as exc:
                raise _not_written(exc) from None

        await anyio.to_thread.run_sync(store)
        await self.apply(await anyio.to_thread.run_sync(self.player.effective))
        return await self.view()

    async def doctor(self) -> DoctorReport:
        """The model check of the effective settings (``xtyserver doctor``'s table)."""
        settings = await anyio.to_thread.run_sync(self.player.effective)
        routing = resolve(settings.model, settings.models, self.env)
        return await check_routing(routing, seconds=DOCTOR_SECONDS)


def _not_written(exc: OSError) -> Refused:
    """What the page says of a write that failed (the OS's reason, no path)."""
    reason = exc.strerror or type(exc).__name__
    return Refused(
        f"the settings could not be written ({reason}); nothing was changed", 500, os_error=reason
    )
