"""Check heldout_harder_words.json: the format, the style rules and the no-shared-word rule.

Usage: python3 validate_harder_words.py [file]. Exit status 1 on any error.
The no-shared-word rule: a question shares no content word with an expected memory (Chinese: no
CJK character bigram outside a small stoplist of function bigrams; English: no non-stopword token,
lightly stemmed). Negation cases may share words with the negated memory; small talk must share
none with any memory.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT = HERE / "heldout_harder_words.json"

GAMES = {"stardew-valley", "dont-starve-together", "oxygen-not-included"}
STYLES = {
    "negation",
    "session_time",
    "long_chatty",
    "multi_hop",
    "voice_transcript",
    "code_switch",
    "dialect",
    "noisy_spelling",
    "emoji",
    "smalltalk",
}
MIN_PER_STYLE = {s: 10 for s in STYLES} | {"smalltalk": 20}

# Function bigrams that carry no topic.
ZH_STOP = {
    "玩家",
    "什么",
    "时候",
    "一个",
    "那个",
    "这个",
    "了一",
    "的是",
    "一下",
    "我们",
    "就是",
    "还是",
    "是不",
    "不是",
    "没有",
    "到了",
    "了吗",
    "是啥",
    "的那",
    "那些",
    "这些",
}
EN_STOP = set(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "into",
        "onto",
        "up",
        "down",
        "out",
        "off",
        "over",
        "under",
        "again",
        "about",
        "above",
        "after",
        "before",
        "below",
        "between",
        "through",
        "during",
        "while",
        "so",
        "than",
        "too",
        "very",
        "can",
        "could",
        "will",
        "would",
        "should",
        "shall",
        "may",
        "might",
        "must",
        "do",
        "does",
        "did",
        "done",
        "doing",
        "have",
        "has",
        "had",
        "having",
        "be",
        "is",
        "am",
        "are",
        "was",
        "were",
        "been",
        "being",
        "i",
        "me",
        "my",
        "mine",
        "we",
        "us",
        "our",
        "you",
        "your",
        "he",
        "him",
        "his",
        "she",
        "her",
        "it",
        "its",
        "they",
        "them",
        "their",
        "this",
        "that",
        "these",
        "those",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "no",
        "nor",
        "not",
        "only",
        "own",
        "same",
        "just",
        "now",
        "then",
        "there",
        "here",
        "get",
        "got",
        "one",
        "ones",
        "thing",
        "things",
        "like",
        "um",
        "uh",
        "yeah",
        "ok",
        "oh",
        "lol",
        "nah",
        "day",
        "cycle",
        "player",
        "s",
        "t",
        "d",
        "ll",
        "re",
        "ve",
        "m",
    ]
)
CJK = re.compile(r"[\u3400-\u9fff]+")
WORD = re.compile(r"[a-z0-9]+")
EMOJI = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff]")
PUNCT = re.compile(r"[，。！？、；：,.!?;:（）()“”\"'…—~～]")


def zh_bigrams(text: str) -> set[str]:
    out = set()
    for run in CJK.findall(text):
        out.update(run[i : i + 2] for i in range(len(run) - 1))
    return out - ZH_STOP


def stem(w: str) -> str:
    for suf in ("ing", "ies", "ed", "es", "s"):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            return w[: -len(suf)] + ("y" if suf == "ies" else "")
    return w


def en_words(text: str) -> set[str]:
    return {stem(w) for w in WORD.findall(text.lower()) if w not in EN_STOP and not w.isdigit()}


def shared(q: str, text: str) -> set[str]:
    return (zh_bigrams(q) & zh_bigrams(text)) | (en_words(q) & en_words(text))


def check(path: Path) -> list[str]:
    cases = json.loads(path.read_text(encoding="utf-8"))
    errs: list[str] = []
    seen_ids: set[str] = set()
    seen_keys: set[str] = set()
    styles: Counter[str] = Counter()
    need = {
        "id",
        "gameId",
        "saveId",
        "currentDay",
        "memories",
        "otherSaveMemories",
        "question",
        "expected",
        "style",
        "lang",
    }
    optional = {"negated", "bridge"}
    for c in cases:
        cid = c.get("id", "?")
        err = errs.append
        if set(c) - need - optional or need - set(c):
            err(f"{cid}: fields {sorted(set(c) ^ need)}")
            continue
        if cid in seen_ids:
            err(f"{cid}: duplicate id")
        seen_ids.add(cid)
        if c["gameId"] not in GAMES or c["saveId"] != "s1" or c["lang"] not in {"zh", "en"}:
            err(f"{cid}: gameId/saveId/lang")
        if c["style"] not in STYLES:
            err(f"{cid}: style {c['style']}")
        styles[c["style"]] += 1
        mems = c["memories"]
        if not 5 <= len(mems) <= 9:
            err(f"{cid}: {len(mems)} memories")
        keys = {}
        for m in mems:
            extra = set(m) - {"key", "text", "day", "kind", "session", "minutesBeforeEnd"}
            if extra or not {"key", "text", "day", "kind"} <= set(m):
                err(f"{cid}: memory fields {sorted(m)}")
            if m["key"] in seen_keys:
                err(f"{cid}: duplicate key {m['key']}")
            seen_keys.add(m["key"])
            keys[m["key"]] = m
            if m["kind"] not in {"event", "goal"} or not 1 <= m["day"] <= c["currentDay"]:
                err(f"{cid}: {m['key']} kind/day")
        leaks = c["otherSaveMemories"]
        if not leaks or any(o.get("saveId") != "s2" or not o.get("text") for o in leaks):
            err(f"{cid}: otherSaveMemories")
        for field in ("expected", "negated", "bridge"):
            if any(k not in keys for k in c.get(field, [])):
                err(f"{cid}: {field} names an unknown key")
        exp = c["expected"]
        q = c["question"]
        if c["style"] == "smalltalk":
            if exp:
                err(f"{cid}: small talk expects nothing")
            for m in mems:
                if s := shared(q, m["text"]):
                    err(f"{cid}: small talk shares {sorted(s)} with {m['key']}")
            continue
        if not exp:
            err(f"{cid}: nothing expected")
        for k in exp:
            if k in c.get("negated", []) or k in c.get("bridge", []):
                err(f"{cid}: {k} both expected and negated/bridge")
            if s := shared(q, keys[k]["text"]):
                err(f"{cid}: question shares {sorted(s)} with expected {k}")
        style = c["style"]
        if style == "negation" and not c.get("negated"):
            err(f"{cid}: negation without a negated memory")
        if style == "multi_hop" and not c.get("bridge"):
            err(f"{cid}: multi_hop without a bridge memory")
        if style == "long_chatty" and not 100 <= len(q) <= 330:
            err(f"{cid}: long_chatty question is {len(q)} characters")
        if style == "voice_transcript" and PUNCT.search(q):
            err(f"{cid}: voice transcript has punctuation")
        if style == "emoji" and not EMOJI.search(q):
            err(f"{cid}: emoji style without emoji")
        if style == "code_switch" and not (CJK.search(q) and re.search(r"[A-Za-z]{2,}", q)):
            err(f"{cid}: code_switch must mix Chinese and English")
        if style == "session_time":
            if any("session" not in m or "minutesBeforeEnd" not in m for m in mems):
                err(f"{cid}: session_time needs session and minutesBeforeEnd on every memory")
            else:
                last = max(m["session"] for m in mems)
                if any(keys[k]["session"] != last for k in exp):
                    err(f"{cid}: expected memory not in the last session")
    for style, n in MIN_PER_STYLE.items():
        if styles[style] < n:
            errs.append(f"style {style}: {styles[style]} < {n}")
    if len(cases) < 120:
        errs.append(f"only {len(cases)} cases")
    return errs


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    errs = check(path)
    for e in errs:
        print(e)
    cases = json.loads(path.read_text(encoding="utf-8"))
    print(f"{len(cases)} cases, {len(errs)} errors")
    print("style:", dict(Counter(c["style"] for c in cases)))
    print("game:", dict(Counter(c["gameId"] for c in cases)))
    print("lang:", dict(Counter(c["lang"] for c in cases)))
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
