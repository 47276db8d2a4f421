"""``xtyserver memory view|forget|forget-name|correct|pin|set-auto-shared`` (docs/commands.md).

The command line's way into memory management, with the targets, field names
and JSON shapes of every other way in (:mod:`xtyserver.memory.manage`,
:mod:`xtyserver.session.replies`). ``forget`` needs no token: the person at the
terminal is who asked, within one command.
"""

from __future__ import annotations

import argparse
import secrets
import sys
from collections.abc import Callable
from typing import Any, cast

import msgspec

from xtyserver.cli import trash
from xtyserver.cli.console import console_json
from xtyserver.clock import SystemClock
from xtyserver.errors import UsageError
from xtyserver.memory.accounting import local_date
from xtyserver.memory.commands import Correct, Forget, ForgetName, Pin, Preview, Terminal, View
from xtyserver.memory.manage import (
    Confirmations,
    ForgetPreview,
    ForgetResult,
    ForgetSpec,
    Overview,
)
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.memory.types import EDITABLE_FIELDS, Scope, SharedProfile, profile_field
from xtyserver.serve.localzone import detect_local_timezone
from xtyserver.session import replies
from xtyserver.session.consent import admit

CORRECTABLE = tuple(f.wire for f in EDITABLE_FIELDS)
DAY = 86400.0


def add_commands(msub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add ``view``, ``forget``, ``correct``, ``pin`` and ``set-auto-shared`` to ``memory``."""
    view = msub.add_parser("view", help="the shared profile, saves (readable names) and items")
    common(view)
    view.add_argument("--game", help="only this game id")
    view.add_argument("--save", help="only this save id (with --game)")
    view.add_argument("--json", action="store_true")
    forget = msub.add_parser("forget", help="delete memory (asks first; statistics kept)")
    common(forget)
    forget.add_argument("target", choices=["item", "save", "game", "profile", "all"])
    forget.add_argument("--game", help="game id (item, save, game)")
    forget.add_argument("--save", help="save id (item, save)")
    forget.add_argument("--item", type=int, help="item id (item)")
    forget.add_argument("--include-stats", action="store_true", help="also delete statistics")
    forget.add_argument("--yes", action="store_true", help="do not ask (for scripts)")
    forget.add_argument("--json", action="store_true")
    name = msub.add_parser("forget-name", help="delete one of the player's own names for a thing")
    common(name)
    name.add_argument("--game", required=True, help="game id")
    name.add_argument("--save", required=True, help="save id")
    name.add_argument("--name", type=int, required=True, help="name id (memory view lists them)")
    name.add_argument("--json", action="store_true")
    correct = msub.add_parser("correct", help="replace one shared-profile field whole")
    common(correct)
    correct.add_argument("field", choices=CORRECTABLE)
    correct.add_argument("value", nargs="*", help="the new value (list fields: one per item)")
    correct.add_argument("--json", action="store_true")
    pin = msub.add_parser("pin", help='pin an item ("记住这个": never merged) or --unpin it')
    common(pin)
    pin.add_argument("--game", required=True, help="game id")
    pin.add_argument("--save", required=True, help="save id")
    pin.add_argument("--item", type=int, required=True, help="item id")
    pin.add_argument("--unpin", action="store_true")
    pin.add_argument("--json", action="store_true")
    trash.add_command(msub, common)
    auto = msub.add_parser("set-auto-shared", help="switch automatic shared memory on or off")
    common(auto)
    auto.add_argument("state", choices=["on", "off"])
    auto.add_argument("--json", action="store_true")


def run(store: MemoryStore, args: argparse.Namespace) -> int:
    """Run one of this module's ``memory`` subcommands; returns the exit code."""
    match args.memory_command:
        case "view":
            if args.save is not None and args.game is None:
                raise UsageError("--save needs --game")
            scope = Scope(args.game, args.save) if args.save is not None else None
            _print_overview(_overview(store, game_id=args.game, scope=scope), args.json)
        case "forget":
            return _forget(store, args)
        case "restore":
            return trash.run(store, args)
        case "correct":
            field = profile_field(args.field)
            assert field is not None  # argparse offered only the table's names
            value = _value(args.field, args.value)
            _print_profile(
                cast(SharedProfile, store.execute(Correct(field=field.name, value=value))),
                args.json,
            )
        case "set-auto-shared":
            auto = Correct(field="auto_shared", value=args.state == "on")
            _print_profile(cast(SharedProfile, store.execute(auto)), args.json)
        case "forget-name" | "pin":
            scope = Scope(args.game, args.save)
            if args.memory_command == "pin":
                what = f"item {args.item}"
                found = store.execute(Pin(scope=scope, event_id=args.item, pinned=not args.unpin))
            else:
                what = f"name {args.name}"
                found = store.execute(ForgetName(scope=scope, ids=(args.name,)))
            if not found:
                print(f"xtyserver: no {what} in {args.game} / {args.save}", file=sys.stderr)
                return 1
            _print_overview(_overview(store, scope=scope), args.json)
    return 0


def _overview(
    store: MemoryStore, *, game_id: str | None = None, scope: Scope | None = None
) -> Overview:
    since = SystemClock().now() - (replies.STATS_DAYS + 1) * DAY
    return cast(Overview, store.execute(View(game_id=game_id, scope=scope, since=since)))


def _value(field: str, values: list[str]) -> str | list[str]:
    known = profile_field(field)
    if known is not None and known.is_list:
        return values
    if len(values) > 1:
        raise UsageError(f"{field} takes one value (quote it if it has spaces)")
    return values[0] if values else ""


def _print_profile(profile: SharedProfile, as_json: bool) -> None:
    if as_json:
        print(console_json({"profile": msgspec.to_builtins(profile)}))
        return
    print("共同记忆 (shared profile)")
    for name, value in msgspec.to_builtins(profile).items():
        shown = ", ".join(value) if isinstance(value, list) else value
        if isinstance(value, bool):
            shown = "on" if value else "off"
        print(f"  {name:<18} {shown}")


def _print_overview(overview: Overview, as_json: bool) -> None:
    if as_json:
        today = local_date(SystemClock().now(), detect_local_timezone() or "UTC")
        doc = msgspec.to_builtins(replies.memory_view(overview, today=today))
        print(console_json(doc))
        return
    _print_profile(overview.profile, False)
    for v in overview.saves:
        print(f"\n{v.scope.game_id} / {v.label}  ({v.scope.save_id})")
        print(f"  {'id':<6} {'kind':<12} {'status':<8} {'pinned':<6} subject: summary")
        for e in v.events:
            pin = "yes" if e.pinned else ""
            print(f"  {e.id:<6} {e.kind:<12} {e.status:<8} {pin:<6} {e.subject}: {e.summary}")
        if not v.events:
            print("  (no items)")
        if v.aliases:
            print(f"  {'id':<6} 你的叫法 (your names for things)")
        for a in v.aliases:
            print(f"  {a.id:<6} {a.alias} -> {a.means}")


def _forget(store: MemoryStore, args: argparse.Namespace) -> int:
    """Preview, then ask on a terminal; without one, only with ``--yes``."""
    spec = ForgetSpec(
        kind=args.target,
        game_id=args.game,
        save_id=args.save,
        item_id=args.item,
        include_stats=args.include_stats,
    )
    tokens = Confirmations(secrets.token_hex(8))
    preview = cast(ForgetPreview, store.execute(Preview(target=spec)))
    if not preview.found:
        print("xtyserver: no such item; nothing deleted", file=sys.stderr)
        return 1
    stats = (
        ", ".join(f"{s.game_id} / {preview.names.get(s, s.save_id)}" for s in preview.stats_saves)
        or "kept"
    )
    print(f"would delete {preview.item_count} items", file=sys.stderr)
    for v in preview.saves:
        for e in v.events:
            print(f"  {v.scope.game_id} / {v.label}: #{e.id} {e.subject}", file=sys.stderr)
    if preview.profile_fields:
        print(f"  shared profile: {', '.join(preview.profile_fields)}", file=sys.stderr)
    print(f"  play statistics: {stats}", file=sys.stderr)
    print("  game save files are never touched", file=sys.stderr)
    if not args.yes:
        if not sys.stdin.isatty():
            print("xtyserver: refusing to forget without a terminal; pass --yes", file=sys.stderr)
            return 2
        if input("delete? type yes: ").strip().lower() not in ("yes", "y"):
            print("nothing deleted", file=sys.stderr)
            return 1
    # The person at the terminal answered this preview alone (or gave --yes).
    now = store.now()
    answer = Terminal(token=tokens.issue(preview, now))
    admitted = admit(Forget(target=spec), answer, tokens, now)
    if isinstance(admitted, str):  # pragma: no cover - a fresh token for this very target
        print(f"xtyserver: {admitted}; nothing deleted", file=sys.stderr)
        return 1
    result = cast(ForgetResult, store.execute(admitted))
    if args.json:
        doc = msgspec.to_builtins(replies.memory_forgotten(result, spec.kind, None))
        print(console_json(doc, indent=None))
    else:
        print(f"deleted {result.items} items; statistics of {result.stats_saves} saves deleted")
        if result.trash_id is not None:
            print(f"in the trash as #{result.trash_id}: xtyserver memory restore {result.trash_id}")
    return 0
