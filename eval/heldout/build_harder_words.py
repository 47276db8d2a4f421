"""Build heldout_harder_words.json: held-out set 4, "the player's harder words".

HELD OUT: never tune on it. Every case below was written by hand, blind (no
retriever code, glossary, data or other eval set was read). Run with
`python3 build_harder_words.py`; check with `python3 validate_harder_words.py`.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from harder_words_cases import CASES
from harder_words_pools import POOLS

HERE = Path(__file__).resolve().parent
OUT = HERE / "heldout_harder_words.json"

GAMES = {
    "sv": "stardew-valley",
    "dst": "dont-starve-together",
    "oni": "oxygen-not-included",
}
# Real minutes one in-game day (cycle) takes: Stardew ~14, DST 8, ONI 10.
MINUTES_PER_DAY = {"sv": 14, "dst": 8, "oni": 10}
# In-game days one earlier play session covers (only for sessions before the hand-given ones).
SESSION_DAYS = {"sv": 5, "dst": 10, "oni": 12}
SEASONS_ZH = ["春季", "夏季", "秋季", "冬季"]
SEASONS_EN = ["Spring", "Summer", "Fall", "Winter"]


def date_prefix(short: str, lang: str, day: int) -> str:
    if short == "sv":
        year = (day - 1) // 112 + 1
        season = ((day - 1) % 112) // 28
        dd = (day - 1) % 28 + 1
        if lang == "zh":
            head = "第二年" if year == 2 else ""
            return f"{head}{SEASONS_ZH[season]}第{dd}天，"
        tail = ", year 2" if year == 2 else ""
        return f"{SEASONS_EN[season]} {dd}{tail}: "
    if short == "dst":
        return f"第{day}天，" if lang == "zh" else f"Day {day}: "
    return f"第{day}周期，" if lang == "zh" else f"Cycle {day}: "


def norm_mem(spec: tuple) -> dict:
    day, text = spec[0], spec[1]
    kind = spec[2] if len(spec) > 2 else "event"
    mins = spec[3] if len(spec) > 3 else None
    return {"day": day, "text": text, "kind": kind, "mins": mins}


def build_case(c: dict) -> dict:
    cid = c["id"]
    short = cid.split("-")[0]
    game = GAMES[short]
    lang = c["lang"]
    mem_lang = "en" if lang == "en" else "zh"
    rng = random.Random(cid)
    ends = c.get("sess")
    if ends:
        # Sessions before the hand-given ones: one every few in-game days from day 1.
        step = SESSION_DAYS[short]
        ends = list(range(step, ends[0] - step // 2, step)) + list(ends)
    horizon = ends[-1] if ends else c["cur"]

    hand: list[tuple[str, dict]] = []
    for role in ("t", "d", "neg", "br"):
        for spec in c.get(role, ()):
            hand.append((role, norm_mem(spec)))
    for _, m in hand:
        assert m["day"] <= horizon, (cid, m)

    banned = set(c.get("tags", ())) | set(c.get("x", ()))
    hand_texts = {m["text"] for _, m in hand}
    pool = [
        item
        for item in POOLS[(game, mem_lang)]
        if item[0] <= horizon and not banned & set(item[1]) and item[2] not in hand_texts
    ]
    if c["style"] == "smalltalk":
        want = rng.choice([6, 7, 8])
    else:
        want = min(9, max(len(hand) + 3, rng.choice([6, 7, 8])))
    n_pool = min(len(pool), want - len(hand))
    drawn = rng.sample(pool, n_pool)
    mems = hand + [("p", {"day": d, "text": t, "kind": "event", "mins": None}) for d, _, t in drawn]
    assert 5 <= len(mems) <= 9, (cid, len(mems))
    rng.shuffle(mems)

    out_mems = []
    roles: dict[str, list[str]] = {"t": [], "neg": [], "br": []}
    for i, (role, m) in enumerate(mems, 1):
        key = f"{cid}-m{i}"
        entry = {
            "key": key,
            "text": date_prefix(short, mem_lang, m["day"]) + m["text"],
            "day": m["day"],
            "kind": m["kind"],
        }
        if ends:
            session = next(k for k, end in enumerate(ends, 1) if m["day"] <= end)
            end = ends[session - 1]
            mins = m["mins"]
            if mins is None:
                mpd = MINUTES_PER_DAY[short]
                mins = max(15, (end - m["day"]) * mpd + rng.randint(15, 15 + mpd))
            entry["session"] = session
            entry["minutesBeforeEnd"] = mins
        out_mems.append(entry)
        if role in roles:
            roles[role].append(key)

    leak = c.get("leak")
    if leak is None:
        t0 = norm_mem(c["t"][0]) if c.get("t") else None
        if t0 is None:
            d, _, text = rng.choice(POOLS[(game, mem_lang)])
            leak = (d, text)
        elif rng.random() < 0.35:
            leak = (t0["day"], t0["text"])  # word for word: only the save tells them apart
        else:
            leak = (max(1, t0["day"] - 3), t0["text"])
    leak_text = date_prefix(short, mem_lang, leak[0]) + leak[1]

    case = {
        "id": cid,
        "gameId": game,
        "saveId": "s1",
        "currentDay": c["cur"],
        "memories": out_mems,
        "otherSaveMemories": [{"saveId": "s2", "text": leak_text}],
        "question": c["q"],
        "expected": roles["t"],
        "style": c["style"],
        "lang": lang,
    }
    if roles["neg"]:
        case["negated"] = roles["neg"]
    if roles["br"]:
        case["bridge"] = roles["br"]
    return case


def main() -> None:
    cases = [build_case(c) for c in CASES]
    ids = [c["id"] for c in cases]
    assert len(ids) == len(set(ids)), "duplicate ids"
    OUT.write_text(json.dumps(cases, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(cases)} cases to {OUT.name}")


if __name__ == "__main__":
    main()
