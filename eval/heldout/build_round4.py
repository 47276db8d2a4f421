"""Build heldout_round4.json from the hand-written round4_cases.py and round4_pools.py.

HELD OUT: do not tune on this set. Deterministic: every random draw is seeded by the case id.
Usage: python3 build_round4.py [out.json]
"""

import json
import random
import sys
from pathlib import Path

from round4_cases import CASES, SMALLTALK
from round4_pools import POOLS

HERE = Path(__file__).resolve().parent
SEASONS_ZH = ["春季", "夏季", "秋季", "冬季"]
SEASONS_EN = ["Spring", "Summer", "Fall", "Winter"]
YEARS_ZH = ["", "第二年", "第三年"]


def date_prefix(game: str, lang: str, day: int) -> str:
    if game == "stardew-valley":
        year, rest = divmod(day - 1, 112)
        season, dom = divmod(rest, 28)
        if lang == "zh":
            return f"{YEARS_ZH[year]}{SEASONS_ZH[season]}第{dom + 1}天，"
        year_en = f"Year {year + 1} " if year else ""
        return f"{year_en}{SEASONS_EN[season]} {dom + 1}: "
    if game == "dont-starve-together":
        return f"第{day}天，" if lang == "zh" else f"Day {day}: "
    return f"第{day}周期，" if lang == "zh" else f"Cycle {day}: "


def memory_text(game: str, lang: str, day: int, text: str) -> str:
    if lang == "en":
        text = text[0].upper() + text[1:]
        if not text.endswith((".", "!", "?")):
            text += "."
    elif not text.endswith(("。", "！", "？")):
        text += "。"
    return date_prefix(game, lang, day) + text


def norm(item):
    day, text = item[0], item[1]
    kind = item[2] if len(item) > 2 else "event"
    return day, text, kind


def draw_pool(rng, game, lang, tags, now, exclude_texts, k):
    pool = [
        (d, t) for d, t, tg in POOLS[(game, lang)]
        if d <= now and not set(tg) & set(tags) and t not in exclude_texts
    ]
    if len(pool) < k:
        raise SystemExit(f"pool too small: {game}/{lang} tags={tags} now={now}: {len(pool)} < {k}")
    return rng.sample(pool, k)


def build_case(c, index):
    rng = random.Random("round4:" + c["id"])
    game, mem_lang, now = c["game"], c["mem"], c["now"]
    targets = [norm(t) for t in c["targets"]]
    decoys = [norm(d) for d in c["decoys"]]
    fixed = len(targets) + len(decoys)
    total = rng.choice([6, 7, 8])
    own = {t for _, t, _ in targets + decoys}
    extra = draw_pool(rng, game, mem_lang, c["tags"], now, own, total - fixed)
    items = [("t", d, t, k) for d, t, k in targets]
    items += [("d", d, t, k) for d, t, k in decoys]
    items += [("p", d, t, "event") for d, t in extra]
    rng.shuffle(items)
    memories, expected = [], []
    for n, (role, day, text, kind) in enumerate(items, 1):
        key = f"{c['id']}-m{n}"
        text = memory_text(game, mem_lang, day, text)
        memories.append({"key": key, "text": text, "day": day, "kind": kind})
        if role == "t":
            expected.append(key)
    # leak bait from another save of the same game: every third case a word-for-word copy of the
    # (first) target, otherwise the same event on another day
    day0, text0, _ = targets[0]
    if index % 3 == 0:
        leak = memory_text(game, mem_lang, day0, text0)
    else:
        other = day0 - 3 if day0 > 3 else day0 + 4
        leak = memory_text(game, mem_lang, other, text0)
    out = {
        "id": c["id"], "gameId": game, "saveId": "s1", "currentDay": now, "memories": memories,
        "otherSaveMemories": [{"saveId": "s2", "text": leak}], "question": c["q"],
        "expected": expected, "style": c["style"], "lang": c["lang"], "part": c["part"],
    }
    if mem_lang != c["lang"]:
        out["memLang"] = mem_lang
    return out


def build_smalltalk(s):
    cid, game, lang, part, now, q, tags = s
    rng = random.Random("round4:" + cid)
    total = rng.choice([6, 7, 8])
    picked = draw_pool(rng, game, lang, tags, now, set(), total + 1)
    memories = [
        {"key": f"{cid}-m{n}", "text": memory_text(game, lang, d, t), "day": d, "kind": "event"}
        for n, (d, t) in enumerate(picked[:total], 1)
    ]
    d, t = picked[total]
    return {
        "id": cid, "gameId": game, "saveId": "s1", "currentDay": now, "memories": memories,
        "otherSaveMemories": [{"saveId": "s2", "text": memory_text(game, lang, d, t)}],
        "question": q, "expected": [], "style": "smalltalk", "lang": lang, "part": part,
    }


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "heldout_round4.json"
    cases = [build_case(c, i) for i, c in enumerate(CASES)]
    cases += [build_smalltalk(s) for s in SMALLTALK]
    order = {"stardew-valley": 0, "dont-starve-together": 1, "oxygen-not-included": 2}
    cases.sort(key=lambda c: (order[c["gameId"]], c["id"]))
    out.write_text(json.dumps(cases, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(cases)} cases to {out}")


if __name__ == "__main__":
    main()
