"""What may enter the shared profile automatically (pure).

The shared profile is injected into every save of every game, so a value the
extraction model proposes for it is refused when it names something of the
current save (``save_specific``), is an inference about the player's character
(``character``), a guess (``inference``), possibly role-play (``roleplay``), or
a sensitive fact (``sensitive``). The patterns recognise the common Chinese and
English phrasings; what they miss is still bounded by the four allowed fields
and their length limits.

Game events pass a narrower guard (:func:`event_refusal`): a game is full of
NPCs' birthdays, potions and hospitals, so an event is refused only for a
sensitive fact in words games rarely use or, said of the player, their health,
age, home or a judgement of their character.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Literal, NamedTuple

from xtyserver.memory import private_facts
from xtyserver.memory.tokenize import tokenize
from xtyserver.protocol.frames import ModelContext
from xtyserver.protocol.normalize import normalize

Refusal = Literal["save_specific", "character", "inference", "roleplay", "sensitive"]

# Share of a value's tokens that may also occur in the save's texts before the
# value counts as naming the save (a single shared token like 钓鱼 is allowed
# only when the value has other, general words around it).
SAVE_OVERLAP = 0.5
MIN_TERM = 2  # shorter save terms (one CJK character, "a") are too common to match on

_CHARACTER = (
    r"性格|脾气|个性|人品|为人|自私|懒|笨|蠢|傻|内向|外向|急躁|暴躁|胆小|冷漠|"
    r"幼稚|固执|小气|贪心|自卑|自大|傲慢|粗心|不靠谱|没耐心|玻璃心|情绪化|"
    r"是个\S{0,8}的人|"
    r"\b(?:lazy|selfish|stupid|dumb|rude|impatient|introvert(?:ed)?|extrovert(?:ed)?|"
    r"shy|arrogant|mean|greedy|careless|childish|stubborn|insecure|moody|"
    r"personality|kind of person)\b",
    re.IGNORECASE,
)
_INFERENCE = (
    r"可能|似乎|好像|大概|应该是|看起来|估计|猜|"
    r"\b(?:maybe|probably|perhaps|seems?|likely|might|guess)\b",
    re.IGNORECASE,
)
_ROLEPLAY = (
    r"扮演|假装|人设|设定|代入|我的角色|"
    r"\b(?:role-?play(?:ing)?|pretend(?:s|ing)?|in character|my character|playing as)\b",
    re.IGNORECASE,
)
_SENSITIVE = (
    r"病|抑郁|焦虑症|药|医院|怀孕|残疾|宗教|信仰|政治|党员|性取向|同性|离婚|"
    r"工资|收入|存款|负债|欠债|住在|住址|地址|学校|公司|单位|岁|生日|民族|"
    r"\b(?:ill(?:ness)?|sick|depress\w*|diagnos\w*|medic\w*|hospital|pregnan\w*|"
    r"disab\w*|religio\w*|church|politic\w*|sexual\w*|gay|lesbian|salary|income|"
    r"debt|divorc\w*|therap\w*|lives? in|address|years old|birthday|school|"
    r"employer|ethnic\w*)\b",
    re.IGNORECASE,
)


# Sensitive whoever it is about: words ordinary game facts do not use.
_EVENT_SENSITIVE = (
    r"抑郁|焦虑症|焦虑障碍|躁郁|双相|精神(?:病|疾病|分裂|科)|心理(?:医生|咨询|治疗|疾病)|"
    r"确诊|癌症|化疗|住院|做手术|怀孕|流产|残疾|自杀|自残|轻生|"
    r"性取向|同性恋|双性恋|跨性别|出柜|宗教|信教|信佛|信基督|基督徒|穆斯林|党员|政治立场|"
    r"工资|月薪|年薪|薪水|存款|负债|房贷|车贷|欠债|网贷|住址|家庭地址|家住|身份证|失业|被裁|"
    r"\b(?:depress\w*|anxiety disorder|antidepressants?|bipolar|schizo\w*|therap(?:ist|y)|"
    r"psychiatr\w*|diagnos\w*|cancer|chemo\w*|hospitali[sz]ed|surgery|pregnan\w*|"
    r"miscarriage|disabilit\w*|suicid\w*|self-harm|sexual orientation|gay|lesbian|bisexual|"
    r"transgender|religio\w*|church|mosque|salary|mortgage|in debt|home address|unemployed|"
    r"laid off)\b",
    re.IGNORECASE,
)
_ME_ZH = r"(?:玩家|我|自己|本人)"
_ME_EN = r"\b(?:i|i'm|i've|me|my|myself|the player(?:'s)?|player(?:'s)?)\b"
# Sensitive when said of the player: health, age, where they live.
_PLAYER_SENSITIVE = (
    _ME_ZH + r".{0,6}?(?:生病|病了|得了.{0,6}?(?:病|症)|看病|看医生|吃药|服药|失眠|住在|"
    r"\d+\s*岁|几岁|生日(?:是|在)|年龄)|"
    + _ME_EN
    + r".{0,20}?\b(?:sick|ill|illness|lives? in|years old|birthday is|age is|"
    r"on medication|taking medication|takes medication|meds)\b",
    re.IGNORECASE,
)
_JUDGED = (
    r"(?:懒(?!得)|笨|蠢|傻(?!眼)|自私|内向|外向|急躁|暴躁|胆小|冷漠|幼稚|固执|小气|贪心|自卑|"
    r"自大|傲慢|粗心|不靠谱|没耐心|玻璃心|情绪化|废物|没用|脾气(?:不好|差|大|急|臭))"
)
# A judgement of the player's character (an NPC's temper is a game fact).
_PLAYER_CHARACTER = (
    _ME_ZH + r"(?:这个?人|这种人|的?性格|的?脾气|的?为人|的?个性)?"
    r"(?:就是|真是|真的|是个|是|很|太|特别|非常|比较|有点|有些|挺|好|超|最近|总是|一直|其实|也|又|"
    r"实在|这么|那么|[，, ])*" + _JUDGED + "|" + _ME_ZH + r"是(?:一)?个\S{0,8}的人|"
    r"\b(?:i'm|i am|i'm just|the player is|player is|the player seems|the player's)\s+"
    r"(?:(?:so|very|really|too|a bit|kind of|quite|just|pretty|always|such an?|a)\s+)*"
    r"(?:lazy|selfish|stupid|dumb|rude|impatient|introvert(?:ed)?|extrovert(?:ed)?|shy|arrogant|"
    r"mean|greedy|careless|childish|stubborn|insecure|moody|hot-tempered|short-tempered|"
    r"bad-tempered|grumpy|irritable|idiot|loser|useless|worthless)\b|"
    r"\b(?:player'?s|my) (?:personality|temper)\b",
    re.IGNORECASE,
)


class _Patterns(NamedTuple):
    kinds: tuple[tuple[Refusal, re.Pattern[str]], ...]
    event_sensitive: re.Pattern[str]
    player_sensitive: re.Pattern[str]
    player_character: re.Pattern[str]


@functools.cache
def _patterns() -> _Patterns:
    """The patterns above, compiled for the first fact judged rather than at import."""

    kinds: tuple[tuple[Refusal, re.Pattern[str]], ...] = (
        ("sensitive", re.compile(*_SENSITIVE)),
        ("roleplay", re.compile(*_ROLEPLAY)),
        ("character", re.compile(*_CHARACTER)),
        ("inference", re.compile(*_INFERENCE)),
    )
    return _Patterns(
        kinds,
        re.compile(*_EVENT_SENSITIVE),
        re.compile(*_PLAYER_SENSITIVE),
        re.compile(*_PLAYER_CHARACTER),
    )


def event_refusal(*texts: str) -> Refusal | None:
    """Why a game event (its subject and summary) may not be stored, or None when it may.

    ``sensitive``: a sensitive fact in words games rarely use, or the player's
    health, age, home or real name (:func:`~xtyserver.memory.private_facts.find`);
    ``character``: a judgement of the player's character.
    """
    text = normalize(" ".join(texts))
    patterns = _patterns()
    if patterns.event_sensitive.search(text) or patterns.player_sensitive.search(text):
        return "sensitive"
    if private_facts.find(text) is not None:
        return "sensitive"
    if patterns.player_character.search(text):
        return "character"
    return None


def kind_refusal(value: str) -> Refusal | None:
    """The kind of fact ``value`` is that is never saved automatically, if recognised."""
    text = normalize(value)
    if private_facts.find(text) is not None:
        return "sensitive"
    for kind, pattern in _patterns().kinds:
        if pattern.search(text):
            return kind
    return None


def names_save(value: str, save_texts: Iterable[str]) -> bool:
    """Whether ``value`` names a person, place or plan found in ``save_texts``.

    ``save_texts`` are the save's event subjects and summaries, its modelContext
    names and the events proposed for it in the same turn. True when a whole
    save text (two characters or more) occurs in the value or the value in it,
    or when at least :data:`SAVE_OVERLAP` of the value's tokens occur in them.
    """
    text = normalize(value).casefold().strip()
    if not text:
        return False
    tokens: set[str] = set()
    for raw in save_texts:
        term = normalize(raw).casefold().strip()
        if len(term) >= MIN_TERM and (term in text or text in term):
            return True
        tokens.update(tokenize(term))
    mine = set(tokenize(text))
    if not mine:
        return False
    return len(mine & tokens) / len(mine) >= SAVE_OVERLAP


def refusal(value: str, save_texts: Iterable[str]) -> Refusal | None:
    """Why a proposed shared value may not be saved automatically, or None when it may."""
    kind = kind_refusal(value)
    if kind is not None:
        return kind
    return "save_specific" if names_save(value, save_texts) else None


def context_names(context: ModelContext | None) -> tuple[str, ...]:
    """The names in a modelContext: location, focus, nearby entities, relevant items."""
    if context is None:
        return ()
    names = [
        context.world.location if context.world else None,
        context.focus.name if context.focus else None,
        *(n.name for n in context.nearby or ()),
        *(i.name for i in context.relevant_items or ()),
    ]
    return tuple(dict.fromkeys(n for n in names if n))
