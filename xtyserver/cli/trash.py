"""``xtyserver memory restore [ID]``: the trash of forgotten memory.

Without an id it lists what the trash holds (each entry by readable save name,
and how long it stays restorable); with one it puts that entry back. Human
text by default, ``--json`` for scripts. Nothing here asks the model anything.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any, cast

import msgspec

from xtyserver.memory.commands import Restore
from xtyserver.memory.manage import RestoreResult, SaveView
from xtyserver.memory.sqlite.store import MemoryStore


def add_command(msub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add ``restore`` to ``memory``."""
    restore = msub.add_parser("restore", help="list the trash, or restore entry ID from it")
    common(restore)
    restore.add_argument("trash_id", nargs="?", type=int, help="the trash entry to restore")
    restore.add_argument("--json", action="store_true")


def _save(view: SaveView) -> dict[str, Any]:
    return {
        "gameId": view.scope.game_id,
        "saveId": view.scope.save_id,
        "saveName": view.name,
        "items": [msgspec.to_builtins(e) for e in view.events],
    }


def run(store: MemoryStore, args: argparse.Namespace) -> int:
    """Without an id, list what the trash holds; with one, put it back."""
    if args.trash_id is None:
        found = store.trash_entries()
        if args.json:
            doc = [
                {
                    "trashId": e.id,
                    "target": e.spec.kind,
                    "trashedAt": e.trashed_at,
                    "expiresAt": e.expires_at,
                    "profileFields": list(e.profile_fields),
                    "saves": [_save(v) for v in e.saves],
                }
                for e in found
            ]
            print(json.dumps({"trash": doc}, ensure_ascii=False, indent=2))
            return 0
        if not found:
            print("the trash is empty")
        for e in found:
            hours = max(0.0, (e.expires_at - store.now()) / 3600)
            print(f"#{e.id}  {e.spec.kind}  {e.item_count} items  (restorable for {hours:.1f} h)")
            for v in e.saves:
                for item in v.events:
                    print(f"    {v.scope.game_id} / {v.label}: {item.subject}")
            if e.profile_fields:
                print(f"    shared profile: {', '.join(e.profile_fields)}")
        return 0
    result = cast(RestoreResult, store.execute(Restore(trash_id=args.trash_id)))
    if args.json:
        restored = {
            "trashId": result.trash_id,
            "items": result.items,
            "profileFields": list(result.profile_fields),
        }
        print(json.dumps(restored))
    else:
        fields = (
            f"; shared profile: {', '.join(result.profile_fields)}" if result.profile_fields else ""
        )
        print(f"restored {result.items} items from #{result.trash_id}{fields}")
    return 0
