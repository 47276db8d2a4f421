"""Check heldout_round5.json: format, dates, the no-shared-word rule, counts.

Exit status 1 on any error.
"""

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
# Function bigrams a question may share (the stoplist of the earlier sets, plus a few more).
ZH_STOP = {
    "那个",
    "一个",
    "什么",
    "时候",
    "玩家",
    "这个",
    "我们",
    "你们",
    "他们",
    "是不",
    "不是",
    "没有",
    "有没",
    "的时",
    "一下",
    "怎么",
    "为什",
    "了吗",
    "是什",
    "了一",
    "了几",
    "是那",
    "一次",
    "的是",
    "了个",
    "个人",
    "一只",
    "一台",
    "一块",
    "一条",
    "一头",
    "一把",
    "那次",
    "的那",
    "之前",
    "以前",
}
EN_STOP = {
    "a",
    "an",
    "the",
    "i",
    "me",
    "my",
    "mine",
    "we",
    "our",
    "you",
    "your",
    "he",
    "she",
    "it",
    "its",
    "they",
    "them",
    "their",
    "this",
    "that",
    "these",
    "those",
    "is",
    "am",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "do",
    "does",
    "did",
    "done",
    "have",
    "has",
    "had",
    "having",
    "of",
    "in",
    "on",
    "at",
    "to",
    "for",
    "from",
    "with",
    "by",
    "about",
    "into",
    "over",
    "after",
    "before",
    "up",
    "down",
    "out",
    "off",
    "and",
    "or",
    "but",
    "if",
    "so",
    "as",
    "than",
    "then",
    "there",
    "here",
    "what",
    "which",
    "who",
    "whom",
    "whose",
    "when",
    "where",
    "why",
    "how",
    "any",
    "all",
    "some",
    "no",
    "not",
    "yet",
    "just",
    "ever",
    "already",
    "still",
    "again",
    "also",
    "too",
    "very",
    "much",
    "many",
    "one",
    "ones",
    "player",
    "didn't",
    "don't",
    "can",
    "could",
    "would",
    "should",
    "will",
    "shall",
    "may",
    "might",
    "s",
    "t",
}
# Traditional characters of the `traditional` questions, mapped to simplified, so that the rule
# is judged on the normal form of the text (a traditional question must not merely look different
# from its memory).
TRAD_PAIRS = [
    "個个 們们 麼么 時时 這这 為为 嗎吗 對对 還还 記记 給给 從从 過过 後后 裡里 聽听",
    "說说 話话 會会 買买 賣卖 來来 東东 樂乐 園园 頭头 隻只 雞鸡 殺杀 龍龙 電电 機机"
    "氣气 體体 號号 場场 區区 鳥鸟 蟲虫 葉叶 廠厂 覺觉 離离 開开 發发 現现 種种 間间",
    "隊队 員员 夢梦 藥药 歲岁 層层 礦矿 鐵铁 銅铜 邊边 齊齐 幫帮 蓋盖 縣县 轉转 換换"
    "蝦虾 見见 經经 屬属 橋桥 寶宝 圖图 書书 館馆 彈弹 撿捡 夠够 擊击 蠟蜡 燭烛 線线",
    "燈灯 鎖锁 窩窝 獸兽 網网 將将 軍军 夥伙 熱热 風风 暖暖 壞坏 戰战 鬥斗 麥麦 魚鱼"
    "釣钓 織织 復复 戲戏 禮礼 幾几 結结 樹树 鎮镇 處处 軌轨 車车 讓让 營营 鍋锅 頂顶",
    "擋挡 傷伤 賽赛 島岛 輕轻 傢家 顆颗",
]
TRAD = {pair[0]: pair[1] for line in TRAD_PAIRS for pair in line.split()}


def normal(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    return "".join(TRAD.get(c, c) for c in text)


def zh_bigrams(text: str) -> set[str]:
    grams: set[str] = set()
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
        f"{len(cases)} cases: {len(retrieval)} retrieval + {len(small)} small talk; "
        f"{copies} word-for-word baits"
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
        for style in [*sorted(STYLES[part]), "smalltalk"]:
            n = {k: v for k, v in rows.items() if k[0] == part and k[1] == style}
            g: Counter[str] = Counter()
            for (_, _, game, lang), v in n.items():
                g[game] += v
                g[lang] += v
            print(
                f"| {part} | {style} | {sum(n.values())} | {g['sv']} | {g['dst']} | {g['oni']} "
                f"| {g['zh']} | {g['en']} |"
            )
    print("errors:", len(errors))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
