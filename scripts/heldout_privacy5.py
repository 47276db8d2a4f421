"""Score the blind held-out privacy set (eval/heldout/heldout_privacy5.json) on the judge.

Reads the set only to score it (eval/heldout/README_privacy5.md: never tune on it). Each
forbidden item goes where the set says it arrives, through the functions the server calls
there: chat text through ``redact`` (the session's judge, as in a chat.send), a save name
through ``check_identity`` and a modelContext value through ``check_model_context`` (the
decoder's checks of a state.update). A chat item leaks when its ``secret``, or its normal
form (NFKC, case-folded, separators removed), is in the redacted text; a save name or
modelContext item leaks when it is not refused. An allowed item passes when chat text comes
out as typed (nothing redacted) and a modelContext value is kept.

    .venv/bin/python scripts/heldout_privacy5.py [--json] [--file PATH]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from xtyserver.errors import ForbiddenContentError  # noqa: E402
from xtyserver.protocol.budget import check_identity, check_model_context  # noqa: E402
from xtyserver.protocol.forbidden import redact  # noqa: E402
from xtyserver.protocol.frames import Identity, ModelContext, World  # noqa: E402
from xtyserver.protocol.normalize import visible  # noqa: E402

_SEPARATORS = re.compile(r"[\s\-_.,:;/\\·、，。：；|]+")


def _normal(text: str) -> str:
    return _SEPARATORS.sub("", unicodedata.normalize("NFKC", text).casefold())


def _refused(check: Any) -> bool:
    try:
        check()
    except ForbiddenContentError:
        return True
    return False


def _context(text: str) -> ModelContext:
    return ModelContext(world=World(location=text[:120]))


def forbidden_caught(item: dict[str, Any]) -> bool:
    text, secret, where = item["text"], item["secret"], item.get("where", "chat")
    if where == "saveName":
        name = text[:64]
        return _refused(lambda: check_identity(Identity("stardew-valley", "s1", save_name=name)))
    if where == "modelContext":
        return _refused(lambda: check_model_context(_context(text)))
    redacted, _ = redact(text)
    return secret not in redacted and _normal(secret) not in _normal(redacted)


def allowed_passed(item: dict[str, Any]) -> bool:
    text, where = item["text"], item.get("where", "chat")
    if where == "modelContext":
        return not _refused(lambda: check_model_context(_context(text)))
    return redact(text) == (visible(text), [])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--file", type=Path, default=ROOT / "eval/heldout/heldout_privacy5.json")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    data = json.loads(args.file.read_text(encoding="utf-8"))
    caught: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for item in data["forbidden"]:
        total[item["family"]] += 1
        caught[item["family"]] += forbidden_caught(item)
    passed = sum(allowed_passed(item) for item in data["allowed"])
    result = {
        "forbidden_caught": sum(caught.values()),
        "forbidden": sum(total.values()),
        "allowed_passed": passed,
        "allowed": len(data["allowed"]),
        "per_family": {family: f"{caught[family]}/{total[family]}" for family in sorted(total)},
    }
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
    else:
        print(f"forbidden caught {result['forbidden_caught']}/{result['forbidden']}")
        print(f"allowed passed   {passed}/{len(data['allowed'])}")
        for family, score in result["per_family"].items():
            print(f"  {family:28} {score}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
