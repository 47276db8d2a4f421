"""Small talk recalls nothing, and a real question that looks like chatter still recalls
(issue 39 item 4; memory/smalltalk.py)."""

from __future__ import annotations

import pytest

from xtyserver.memory.retrieval import MemoryBudget, SaveIndex, select_memories
from xtyserver.memory.smalltalk import asks_memory
from xtyserver.memory.types import MemoryEvent, Scope
from xtyserver.serve.glossary import load_glossary

FARM = Scope("stardew-valley", "farm-a")
NOW = 1_790_000_000.0


def _event(i: int, summary: str, kind: str = "event") -> MemoryEvent:
    return MemoryEvent(
        id=i,
        game_id=FARM.game_id,
        save_id=FARM.save_id,
        kind=kind,  # type: ignore[arg-type]
        subject=summary[:12],
        summary=summary,
        importance=3,
        status="active",
        pinned=False,
        day=None,
        created_at=NOW,
        updated_at=NOW,
        last_used_at=NOW,
    )


@pytest.mark.parametrize(
    "text",
    [
        "卖了没",
        "那只狗呢",
        "我是不是答应过谁什么事",
        "我有没有让谁专门去种菜",
        "你还记得我第一次去的那个节日吗",  # said to the companion, about the past
        "我最拿手的那道菜是啥",
        "谁给我寄过菜谱来着",
        "地底下那台机器我鼓捣成功没有",
        "今天好累。对了，上次那个鸡舍盖好了吗？",  # the question after the chatter
        "did I ever finish what the wizard asked?",
        "how's my fishing going?",
        "and the horse?",
        "remember when the base flooded",
        "wo de xzgs shi na tian huan lai de",  # pinyin: 哪天
        "tell me about my cat",
        "那个 我那个 鸡 下蛋 没",  # voice style, no punctuation
        "小人们还饿不饿",  # A-not-A
        "I forgot what I planted last week",
    ],
)
def test_a_question_about_the_game_or_the_past_asks_memory(text: str) -> None:
    assert asks_memory(text)


@pytest.mark.parametrize(
    "text",
    [
        "今天好累，不想动",
        "你吃晚饭了吗？我今天吃的火锅",  # a question to the companion, then news
        "你觉得我是个好玩家吗",  # the companion's opinion
        "你叫什么名字来着",  # the companion, not the player's past
        "嗯 那个 今天 其实 也没干啥 就是 有点累",  # 啥 that asks nothing
        "真的假的",
        "嘿嘿，猜猜我在想啥",
        "yo what's up",
        "omg really?",
        "how are you today?",
        "ok so today was wild, what a day honestly",
        "这游戏的音乐真好听",
        "前几天感冒了，现在好多了",  # 几 that asks nothing
        "晚饭吃什么好呢",  # advice about the player's own day
        "明天要不要请假啊",
        "what should I eat for dinner",
        "any tips for a wedding speech?",
        "我是不是太菜了",  # what the companion thinks of the player
        "你会不会觉得我很菜",
        "你饿不饿",  # A-not-A, to the companion
        "guess what happened today",
        "can we just chat for a bit",
        "how's everything",
        "回家发现忘记带钥匙了，在门口等了半个小时😭",  # 忘 of the player's day
        "I forgot my keys today lol",
    ],
)
def test_chatter_and_questions_to_the_companion_ask_nothing_of_memory(text: str) -> None:
    assert not asks_memory(text)


def _index() -> SaveIndex:
    glossary = load_glossary(None).for_game(FARM.game_id)
    events = [
        _event(1, "打算秋天前把鸡舍升级成大鸡舍", kind="goal"),
        _event(2, "春季第20天，玩家的鸡舍里孵出了第一只小鸡"),
        _event(3, "春季第6天，下雨天玩家去河边钓到了一条鲶鱼"),
        _event(4, "夏季第10天，玩家学会了做辣椒炒肉，做了十份"),
    ]
    return SaveIndex(FARM, events, glossary=glossary)


def _chosen(
    index: SaveIndex, text: str, similar: list[tuple[int, float]], chat: float
) -> list[int]:
    return select_memories(
        None,
        index,
        query_text=text,
        current_day=30,  # 昨天 is a time cue
        now=NOW,
        similar=similar,
        chatter=chat,
        budget=MemoryBudget(),
    ).used_ids


def test_small_talk_whose_words_match_a_memory_carries_the_goals_alone() -> None:
    """「我饿了，想吃炸鸡」 shares 鸡 with the coop (a word and the glossary's chicken) and
    sits nearer everyday chatter than any memory: only the goal goes in."""
    index = _index()
    near = [(2, 0.86), (4, 0.85), (3, 0.84), (1, 0.80)]
    margin = MemoryBudget().small_talk_margin
    assert _chosen(index, "我饿了，想吃炸鸡", near, 0.86 + margin) == [1]
    assert _chosen(index, "下雨天就想窝在家里", near, 0.86 + margin) == [1]  # 下雨天
    # Not nearer the chatter: the words count as before.
    assert 2 in _chosen(index, "我饿了，想吃炸鸡", near, 0.86)


def test_small_talk_that_names_a_time_carries_the_goals_alone() -> None:
    """「昨天」 is a time cue; said of the player's own day, nearer chatter, it asks nothing."""
    index = _index()
    near = [(3, 0.85), (4, 0.84), (2, 0.83), (1, 0.80)]
    text = "昨天晚上加班到好晚，累死了"
    assert _chosen(index, text, near, 0.90) == [1]


def test_a_question_nearer_chatter_than_any_memory_still_recalls() -> None:
    """「我最拿手的那道菜是啥」 shares no word with 辣椒炒肉 and e5 puts it nearer the chatter
    (中午吃什么好呢) than the memory: it asks, so it is not small talk."""
    index = _index()
    near = [(4, 0.863), (2, 0.85), (3, 0.84), (1, 0.80)]
    assert 4 in _chosen(index, "我最拿手的那道菜是啥", near, 0.887)
    assert 4 in _chosen(index, "did I ever cook anything good?", near, 0.887)


def test_asking_what_to_do_asks_memory_when_it_names_the_game() -> None:
    assert not asks_memory("晚饭吃什么好呢")
    assert asks_memory("要不要把鸡舍升级", names_game=True)
    assert asks_memory("What should we do with the DirtyWater?", names_game=True)


def test_advice_that_names_the_game_recalls_and_a_word_in_every_memory_names_nothing() -> None:
    """「鸡舍要不要升级」 names the coop (two memories of four): it asks. "day", in every
    memory of an English save, names nothing: "should I play one more day?" is small talk."""
    index = _index()
    near = [(2, 0.86), (4, 0.85), (3, 0.84), (1, 0.80)]
    assert 2 in _chosen(index, "鸡舍要不要再扩建一下", near, 0.90)
    english = SaveIndex(
        FARM,
        [
            _event(1, "Day 3: the player cleared the stumps"),
            _event(2, "Day 8: the player reached floor 20 of the mines"),
            _event(3, "Day 12: the player bought a watering can"),
        ],
    )
    assert english.names_any(english.query_terms("day"), share=0.5) is False
    assert english.names_any(english.query_terms("the mines"), share=0.5) is True
    text = "should I go to bed now or play one more day?"
    assert _chosen(english, text, [(2, 0.80), (1, 0.79), (3, 0.78)], 0.86) == []


@pytest.mark.parametrize(
    "text",
    [
        "为什么周一总是这么难熬",
        "怎么又下雨了啊",
        "我咋这么倒霉",
        "这谁顶得住啊",
        "凭什么就我一个人加班",
        "外卖怎么还没到啊",
        "有没有搞错，又停电了",
        "这什么鬼天气",
        "why is my boss like this",
        "how is it already Monday",
        "how's it only tuesday",
        "ugh why am I so tired all the time",
        "is it just me or is this week dragging",
        "I got a new keyboard, how cool is that",
        "what the heck, my wifi died again",
        "什么时候才能放假啊",  # a wish: 什么时候 of what will come
        "我怎么这么菜啊",
        "when will this rain ever stop",
        "这日子什么时候是个头啊",
        "老天爷能不能别下雨了",
        "累死了，谁来救救我",
        "how am I supposed to finish all this homework",
        "are you kidding me",
        "can you believe it's already December",
    ],
)
def test_a_complaint_or_exclamation_about_real_life_asks_nothing(text: str) -> None:
    """A question's words that complain or exclaim (为什么…总是这么, 怎么又, 咋这么, 这谁顶得住,
    "why is … like this", "how is it already …") ask nothing of the game's past."""
    assert not asks_memory(text)


@pytest.mark.parametrize(
    "text",
    [
        "怎么又下雪了，冻死我了",  # 下雪 is also a winter memory's word
        "为什么每天都要开会",
        "why does it always rain when I want to go out",
        "why do meetings always run late",
    ],
)
def test_a_complaint_about_real_life_asks_nothing_even_sharing_a_memorys_word(text: str) -> None:
    """The week, work, the weather complained of now: not the game's past, even when a word
    of it (下雪, "rain", "meeting") is also a memory's."""
    assert not asks_memory(text, names_game=True)


@pytest.mark.parametrize(
    "text",
    [
        "为什么我的鸡总是不下蛋",
        "小人怎么老是这么不开心",
        "我的基地怎么又被猎犬拆了",
        "why do my crops keep dying",
        "why is the oxygen always so low upstairs",
        "什么时候才能修好温室啊",
        "when will the greenhouse finally be fixed",
        "what's wrong with my crops",
        "小人能不能别吐了",
        "why is my base always so hot",  # heat, a colony's as much as the player's
        "为什么楼上总是缺氧",  # 楼上, the base's upper floor
    ],
)
def test_a_complaint_about_the_game_asks_when_it_names_the_game(text: str) -> None:
    """The same words about the player's chickens, colony or base ask for what the save
    remembers of them (as asking what to do does: when the text names the game)."""
    assert asks_memory(text, names_game=True)
    assert not asks_memory(text)


def test_a_why_of_the_players_own_life_asks_only_when_it_names_the_game() -> None:
    """No complaint's words, but a why of the week, exams or the rain: as advice is."""
    assert not asks_memory("why do weekends go by faster than weekdays")
    assert not asks_memory("为啥考试前一天特别想打扫房间")
    assert asks_memory("为什么下雨天鱼更好钓", names_game=True)  # the save's fish


def test_a_complaint_that_names_the_past_asks() -> None:
    assert asks_memory("上次为什么总是打不过那个boss")
    assert asks_memory("why did I always lose to that boss last time")
    assert asks_memory("我什么时候种的草莓")  # 什么时候 of what came


def test_a_rhetorical_complaint_nearer_chatter_carries_the_goals_alone() -> None:
    """「为什么周一总是这么难熬」 reads as a question; it asks nothing, sits nearer everyday
    chatter than any memory: only the goal goes in. 「为什么我的鸡总是不下蛋」, as near the
    chatter, names the coop: it recalls."""
    index = _index()
    near = [(2, 0.86), (4, 0.85), (3, 0.84), (1, 0.80)]
    margin = MemoryBudget().small_talk_margin
    assert _chosen(index, "为什么周一总是这么难熬", near, 0.86 + margin) == [1]
    assert _chosen(index, "why is my boss like this", near, 0.86 + margin) == [1]
    assert 2 in _chosen(index, "为什么我的鸡总是不下蛋", near, 0.86 + margin)
