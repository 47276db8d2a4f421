"""Check heldout_privacy5.json: format, family counts, secrets in texts, not the issue's spellings.

Usage: python3 validate_privacy5.py [file]. Exit status 1 on any error.
"""

from __future__ import annotations

import json
import sys
import unicodedata
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT = HERE / "heldout_privacy5.json"

FAMILIES = {
    "steam_id",
    "qq",
    "wechat",
    "phone",
    "email",
    "discord",
    "bank_card",
    "id_card",
    "windows_path",
    "unix_path",
    "user_name_in_log",
    "api_key",
    "real_name_address_health",
}
WHERE = {"chat", "saveName", "modelContext"}
GAMES = {"stardew-valley", "dont-starve-together", "oxygen-not-included"}
# Spellings issue 40 itself names: this set must try others.
ISSUE_SPELLINGS = ["企鹅号", "Q号", "V信", "vx：", "#qq.com", "(a)163", "[at]", "艾特", "圈a",
                   "//NAS/", "398172650431", "SNDST-A-1234567890"]  # fmt: skip
ZH = dict(zip("零一二三四五六七八九", "0123456789", strict=True))


def id_check_ok(raw: str) -> bool:
    s = unicodedata.normalize("NFKC", raw).upper()
    s = "".join(ZH.get(ch, ch) for ch in s if ch.isalnum())
    if len(s) != 18 or not s[:17].isdigit():
        return False
    weights = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]
    return "10X98765432"[sum(int(d) * w for d, w in zip(s, weights, strict=False)) % 11] == s[17]


def check(data: dict) -> list[str]:
    errs: list[str] = []
    ids: set[str] = set()
    texts: set[str] = set()
    for f in data["forbidden"]:
        fid = f.get("id")
        if set(f) != {"id", "family", "text", "where", "secret"}:
            errs.append(f"{fid}: fields {sorted(f)}")
            continue
        if fid in ids or f["text"] in texts:
            errs.append(f"{fid}: duplicate id or text")
        ids.add(fid)
        texts.add(f["text"])
        if f["family"] not in FAMILIES or f["where"] not in WHERE:
            errs.append(f"{fid}: family/where")
        if not f["secret"] or f["secret"] not in f["text"]:
            errs.append(f"{fid}: secret is not a substring of text")
        if f["family"] == "id_card" and not id_check_ok(f["secret"]):
            errs.append(f"{fid}: resident id check character wrong")
    for a in data["allowed"]:
        aid = a.get("id")
        if not {"id", "text", "game"} <= set(a) or set(a) - {"id", "text", "game", "where"}:
            errs.append(f"{aid}: fields {sorted(a)}")
            continue
        if aid in ids or a["text"] in texts:
            errs.append(f"{aid}: duplicate id or text")
        ids.add(aid)
        texts.add(a["text"])
        if a["game"] not in GAMES or a.get("where", "chat") not in WHERE:
            errs.append(f"{aid}: game/where")
    for t in texts:
        for s in ISSUE_SPELLINGS:
            if s.lower() in t.lower():
                errs.append(f"uses the issue's own spelling {s!r}: {t}")
    fams = Counter(f["family"] for f in data["forbidden"])
    errs += [f"family {fam}: only {fams[fam]}" for fam in FAMILIES if fams[fam] < 5]
    if len(data["forbidden"]) < 80 or len(data["allowed"]) < 70:
        errs.append("too few forbidden (>= 80) or allowed (>= 70)")
    return errs


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    data = json.loads(path.read_text(encoding="utf-8"))
    errs = check(data)
    for e in errs:
        print(e)
    print(f"{len(data['forbidden'])} forbidden, {len(data['allowed'])} allowed, {len(errs)} errors")
    print("family:", dict(Counter(f["family"] for f in data["forbidden"])))
    print("where:", dict(Counter(f["where"] for f in data["forbidden"])))
    print("allowed per game:", dict(Counter(a["game"] for a in data["allowed"])))
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
