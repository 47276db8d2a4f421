"""Check heldout_round5.json: format, dates, the no-shared-word rule, counts. Exit status 1 on any error."""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from build_round5 import GAME_IDS, MAX_MEMORIES, MIN_MEMORIES, date_prefix  # noqa: E402

FILE = HERE / "heldout_round5.json"
PARTS = ("paraphrase", "players_words", "harder_words")
STYLES = {
    "paraphrase": {"yes_no", "which_first", "how_many", "where", "who"},
    "players_words": {
        "on_behalf",
        "recall_command",
        "self_correction",
        "northern_sichuan",
        "net_buzzwords",
    },
    "harder_words": {"traditional", "fullwidth", "opposite_assumed", "in_game_context", "hedged"},
}
# Function bigrams a question may share (the stoplist of the earlier sets, plus a few question-word bigrams).
ZH_STOP = set(
    "那个 一个 什么 时候 玩家 这个 我们 你们 他们 是不 不是 没有 有没 的时 一下 怎么 为什 了吗 是什 了一 了几 "
    "是那 一次 的是 了个 个人 一只 一台 一块 一条 一头 一把 那次 的那 之前 以前".split()
)
EN_STOP = set(
    """a an the i me my mine we our you your he she it its they them their this that these those is am are was
    were be been being do does did done have has had having of in on at to for from with by about into over
    after before up down out off and or but if so as than then there here what which who whom whose when where
    why how any all some no not yet just ever already still again also too very much many one ones player
    did didn't don't can could would should will shall may might s t""".split()
)
# Traditional characters used in the `traditional` questions, mapped to simplified, so that the rule is judged
# on the normal form of the text (a traditional question must not merely look different from its memory).
TRAD = dict(
    zip(
        "個們麼時這們為嗎對還記給們從過後裡聽說話會買賣來東樂園頭隻雞殺龍電機氣體號場區鳥蟲葉廠覺離開發現種間隊員夢藥歲層礦鐵銅",
        "个们么时这们为吗对还记给们从过后里听说话会买卖来东乐园头只鸡杀龙电机气体号场区鸟虫叶厂觉离开发现种间队员梦药岁层矿铁铜",
        strict=True,
    )
)
TRAD.update(
    dict(
        zip(
            "邊齊幫蓋縣嗎轉換蝦見經屬橋寶圖書館彈撿夠擊蠟燭線燈鎖窩獸網將軍夥熱風過暖壞戰鬥們麥魚釣織復戲",
            "边齐帮盖县吗转换虾见经属桥宝图书馆弹捡够击蜡烛线灯锁窝兽网将军伙热风过暖坏战斗们麦鱼钓织复戏",
            strict=True,
        )
    )
)


def normal(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    return "".join(TRAD.get(c, c) for c in text)


def zh_bigrams(text: str) -> set[str]:
    grams = set()
    for run in re.findall(r"[\u4e00-\u9fff]+", normal(text)):
        grams.update(run[i : i + 2] for i in range(len(run) - 1))
    return grams - ZH_STOP


def stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def en_tokens(text: str) -> set[str]:
    words = re.findall(r"[a-z][a-z']*", normal(text))
    return {stem(w.strip("'")) for w in words if w not in EN_STOP and len(w) > 1}


def shared(question: str, memory: str) -> set[str]:
    return (zh_bigrams(question) & zh_bigrams(memory)) | (en_tokens(question) & en_tokens(memory))


def check_case(c: dict[str, Any], errors: list[str]) -> None:
    cid = c.get("id", "?")

    def err(msg: str) -> None:
        errors.append(f"{cid}: {msg}")

    keys = {
        "id",
        "gameId",
        "saveId",
        "currentDay",
        "memories",
        "otherSaveMemories",
        "question",
        "expected",
    }
    keys |= {"style", "lang", "part"}
    missing = keys - set(c)
    if missing:
        err(f"missing {sorted(missing)}")
        return
    if not cid.startswith("r5-"):
        err("id must start with r5-")
    game = cid.split("-")[1]
    if GAME_IDS.get(game) != c["gameId"]:
        err("gameId does not match the id")
    if c["saveId"] != "s1":
        err("saveId must be s1")
    if c["part"] not in PARTS:
        err(f"bad part {c['part']}")
    small = c["style"] == "smalltalk"
    if not small and c["style"] not in STYLES.get(c["part"], set()):
        err(f"style {c['style']} not in part {c['part']}")
    if c["lang"] not in ("zh", "en"):
        err("bad lang")
    mem_lang = c.get("memLang", c["lang"])
    mems = c["memories"]
    if not MIN_MEMORIES <= len(mems) <= MAX_MEMORIES:
        err(f"{len(mems)} memories")
    by_key = {}
    for m in mems:
        if m.get("kind") != "event":
            err(f"{m.get('key')}: kind must be event")
        if m["day"] > c["currentDay"] or m["day"] < 1:
            err(f"{m['key']}: day {m['day']} outside 1..{c['currentDay']}")
        prefix = date_prefix(game, mem_lang, m["day"])
        if not m["text"].startswith(prefix):
            err(f"{m['key']}: text does not start with {prefix!r}")
        by_key[m["key"]] = m["text"]
    if len(by_key) != len(mems):
        err("duplicate keys")
    bait = c["otherSaveMemories"]
    if len(bait) != 1 or bait[0]["saveId"] != "s2":
        err("needs exactly one leak bait from s2")
    q = c["question"]
    if small:
        if c["expected"]:
            err("small talk must expect nothing")
        for key, text in by_key.items():
            words = shared(q, text)
            if words:
                err(f"small talk shares {sorted(words)} with {key}")
        return
    if not c["expected"]:
        err("retrieval case without expected memory")
    for key in c["expected"]:
        if key not in by_key:
            err(f"expected {key} missing")
            continue
        words = shared(q, by_key[key])
        if words:
            err(f"shares {sorted(words)} with {key}")


def main() -> int:
    cases = json.loads(FILE.read_text(encoding="utf-8"))
    errors: list[str] = []
    ids = Counter(c.get("id") for c in cases)
    errors += [f"{i}: duplicate id" for i, n in ids.items() if n > 1]
    all_keys = Counter(m["key"] for c in cases for m in c["memories"])
    errors += [f"{k}: duplicate key across the file" for k, n in all_keys.items() if n > 1]
    for c in cases:
        check_case(c, errors)
    for e in errors:
        print("ERROR", e)
    retrieval = [c for c in cases if c["expected"]]
    small = [c for c in cases if not c["expected"]]
    copies = sum(
        1
        for c in retrieval
        if c["otherSaveMemories"][0]["text"]
        in {m["text"] for m in c["memories"] if m["key"] in c["expected"]}
    )
    print(
        f"{len(cases)} cases: {len(retrieval)} retrieval + {len(small)} small talk; {copies} word-for-word baits"
    )
    print(
        "memories:", sum(len(c["memories"]) for c in cases), "same-save +", len(cases), "leak bait"
    )
    print("by game:", dict(Counter(c["gameId"] for c in cases)))
    print("by lang:", dict(Counter(c["lang"] for c in cases)))
    rows = Counter((c["part"], c["style"], c["id"].split("-")[1], c["lang"]) for c in cases)
    print("| part | style | total | stardew | dst | oni | zh | en |")
    print("|---|---|---|---|---|---|---|---|")
    for part in PARTS:
        for style in sorted(STYLES[part]) + ["smalltalk"]:
            n = {k: v for k, v in rows.items() if k[0] == part and k[1] == style}
            g = Counter()
            for (_, _, game, lang), v in n.items():
                g[game] += v
                g[lang] += v
            print(
                f"| {part} | {style} | {sum(n.values())} | {g['sv']} | {g['dst']} | {g['oni']} | {g['zh']} | {g['en']} |"
            )
    print("errors:", len(errors))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
