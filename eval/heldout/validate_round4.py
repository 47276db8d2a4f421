"""Check heldout_round4.json: format, counts, the no-shared-word rule. Exit status 1 on any error.

Usage: python3 validate_round4.py [file.json] [--quiet]
Written from the case-format description in README.md / README_harder_words.md only.
"""

import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
GAMES = {"stardew-valley", "dont-starve-together", "oxygen-not-included"}
PARTS = {"paraphrase", "players_words", "harder_words"}
CASE_KEYS = {
    "id", "gameId", "saveId", "currentDay", "memories", "otherSaveMemories", "question", "expected",
    "style", "lang", "part",
}
OPTIONAL_KEYS = {"memLang", "negated", "bridge"}

# function bigrams that may be shared (kept small on purpose)
CJK_STOP = {
    "那个", "一个", "什么", "时候", "玩家", "这个", "我们", "你们", "他们",
    "是不", "不是", "没有", "有没", "的时", "一下", "怎么", "为什", "了吗",
    "是什", "了一", "了几",
}
_EN_STOP_WORDS = """
a an the i me my mine we our you your he him his she her they them their it its this that these
those is am are was were be been being do does did done have has had of in on at to for from by
with and or but not no so if as than then there here what when where which who whom why how any
some all s t d ll re ve m player players again ever just like one about into out up down over off
too very can could would should will while
"""
EN_STOP = frozenset(_EN_STOP_WORDS.split())
CJK_RE = re.compile(r"[\u3400-\u9fff]+")


def cjk_bigrams(text: str) -> set:
    grams = set()
    for run in CJK_RE.findall(text):
        grams.update(run[i:i + 2] for i in range(len(run) - 1))
    return grams - CJK_STOP


def stem(tok: str) -> str:
    for suffix, min_len in (("ing", 6), ("ed", 5), ("es", 5), ("s", 4)):
        if tok.endswith(suffix) and len(tok) >= min_len and not tok.endswith("ss"):
            return tok[: -len(suffix)]
    return tok


def en_tokens(text: str) -> set:
    return {stem(t) for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in EN_STOP}


def shared(question: str, memory: str) -> set:
    return (cjk_bigrams(question) & cjk_bigrams(memory)) | (en_tokens(question) & en_tokens(memory))


def date_prefix(game: str, lang: str, day: int) -> str:
    if game == "stardew-valley":
        year, rest = divmod(day - 1, 112)
        season, dom = divmod(rest, 28)
        if lang == "zh":
            return f"{['', '第二年', '第三年'][year]}{'春夏秋冬'[season]}季第{dom + 1}天，"
        season_en = ["Spring", "Summer", "Fall", "Winter"][season]
        return f"{f'Year {year + 1} ' if year else ''}{season_en} {dom + 1}: "
    if game == "dont-starve-together":
        return f"第{day}天，" if lang == "zh" else f"Day {day}: "
    return f"第{day}周期，" if lang == "zh" else f"Cycle {day}: "


def check(cases) -> list:
    errors = []
    keys_seen = set()
    ids = Counter(c.get("id") for c in cases)
    errors += [f"duplicate case id {i}" for i, n in ids.items() if n > 1]
    questions = Counter(c.get("question") for c in cases)
    errors += [f"duplicate question {q!r}" for q, n in questions.items() if n > 1]
    for c in cases:
        cid = c.get("id")

        def err(msg, cid=cid):
            errors.append(f"{cid}: {msg}")

        missing = CASE_KEYS - c.keys()
        if missing:
            err(f"missing fields {sorted(missing)}")
            continue
        unknown = c.keys() - CASE_KEYS - OPTIONAL_KEYS
        if unknown:
            err(f"unknown fields {sorted(unknown)}")
        if c["gameId"] not in GAMES:
            err(f"bad gameId {c['gameId']}")
        if c["saveId"] != "s1":
            err("saveId must be s1")
        if c["part"] not in PARTS:
            err(f"bad part {c['part']}")
        if c["lang"] not in ("zh", "en"):
            err(f"bad lang {c['lang']}")
        mem_lang = c.get("memLang", c["lang"])
        mems = c["memories"]
        if not 6 <= len(mems) <= 8:
            err(f"{len(mems)} memories (want 6-8)")
        texts = [m["text"] for m in mems]
        if len(set(texts)) != len(texts):
            err("duplicate memory text")
        for m in mems:
            if set(m) != {"key", "text", "day", "kind"}:
                err(f"memory fields {sorted(m)}")
            if not re.fullmatch(re.escape(cid) + r"-m\d+", m["key"]):
                err(f"bad key {m['key']}")
            if m["key"] in keys_seen:
                err(f"key {m['key']} not unique")
            keys_seen.add(m["key"])
            if m["kind"] not in ("event", "goal"):
                err(f"bad kind {m['kind']}")
            if not 1 <= m["day"] <= c["currentDay"]:
                err(f"{m['key']} day {m['day']} outside 1..{c['currentDay']}")
            if not m["text"].startswith(date_prefix(c["gameId"], mem_lang, m["day"])):
                err(f"{m['key']} text does not start with its date: {m['text'][:20]}")
        other = c["otherSaveMemories"]
        if len(other) != 1 or other[0].get("saveId") != "s2" or not other[0].get("text"):
            err("want exactly one leak-bait memory from saveId s2")
        by_key = {m["key"]: m for m in mems}
        q = c["question"]
        if c["style"] == "smalltalk":
            if c["expected"]:
                err("smalltalk must have expected []")
            for m in mems:
                s = shared(q, m["text"])
                if s:
                    err(f"smalltalk shares {sorted(s)} with {m['key']}")
            continue
        if not c["expected"]:
            err("retrieval case with no expected key")
        for k in c["expected"]:
            if k not in by_key:
                err(f"expected key {k} not in memories")
                continue
            s = shared(q, by_key[k]["text"])
            if s:
                err(f"question shares {sorted(s)} with target {k}")
        for opt in ("negated", "bridge"):
            if opt in c and c[opt] not in by_key:
                err(f"{opt} key not in memories")
    return errors


def summary(cases) -> str:
    lines = [f"cases: {len(cases)}, same-save memories: {sum(len(c['memories']) for c in cases)}"]
    retrieval = [c for c in cases if c["style"] != "smalltalk"]
    copies = 0
    for c in retrieval:
        targets = {m["text"] for m in c["memories"] if m["key"] in c["expected"]}
        copies += c["otherSaveMemories"][0]["text"] in targets
    lines.append(f"retrieval: {len(retrieval)}, word-for-word leak copies: {copies}")
    lines.append(f"two-target cases: {sum(len(c['expected']) > 1 for c in cases)}")
    for field in ("part", "gameId", "lang"):
        lines.append(f"{field}: {dict(Counter(c[field] for c in cases))}")
        lines.append(f"{field} (retrieval): {dict(Counter(c[field] for c in retrieval))}")
    lines.append(f"style: {dict(Counter((c['part'], c['style']) for c in cases))}")
    part_lang = Counter((c["part"], c["style"] == "smalltalk", c["lang"]) for c in cases)
    lines.append(f"part x smalltalk x lang: {dict(part_lang)}")
    return "\n".join(lines)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    path = Path(args[0]) if args else HERE / "heldout_round4.json"
    cases = json.loads(path.read_text(encoding="utf-8"))
    errors = check(cases)
    for e in errors:
        print("ERROR", e)
    if "--quiet" not in sys.argv:
        print(summary(cases))
    print(f"{len(errors)} errors")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
