# -*- coding: utf-8 -*-
"""Validates a held-out set: structure, expected keys, counts and the 'no shared content
word' rule (CJK bigram + English token overlap heuristic).

usage: python3 validate_heldout.py [file.json] [--strict]
  default file: heldout_players_words.json beside this script.
  heldout_paraphrase.json is always checked strictly: an overlap is an error, and it also
  checks style/aspect, that en questions have no CJK, and that question and memory language match.
"""
import collections
import json
import re
import sys

import os

HERE = os.path.dirname(os.path.abspath(__file__))
ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
PATH = ARGS[0] if ARGS else os.path.join(HERE, "heldout_players_words.json")
PARAPHRASE = os.path.basename(PATH).startswith("heldout_paraphrase")
STRICT = "--strict" in sys.argv or PARAPHRASE
ASPECTS = {"synonym", "other-name", "describe", "consequence", "cause", "plan", "smalltalk"}
data = json.load(open(PATH, encoding="utf-8"))

EN_STOP = set("""a an the i i'd i'm me my mine we our you your he she it its they them their this that
those these there here is are was were be been am do did does done have has had of to in on at by for
from with and or but not no yes so if then than what what's what'd where where'd when who whom which why
how ever yet again one ok alright any some get got up out off over about into did'nt lol thing stuff""".split())
ZH_STOP = {"玩家", "什么", "时候", "一个", "这个", "那个", "我们", "已经", "没有", "是不", "不是"}


def cjk_bigrams(s):
    out = set()
    for run in re.findall(r"[\u4e00-\u9fff]+", s):
        for i in range(len(run) - 1):
            out.add(run[i:i + 2])
    return out - ZH_STOP


def stem(w):
    for suf in ("ing", "ed", "es", "s"):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            return w[: -len(suf)]
    return w


def en_tokens(s):
    return {stem(w) for w in re.findall(r"[a-z0-9']+", s.lower())
            if w not in EN_STOP and not w.isdigit() and len(w) > 1}


errors, warnings = [], []
ids = set()
for c in data:
    cid = c["id"]
    if cid in ids:
        errors.append("dup id " + cid)
    ids.add(cid)
    for f in ("gameId", "saveId", "memories", "otherSaveMemories", "question", "expected", "style", "lang"):
        if f not in c:
            errors.append("%s missing %s" % (cid, f))
    keys = [m["key"] for m in c["memories"]]
    if len(set(keys)) != len(keys):
        errors.append(cid + " dup memory keys")
    for k in c["expected"]:
        if k not in keys:
            errors.append("%s expected key %s missing" % (cid, k))
    if not 6 <= len(c["memories"]) <= 10:
        errors.append("%s has %d memories" % (cid, len(c["memories"])))
    if not 1 <= len(c["otherSaveMemories"]) <= 3:
        errors.append("%s has %d otherSaveMemories" % (cid, len(c["otherSaveMemories"])))
    for o in c["otherSaveMemories"]:
        if o["saveId"] == c["saveId"]:
            errors.append(cid + " leak bait uses same saveId")
    if c["style"] != "smalltalk" and not c["expected"]:
        errors.append(cid + " non-smalltalk case without expected")
    for m in c["memories"]:
        if m["day"] > c.get("currentDay", 10 ** 9):
            errors.append("%s memory %s after currentDay" % (cid, m["key"]))
    q = c["question"]
    for k in c["expected"]:
        t = next(m["text"] for m in c["memories"] if m["key"] == k)
        zb = cjk_bigrams(q) & cjk_bigrams(t)
        et = en_tokens(q) & en_tokens(t)
        if zb or et:
            (errors if STRICT else warnings).append(
                "%s overlap with %s: %s %s" % (cid, k, sorted(zb), sorted(et)))
    if PARAPHRASE:
        if c["style"] not in ("paraphrase", "smalltalk"):
            errors.append("%s style %s" % (cid, c["style"]))
        if c.get("aspect") not in ASPECTS:
            errors.append("%s bad aspect %s" % (cid, c.get("aspect")))
        if (c["style"] == "smalltalk") != (c.get("aspect") == "smalltalk"):
            errors.append(cid + " smalltalk style/aspect mismatch")
        if len(c["otherSaveMemories"]) != 1:
            errors.append(cid + " expects exactly one leak bait")
        q_cjk = re.search(r"[\u4e00-\u9fff]", q) is not None
        if q_cjk != (c["lang"] == "zh"):
            errors.append(cid + " question script does not match lang")
        for k in c["expected"]:
            m = next(m for m in c["memories"] if m["key"] == k)
            if (re.search(r"[\u4e00-\u9fff]", m["text"]) is not None) != q_cjk:
                errors.append(cid + " question and target memory in different languages")
            if (m["kind"] == "goal") != (c.get("aspect") == "plan"):
                errors.append(cid + " goal target iff aspect plan")

print("file:", PATH)
print("cases:", len(data))
if PARAPHRASE:
    print("per aspect:", dict(sorted(collections.Counter(c.get("aspect") for c in data).items())))
    print("per game/lang:", dict(sorted(collections.Counter((c["gameId"], c["lang"]) for c in data).items())))
    print("per game/aspect:")
    for g in sorted({c["gameId"] for c in data}):
        print("  ", g, dict(sorted(collections.Counter(c.get("aspect") for c in data if c["gameId"] == g).items())))
    print("leak bait word-for-word equal to a target:", sum(1 for c in data if any(
        o["text"] == m["text"] for o in c["otherSaveMemories"] for m in c["memories"] if m["key"] in c["expected"])))
print("per game:", dict(collections.Counter(c["gameId"] for c in data)))
print("per style:", dict(sorted(collections.Counter(c["style"] for c in data).items())))
print("per lang:", dict(collections.Counter(c["lang"] for c in data)))
nonst = [c for c in data if c["style"] != "smalltalk"]
print("non-smalltalk per game/lang:",
      dict(sorted(collections.Counter((c["gameId"], c["lang"]) for c in nonst).items())))
print("multi-target cases:", [c["id"] for c in data if len(c["expected"]) > 1])
print("memories per case: min %d max %d" % (min(len(c["memories"]) for c in data),
                                             max(len(c["memories"]) for c in data)))
for w in warnings:
    print("WARN", w)
for e in errors:
    print("ERROR", e)
print("OK" if not errors else "%d errors" % len(errors))
sys.exit(1 if errors else 0)
