# -*- coding: utf-8 -*-
"""Validates a retrieval eval set (default: players_words_dev.json beside this file):
structure, expected keys, counts, and the 'no shared content word' rule between the
question and each expected memory (CJK bigram + English token overlap heuristic, the
same heuristic as eval/heldout/validate_heldout.py). Any overlap is an ERROR here.

Cases with an `aspect` field (paraphrase_dev.json) are checked further: the aspect is
known, a goal is the target iff the aspect is "plan", question and target memories are
in the same language, and at least one same-save decoy shares a surface word with the
question (so a word-matching retriever is tempted by a wrong memory).

usage: python3 validate_dev.py [path.json]
"""
import collections
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PATH = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "players_words_dev.json")
data = json.load(open(PATH, encoding="utf-8"))

EN_STOP = set("""a an the i i'd i'm me my mine we our you your he she it its they them their this that
those these there here is are was were be been am do did does done have has had of to in on at by for
from with and or but not no yes so if then than what what's what'd where where'd when who whom which why
how ever yet again one ok alright any some get got up out off over about into did'nt lol thing stuff""".split())
ZH_STOP = {"玩家", "什么", "时候", "一个", "这个", "那个", "我们", "已经", "没有", "是不", "不是"}
GAME_IDS = {"stardew-valley", "dont-starve-together", "oxygen-not-included"}
ASPECTS = {"describe", "other-name", "cause", "consequence", "synonym", "plan"}
FIELDS = ("id", "gameId", "saveId", "currentDay", "memories", "otherSaveMemories", "question",
          "expected", "style", "lang")


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


errors = []
ids = set()
for c in data:
    cid = c.get("id", "?")
    for f in FIELDS:
        if f not in c:
            errors.append("%s missing %s" % (cid, f))
    if cid in ids:
        errors.append("dup id " + cid)
    ids.add(cid)
    if c["gameId"] not in GAME_IDS:
        errors.append("%s bad gameId %s" % (cid, c["gameId"]))
    if c["saveId"] != "s1":
        errors.append(cid + " saveId is not s1")
    if c["lang"] not in ("zh", "en"):
        errors.append(cid + " bad lang")
    keys = [m["key"] for m in c["memories"]]
    if len(set(keys)) != len(keys):
        errors.append(cid + " dup memory keys")
    for m in c["memories"]:
        if m["kind"] not in ("event", "goal"):
            errors.append("%s memory %s bad kind" % (cid, m["key"]))
        if m["day"] > c["currentDay"]:
            errors.append("%s memory %s after currentDay" % (cid, m["key"]))
    if not 6 <= len(c["memories"]) <= 10:
        errors.append("%s has %d memories" % (cid, len(c["memories"])))
    if len(c["otherSaveMemories"]) != 1:
        errors.append("%s has %d otherSaveMemories" % (cid, len(c["otherSaveMemories"])))
    for o in c["otherSaveMemories"]:
        if o["saveId"] == c["saveId"]:
            errors.append(cid + " leak bait uses same saveId")
    for k in c["expected"]:
        if k not in keys:
            errors.append("%s expected key %s missing" % (cid, k))
    if c["style"] == "smalltalk":
        if c["expected"]:
            errors.append(cid + " smalltalk with expected")
    elif not c["expected"]:
        errors.append(cid + " non-smalltalk case without expected")
    exp_kinds = {m["kind"] for m in c["memories"] if m["key"] in c["expected"]}
    q = c["question"]
    if "aspect" in c:
        if c["aspect"] not in ASPECTS:
            errors.append("%s bad aspect %s" % (cid, c["aspect"]))
        if c["style"] != "paraphrase":
            errors.append(cid + " aspect case whose style is not paraphrase")
        if exp_kinds != ({"goal"} if c["aspect"] == "plan" else {"event"}):
            errors.append(cid + " goal target iff aspect plan")
        q_cjk = re.search(r"[\u4e00-\u9fff]", q) is not None
        for m in c["memories"]:
            if m["key"] in c["expected"] and (re.search(r"[\u4e00-\u9fff]", m["text"]) is not None) != q_cjk:
                errors.append("%s target %s not in the question's language" % (cid, m["key"]))
        lured = [m["key"] for m in c["memories"] if m["key"] not in c["expected"]
                 and (cjk_bigrams(q) & cjk_bigrams(m["text"]) or en_tokens(q) & en_tokens(m["text"]))]
        if not lured:
            errors.append(cid + " no same-save decoy shares a surface word with the question")
    else:
        if c["style"] == "next-step" and exp_kinds != {"goal"}:
            errors.append(cid + " next-step target is not a goal")
        if c["style"] != "next-step" and "goal" in exp_kinds:
            errors.append(cid + " goal target outside next-step")
    if c["lang"] == "en" and re.search(r"[\u4e00-\u9fff]", q):
        errors.append(cid + " lang en but question has CJK")
    for k in c["expected"]:
        t = next((m["text"] for m in c["memories"] if m["key"] == k), "")
        zb = cjk_bigrams(q) & cjk_bigrams(t)
        et = en_tokens(q) & en_tokens(t)
        if zb or et:
            errors.append("%s overlap with %s: %s %s" % (cid, k, sorted(zb), sorted(et)))

leak_same = sum(1 for c in data if c["expected"] and any(
    o["text"] == m["text"] for o in c["otherSaveMemories"] for m in c["memories"] if m["key"] in c["expected"]))
print("file:", PATH)
print("cases:", len(data))
print("per game:", dict(collections.Counter(c["gameId"] for c in data)))
print("per style:", dict(sorted(collections.Counter(c["style"] for c in data).items())))
print("per lang:", dict(collections.Counter(c["lang"] for c in data)))
print("per game/lang:", dict(sorted(collections.Counter((c["gameId"], c["lang"]) for c in data).items())))
print("per game/style:")
for g in sorted(GAME_IDS):
    print("  ", g, dict(sorted(collections.Counter(c["style"] for c in data if c["gameId"] == g).items())))
if any("aspect" in c for c in data):
    print("per aspect:", dict(sorted(collections.Counter(c.get("aspect") for c in data).items())))
    print("per game/aspect:")
    for g in sorted(GAME_IDS):
        print("  ", g, dict(sorted(collections.Counter(c.get("aspect") for c in data if c["gameId"] == g).items())))
    print("per aspect/lang:", dict(sorted(collections.Counter((c.get("aspect"), c["lang"]) for c in data).items())))
print("memories per case: min %d max %d, total %d" % (min(len(c["memories"]) for c in data),
      max(len(c["memories"]) for c in data), sum(len(c["memories"]) for c in data)))
print("leak bait word-for-word equal to a target:", leak_same)
for e in errors:
    print("ERROR", e)
print("OK" if not errors else "%d errors" % len(errors))
sys.exit(1 if errors else 0)
