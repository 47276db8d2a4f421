"""The player's health, home address and real name, found and blanked out (pure).

Before the player's words and the companion's reply go to an extraction, summary
or fold model, :func:`redact` replaces each such statement (from its cue to the
end of its clause) with a placeholder, so no background model ever sees the
value; :func:`find` is the same recognition for the server's own check on what
a model proposes to store (:func:`xtyserver.memory.shared_guard.event_refusal`).

Shapes (Chinese and English): a real name said as such (真名叫…, 真实姓名是…,
本名…, "my real name is …", "my legal name …"); where the player lives (我住在…,
我家在…, 家庭住址/地址是…, "my address is …", "I live at/in …"); the player's
health (我有糖尿病, 我得了…病, 确诊了…, 在吃…药, "I have diabetes", "I was
diagnosed with …", "I'm on medication …"). A game's own people, places and
potions are not the player's: the cues are the player's first person.
"""

from __future__ import annotations

import functools
import re
from typing import Literal, NamedTuple

PrivateKind = Literal["real_name", "address", "health"]

PLACEHOLDER: dict[PrivateKind, str] = {
    "real_name": "[真名已隐去 real name removed]",
    "address": "[住址已隐去 address removed]",
    "health": "[健康信息已隐去 health removed]",
}

# The rest of a clause: up to the next sentence or clause mark (or the end).
_CLAUSE = r"[^。！？!?；;，,\n]*"
_CLAUSE_EN = r"[^.!?;,。！？；，\n]*"

_ILLNESS_ZH = (
    r"糖尿病|高血压|低血压|心脏病|哮喘|癫痫|抑郁症?|焦虑症|躁郁症|双相|癌|肿瘤|艾滋|HIV|乙肝|"
    r"肝炎|胃病|胃炎|肾病|甲亢|甲减|痛风|贫血|过敏性?鼻炎|偏头痛|失眠症?|多动症|自闭症|"
    r"[\u4e00-\u9fff]{1,4}(?:病|症|癌|炎)"
)
_ILLNESS_EN = (
    r"diabetes|diabetic|asthma|epilepsy|cancer|hiv|aids|hepatitis|hypertension|"
    r"high blood pressure|heart (?:disease|condition)|depression|anxiety|adhd|autism|"
    r"bipolar|migraines?|insomnia|(?:a |an )?(?:chronic |mental )?(?:illness|disease|disorder)"
)

# Who a private fact is about: the player in their own words (我, I), or as an extraction
# or summary model writes of them (玩家, "the player"), which is what the server's own
# check reads.
_WHO_ZH = r"(?:我|玩家|本人)"
_WHOSE_EN = r"(?:my|the player's|player's|the player’s)"
_HAS_EN = (
    r"(?:i(?: have| had|'ve got|'ve had| got| suffer from| was diagnosed with|'m diagnosed with|"
    r" am diagnosed with)|(?:the )?player(?: has| had| has got| got| suffers from|"
    r" was diagnosed with| is diagnosed with| has been diagnosed with))"
)
_IS_EN = r"(?:i(?:'m| am)|(?:the )?player(?:'s| is))"

_SHAPES: tuple[tuple[PrivateKind, str], ...] = (
    (
        "real_name",
        r"(?:我的?|玩家的?)?(?:真名|真实姓名|真实名字|本名|身份证上的名字|现实(?:里|中)的?名字)"
        r"(?:其实)?(?:叫做?|是|为|：|:)?\s*" + _CLAUSE,
    ),
    (
        "real_name",
        r"\b(?:" + _WHOSE_EN + r" (?:real|legal|full|actual|irl|real-life) name(?: is|'s|:)?|"
        r"(?:real|legal|irl|real-life) name(?: is|:))\s*" + _CLAUSE_EN,
    ),
    (
        "address",
        _WHO_ZH
        + r"(?:家|们家)?(?:就|现在|目前)?(?:住在|家在|家住)"
        + _CLAUSE
        + r"|(?:我的?|我家的?|玩家的?|玩家家的?)?(?:家庭)?(?:住址|地址|门牌号)(?:是|在|：|:)"
        + _CLAUSE,
    ),
    (
        "address",
        r"\b(?:" + _WHOSE_EN + r" (?:home |street |mailing )?address(?: is|'s|:)?|"
        r"(?:home|street|mailing) address(?: is|:)|i live (?:at|on|in)|"
        r"(?:the )?player lives (?:at|on) (?=\S*\d)|"
        + _WHOSE_EN
        + r" (?:house|home|flat|apartment) is (?:at|on|in))\s*"
        + _CLAUSE_EN,
    ),
    (
        "health",
        _WHO_ZH
        + r"(?:自己)?(?:有|得了|得过|患有|患了|确诊(?:了|为)?|查出(?:了|来)?|被诊断(?:出|为)?)"
        r"(?:点|一点)?(?:"
        + _ILLNESS_ZH
        + r")"
        + _CLAUSE
        + r"|"
        + _WHO_ZH
        + r"(?:每天|一直|平时|长期|最近)?(?:都|还)?(?:要|在)?(?:吃药|服药)"
        + _CLAUSE
        + r"|"
        + _WHO_ZH
        + r"(?:每天|一直|平时|长期|最近)(?:都|还)?(?:要|在)?(?:吃|服用?)"
        r"[\u4e00-\u9fff]{1,4}药(?![水丸膏剂瓶])" + _CLAUSE,
    ),
    (
        "health",
        r"\b"
        + _HAS_EN
        + r"\s+(?:a |an )?(?:"
        + _ILLNESS_EN
        + r")\b"
        + _CLAUSE_EN
        + r"|\b"
        + _IS_EN
        + r" (?:diabetic|epileptic|asthmatic|"
        r"on (?:meds|medication|insulin|antidepressants|blood pressure (?:pills|medication)))"
        + _CLAUSE_EN,
    ),
)


class _Compiled(NamedTuple):
    each: tuple[tuple[PrivateKind, re.Pattern[str]], ...]


@functools.cache
def _compiled() -> _Compiled:
    return _Compiled(tuple((kind, re.compile(p, re.IGNORECASE)) for kind, p in _SHAPES))


def find(text: str) -> PrivateKind | None:
    """The first kind of private fact of the player's ``text`` says, if any."""
    for kind, pattern in _compiled().each:
        if pattern.search(text):
            return kind
    return None


def redact(text: str) -> str:
    """``text`` with every statement of the player's health, address or real name
    replaced by its placeholder (the rest of the words kept as they were)."""
    for kind, pattern in _compiled().each:
        text = pattern.sub(PLACEHOLDER[kind], text)
    return text
