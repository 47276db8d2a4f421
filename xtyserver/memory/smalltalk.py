"""Small talk: a turn that asks nothing of memory carries only the always-on goals.

A vector ranking always has a nearest memory, and small talk ("今天好累", "tell me
a joke") lands as near its nearest memory (cosine 0.76-0.88 with e5) as a real
question does: no floor on the cosine separates them. What does separate them is
where the text falls among other texts: small talk is nearer everyday chatter
than any memory of the save, a question about the game nearer one of its
memories. :data:`CHATTER` is that chatter, embedded once per process as memories
are (passages); :func:`is_small_talk` compares.

The words come first: a turn whose words or glossary entities match a memory, or
that names a time or asks for the plans (memory/cues.py), is never small talk.
"""

from __future__ import annotations

CHATTER: tuple[str, ...] = (
    # greetings and goodbyes
    "你好呀，在吗",
    "早上好",
    "晚安，我先睡了",
    "拜拜，下次见",
    "hi, how are you doing",
    "good night, see you tomorrow",
    # how the player feels, their day
    "今天好累，不想动",
    "我今天心情不太好",
    "今天上班好忙",
    "考试终于考完了",
    "I'm so tired today",
    "work was rough today",
    "我好无聊啊",
    "I'm bored",
    # food, weather, home, pets, family, friends
    "我刚吃完饭，吃得好饱",
    "中午吃什么好呢",
    "想喝奶茶",
    "外面下雨了好冷",
    "今天天气真热",
    "my dog is sleeping on my feet",
    "what did you have for dinner",
    "it's raining outside",
    "我妈叫我去洗碗",
    "朋友约我周末出去玩",
    # the companion, jokes, laughter, thanks
    "哈哈哈笑死我了",
    "给我讲个笑话",
    "你是谁呀，你喜欢什么",
    "谢谢你陪我",
    "lol that's funny",
    "tell me something fun",
    "thanks, you're the best",
    "do you like music",
    # life outside the game
    "周末想去看电影",
    "我在听歌",
    "I just watched a great movie",
    "going to take a shower brb",
    # more of the day: school, work, family, health, sleep, going out
    "作业好多写不完",
    "明天还要早起上班",
    "我爸妈又在吵架了",
    "刚下班到家",
    "头有点疼，可能感冒了",
    "昨晚没睡好，好困",
    "等下要出门买菜",
    "my mom just called me",
    "I have a headache",
    "can't sleep tonight",
    "school starts tomorrow ugh",
    "I'm going out with friends later",
    # reactions, feelings, chit-chat with the companion
    "好开心呀",
    "唉，好烦",
    "嗯嗯，好的",
    "真的假的",
    "你在干嘛呢",
    "你今天过得怎么样",
    "我好想你",
    "哈哈你好可爱",
    "omg really?",
    "haha nice",
    "what are you up to",
    "I missed you",
    "that's so cute",
    "ok ok",
    # dialect and voice-typed chatter
    "食咗饭未呀",
    "今日好攰",
    "真的很累欸",
    "嗯那个就是 没什么 随便聊聊",
)
"""Everyday chatter, Chinese and English, about nothing a save remembers (written for
this module: no evaluation set's words)."""

SMALL_TALK_MARGIN = 0.01
"""How much nearer the chatter than any memory a text must be (cosine): calibrated on
the development sets (docs/evaluation.md "Small talk")."""


def is_small_talk(chatter: float | None, nearest: float | None, *, margin: float) -> bool:
    """Whether a text with no word match and no cue is small talk: its best cosine with
    :data:`CHATTER` (``chatter``) at least ``margin`` above its best with a memory of
    the save (``nearest``). Unknown either way (no vectors): not small talk."""
    if chatter is None or nearest is None:
        return False
    return chatter >= nearest + margin
