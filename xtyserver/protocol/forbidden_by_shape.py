"""Privacy by shape: identifiers found by what they look like, not by their family's name.

Pure patterns and checks, scanned by :mod:`xtyserver.protocol.forbidden` on the
judged text with Chinese numerals folded to digits (one character for one, so
spans stay put). A family's spelling changes (企鹅号 for QQ, V信 for WeChat, a
Steam id in hex, a card number in 大写数字); its shape does not:

* a **long number**: 11 digits or more in any numeral system, separators inside
  (spaces, dashes, dots, commas, 、) — unless a seed cue stands before it
  (种子号 398172650431, ``seed:``) or it is an Oxygen Not Included seed
  (``SNDST-A-1234567890-0-0-0``), a run of dates, or one decimal fraction;
* a **hex number**: 12 hex digits or more with a letter and a digit among them
  (separators ``-`` or ``:`` inside), or ``0x`` and 8 or more;
* an **account cue and an identifier**: QQ, 企鹅号, Q号, 扣扣, 微信, V信, vx, wx,
  Discord, DC, Steam (好友代码, friend code, id), 好友代码, UID, 账号, 手机, 电话
  and, after at most a few joining characters (``：``, 是, 号, spaces), five
  digits or more, a handle with a digit or ``_`` in it, or a Discord tag
  ``name#1234`` (「QQ糖」, 「账号等级 12」 and 「手机版」 have none);
* a **random run**: 24 base64 characters or more mixing upper case, lower case
  and digits (an encoded key or token).

Every quantifier is bounded, so a scan stays linear.
"""

from __future__ import annotations

import re
from typing import Final

# What may join the digits of one number (after NFKC: ， is ",", 。 stays "。").
_JOIN: Final = r"[ \-.,_·、/。]"
LONG_NUMBER: Final[re.Pattern[str]] = re.compile(
    rf"(?<![0-9A-Za-z])[0-9](?:{_JOIN}{{0,2}}[0-9]){{10,64}}(?![0-9A-Za-z])"
)
HEX_NUMBER: Final[re.Pattern[str]] = re.compile(
    r"(?<![0-9A-Za-z_#])(?:0[xX](?=[0-9A-Fa-f]{8})|(?=[0-9A-Fa-f:-]{0,96}[A-Fa-f])"
    r"(?=[0-9A-Fa-f:-]{0,96}[0-9]))[0-9A-Fa-f]{2,64}(?:[-:][0-9A-Fa-f]{2,64}){0,16}"
    r"(?![0-9A-Za-z_])"
)
# The separator is required between groups: optional, a long run would split every way
# (catastrophic backtracking when the look-ahead at its end fails).
HEX_MIN: Final = 12
HEX_MIN_PREFIXED: Final = 8

CUE: Final = (
    r"(?:(?<![A-Za-z0-9_])(?i:qq|q号|v信|vx|wx|wechat|weixin|discord|dc|uid"
    r"|steam\s?(?:id|好友代码|好友码|friend\s?code)|friend\s?code)(?![A-Za-z])"
    r"|扣扣|企鹅号?|微信号?|威信|薇信|好友代码|好友码|[账帐][号户]|联系方式"
    # A phone cue names its kind (the only group: ``lastgroup`` is "phone" or None).
    r"|(?P<phone>手机号?码?|电话号?码?))"
)
# What may stand between a cue and its identifier: "：", "是", "号", "的", spaces...
_FILL: Final = r"[\s:=#是为號号码的,;]{0,6}"
_IDENTIFIER: Final = (
    r"(?:[0-9](?:[ \-]{0,2}[0-9]){4,31}"
    r"|[A-Za-z][A-Za-z0-9_.\-]{1,31}#[0-9]{4}"
    r"|(?=[A-Za-z0-9_.\-]{0,31}[0-9_])[A-Za-z][A-Za-z0-9_.\-]{3,31})"
    r"(?![A-Za-z0-9_])"
)
CUE_ID: Final[re.Pattern[str]] = re.compile(f"{CUE}{_FILL}{_IDENTIFIER}")

RANDOM_MIN: Final = 24

# A seed named before the number, within a few characters: 种子号 398172650431, seed: 1234.
_SEED_CUE: Final[re.Pattern[str]] = re.compile(
    r"(?:种子|(?i:seed)|世界代码|地图代码)[^\n0-9]{0,8}$"
)
# Oxygen Not Included's seed: cluster letters, then the number and settings (SNDST-A-...).
_ONI_SEED_BEFORE: Final[re.Pattern[str]] = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2,8}-[A-Z0-9]{1,4}-$")
_DATES: Final[re.Pattern[str]] = re.compile(
    r"(?:(?:19|20)[0-9]{2}[-./][0-9]{1,2}[-./][0-9]{1,2}[ ,、/-]{0,3})+"
)
_DECIMAL: Final[re.Pattern[str]] = re.compile(r"[0-9]{1,9}\.[0-9]+")


def is_game_number(text: str, start: int, end: int) -> bool:
    """Whether the long number ``text[start:end]`` is game state: a seed named as one, an
    Oxygen Not Included seed, a run of dates or one decimal fraction. A span starting or
    ending inside a longer run (the strict scan tries every start) is judged as that run."""
    start, end = _whole_run(text, start, end)
    before = text[max(0, start - 24) : start]
    if _SEED_CUE.search(before) or _ONI_SEED_BEFORE.search(before):
        return True
    run = text[start:end]
    return _DATES.fullmatch(run) is not None or _DECIMAL.fullmatch(run) is not None


_JOINERS: Final = frozenset(" -.,_·、/。")
# How far the whole run is looked for either side: a seed, a date run or a fraction is
# shorter, and a bound keeps the scan linear (every match of a long run would walk it all).
_RUN_REACH: Final = 96


def _whole_run(text: str, start: int, end: int) -> tuple[int, int]:
    """The whole digit run (digits, joiners between them) around ``text[start:end]``, as far
    as :data:`_RUN_REACH` either side."""
    low, high = max(0, start - _RUN_REACH), min(len(text), end + _RUN_REACH)
    while start > low and (
        text[start - 1].isdigit()
        or (start > 1 and text[start - 1] in _JOINERS and text[start - 2].isdigit())
    ):
        start -= 1
    while end < high and (
        text[end].isdigit()
        or (end + 1 < len(text) and text[end] in _JOINERS and text[end + 1].isdigit())
    ):
        end += 1
    return start, end


def hex_digits_enough(run: str) -> bool:
    """Whether a :data:`HEX_NUMBER` match is long enough to be an identifier."""
    if run[:2] in ("0x", "0X"):
        return sum(c.isalnum() for c in run[2:]) >= HEX_MIN_PREFIXED
    return sum(c.isalnum() for c in run) >= HEX_MIN


def looks_random(run: str) -> bool:
    """Whether a base64 run mixes cases and digits as generated keys do."""
    if len(run) < RANDOM_MIN:
        return False
    upper = sum(c.isupper() for c in run)
    lower = sum(c.islower() for c in run)
    digits = sum(c.isdigit() for c in run)
    return upper >= 3 and lower >= 3 and digits >= 2
