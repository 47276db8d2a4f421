# -*- coding: utf-8 -*-
"""Validates heldout_players_words.json: structure, expected keys, counts and the
'no shared content word' rule (CJK bigram + English token overlap heuristic)."""
import collections
import json
import re
import sys

PATH = "/work/evalwriter/heldout_players_words.json"
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
            warnings.append("%s overlap with %s: %s %s" % (cid, k, sorted(zb), sorted(et)))

print("cases:", len(data))
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
sys.exit(1 if errors else 0)
