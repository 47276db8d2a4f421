"""Build heldout_round5.json from the hand-written round5_cases.py and round5_pools.py.

Deterministic: every draw is seeded by the case id, so a rebuild gives the same file byte for
byte. Memory texts are written without their date; the date prefix is added here from the memory's
day, in the conventions of the earlier held-out sets (README_round4.md).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from round5_cases import CASES  # noqa: E402
from round5_pools import POOLS  # noqa: E402

OUT = HERE / "heldout_round5.json"
GAME_IDS = {"sv": "stardew-valley", "dst": "dont-starve-together", "oni": "oxygen-not-included"}
SEASONS_ZH = ("春季", "夏季", "秋季", "冬季")
SEASONS_EN = ("Spring", "Summer", "Fall", "Winter")
YEARS_ZH = ("", "第二年", "第三年", "第四年")
MIN_MEMORIES = 6
MAX_MEMORIES = 8
# Every third retrieval case gets a word-for-word copy of its target as leak bait (as in round 4).
COPY_EVERY = 3


def date_prefix(game: str, lang: str, day: int) -> str:
    """The date a memory text starts with, as in the earlier sets."""
    if game == "sv":
        year, rest = divmod(day - 1, 112)
        season, dom = divmod(rest, 28)
        if lang == "zh":
            return f"{YEARS_ZH[year]}{SEASONS_ZH[season]}第{dom + 1}天，"
        lead = f"Year {year + 1} " if year else ""
        return f"{lead}{SEASONS_EN[season]} {dom + 1}: "
    if game == "dst":
        return f"第{day}天，" if lang == "zh" else f"Day {day}: "
    return f"第{day}周期，" if lang == "zh" else f"Cycle {day}: "


def mem_text(game: str, lang: str, day: int, body: str) -> str:
    if lang == "en":
        body = body[0].upper() + body[1:]
        if not body.endswith((".", "!", "?")):
            body += "."
    elif not body.endswith(("。", "！", "？")):
        body += "。"
    return date_prefix(game, lang, day) + body


def shifted_day(day: int, now: int) -> int:
    """Another day for a near-copy leak bait: three days earlier, or later when too early."""
    return day - 3 if day > 3 else min(day + 3, max(now, day + 1))


def build_case(case: dict[str, Any], retrieval_index: int) -> dict[str, Any]:
    cid = case["id"]
    game = cid.split("-")[1]
    lang = case.get("memLang", case["lang"])
    rng = random.Random(cid)
    now = case["now"]
    tags = set(case["tags"])
    hand: list[tuple[int, str, str]] = [(d, t, "target") for d, t in case["targets"]]
    if case.get("decoy"):
        d, t = case["decoy"]
        hand.append((d, t, "decoy"))
    size = rng.randint(MIN_MEMORIES, MAX_MEMORIES)
    pool = [p for p in POOLS[(game, lang)] if p[0] <= now and not (set(p[1]) & tags)]
    need = size - len(hand)
    if len(pool) < need:
        raise SystemExit(f"{cid}: pool has {len(pool)} items for {need} places")
    drawn = rng.sample(pool, need)
    rows = hand + [(d, t, "pool") for d, t, _ in [(p[0], p[2], p[1]) for p in drawn]]
    rows.sort(key=lambda r: (r[0], r[1]))
    memories = []
    expected = []
    for n, (day, body, role) in enumerate(rows, start=1):
        key = f"{cid}-m{n}"
        memories.append(
            {"key": key, "text": mem_text(game, lang, day, body), "day": day, "kind": "event"}
        )
        if role == "target":
            expected.append(key)
    if case["targets"]:
        d0, t0 = case["targets"][0]
        bait_day = d0 if retrieval_index % COPY_EVERY == 0 else shifted_day(d0, now)
        bait = mem_text(game, lang, bait_day, t0)
    else:
        d0, _, t0 = rng.choice(POOLS[(game, lang)])
        bait = mem_text(game, lang, d0, t0)
    out: dict[str, Any] = {
        "id": cid,
        "gameId": GAME_IDS[game],
        "saveId": "s1",
        "currentDay": now,
        "memories": memories,
        "otherSaveMemories": [{"saveId": "s2", "text": bait}],
        "question": case["q"],
        "expected": expected,
        "style": case["style"],
        "lang": case["lang"],
        "part": case["part"],
    }
    if "memLang" in case:
        out["memLang"] = case["memLang"]
    return out


def build() -> list[dict[str, Any]]:
    out = []
    retrieval_index = 0
    for case in CASES:
        out.append(build_case(case, retrieval_index))
        if case["targets"]:
            retrieval_index += 1
    return out


def main() -> None:
    cases = build()
    OUT.write_text(json.dumps(cases, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT.name}: {len(cases)} cases")


if __name__ == "__main__":
    main()
