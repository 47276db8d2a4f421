"""A cheap, sound pre-check of every free-text string of a modelContext, in one pass.

:func:`context_texts` gathers the strings of a modelContext straight from its
Struct (code generated once from the types, so a new field cannot be forgotten),
in parts: each Struct's own strings joined, each list's. :func:`texts_clean`
answers "could any of them hold forbidden content?" with a handful of C-speed
byte operations on the strings joined by newlines, instead of running
:func:`~xtyserver.protocol.forbidden.find_forbidden` once per string. It may say
False for clean strings (the caller then runs the exact per-string check); it
never says True when some string would be refused.

Why it is sound. It only answers True for a text that is plain: nothing
outside printable ASCII and whitespace but the inert characters of
:func:`~xtyserver.protocol.normalize.is_plain` (kana, Hangul, CJK), so every
string is already in its judged form and case-insensitive matching is plain
ASCII. A newline between two strings is read like a line break inside one:
every rule below is a search that a string's own text would set off on its
own, so joining only adds matches. Each alternative of the forbidden-content
pattern (``forbidden_shapes.py``; listed per kind in the tests) needs one of these:

- one of ``\\ / % $ ~ @ _ = < > "`` or a control character that is removed
  (paths, e-mail, Steam ``STEAM_``, key=value, ``<at>``, an Explorer address
  ``此电脑 > 用户 > 张伟``, a Python frame's ``File "``, ...);
- a colon after a character other than a digit (drive letters, ``[U:1:...]``,
  ``ERROR:``, ``key: value``, ``stack traceback:``), or two digits or hex
  letters between colons (log times ``:12:``, a MAC address ``a0:b1:...``);
- a hyphen after a letter (``sk-``, ``xoxb-``, ``glpat-``), ``--`` (PEM) or a
  hyphen between whitespace (``ERROR - ``);
- a bracketed log level ``[ERROR]``, ``[INF]``;
- a literal: the AWS and Google key prefixes, ``eyJ``, ``bearer``, ``pid``,
  ``process``, ``wechat``, ``wx``, ``weixin``, ``进程``, ``微信``, ``扣扣``,
  ``at`` and whitespace together with ``(`` (.NET/Java frames), a bracketed
  ``at`` or ``dot``; ``steam`` and ``qq`` only matter before five digits in a
  row (their ids), which the digit shape shows;
- four digits in a row with spaces, dashes and dots left out (``7656`` and
  every number of eleven digits or more: Steam ids, phone and id card
  numbers), an IPv4 address's dots between digits, or a run of 16 base64,
  hex or key characters (``[A-Za-z0-9+:-]``: base64 and base64url, MAC
  addresses written with dashes or colons).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from itertools import compress
from operator import ne
from typing import Any, Final

import msgspec.inspect as mi

from xtyserver.protocol.forbidden_by_shape import CUE
from xtyserver.protocol.forbidden_shapes import LEVEL_IN_BRACKETS
from xtyserver.protocol.frames import ModelContext
from xtyserver.protocol.judged import NUMERALS
from xtyserver.protocol.normalize import is_plain

__all__ = ["bare_type", "context_strings", "context_texts", "texts_clean"]

# -- gathering the strings ----------------------------------------------------

# Field types that hold no text.
_NO_TEXT: Final = (mi.IntType, mi.FloatType, mi.BoolType, mi.DateTimeType, mi.LiteralType)


def _source(info: mi.StructType, var: str, depth: int, *, flat: bool) -> list[str]:
    """Statements that add the strings of the Struct held by ``var`` to ``out``.

    ``flat``: one item per string, None where unset. Otherwise in parts (see the
    module), an unset string written ``None`` (a word that changes no verdict). A
    field type this gatherer does not read raises TypeError rather than go unjudged.
    """
    pad = "    " * (depth + 1)
    lines: list[str] = []
    texts: list[str] = []
    for n, field in enumerate(info.fields):
        t = bare_type(field.type)
        item = bare_type(t.item_type) if isinstance(t, mi.ListType) else None
        local = f"v{depth}_{n}"
        if isinstance(t, mi.StrType):
            texts.append(f"{var}.{field.name}")
        elif isinstance(t, mi.StructType):
            lines += [f"{pad}{local} = {var}.{field.name}", f"{pad}if {local} is not None:"]
            lines += _source(t, local, depth + 1, flat=flat) or [f"{pad}    pass"]
        elif isinstance(item, mi.StrType):
            assert isinstance(t, mi.ListType)
            lines += [f"{pad}{local} = {var}.{field.name}", f"{pad}if {local}:"]
            if flat:
                lines.append(f"{pad}    out += {local}")
            elif isinstance(t.item_type, mi.UnionType):  # None items written as words
                lines.append(f'{pad}    out.append("\\n".join([f"{{x}}" for x in {local}]))')
            else:
                lines.append(f'{pad}    out.append("\\n".join({local}))')
        elif isinstance(item, mi.StructType):
            lines += [f"{pad}{local} = {var}.{field.name}", f"{pad}if {local}:"]
            lines += _list_source(item, local, depth + 1, flat=flat)
        elif not isinstance(t, _NO_TEXT):
            raise TypeError(f"{info.cls.__name__}.{field.name}: not a type the gatherer reads")
    if texts and flat:
        lines.append(f"{pad}out += ({', '.join(texts)},)")
    elif texts:
        lines.append(f"{pad}out.append({_spelled(texts)})")
    return lines


def _spelled(texts: list[str]) -> str:
    """An f-string writing the strings named by ``texts`` one a line (None as ``None``)."""
    return 'f"' + "\\n".join(f"{{{text}}}" for text in texts) + '"'


def _list_source(info: mi.StructType, var: str, depth: int, *, flat: bool) -> list[str]:
    """Statements adding the strings of a list of Structs: one comprehension when flat."""
    pad = "    " * (depth + 1)
    kinds = [bare_type(field.type) for field in info.fields]
    item = f"i{depth}"
    if not all(isinstance(t, (mi.StrType, *_NO_TEXT)) for t in kinds):
        return [f"{pad}for {item} in {var}:", *_source(info, item, depth + 1, flat=flat)]
    texts = [
        f"{item}.{f.name}"
        for f, t in zip(info.fields, kinds, strict=True)
        if isinstance(t, mi.StrType)
    ]
    if not texts:
        return [f"{pad}pass"]
    if not flat:
        return [f'{pad}out.append("\\n".join([{_spelled(texts)} for {item} in {var}]))']
    if len(texts) == 1:
        return [f"{pad}out += [{texts[0]} for {item} in {var}]"]
    return [f"{pad}out += [x for {item} in {var} for x in ({', '.join(texts)})]"]


def bare_type(t: mi.Type) -> mi.Type:
    """``t`` without ``| None`` and without its constraints (a modelContext field's type)."""
    if isinstance(t, mi.UnionType):
        members = [m for m in t.types if not isinstance(m, mi.NoneType)]
        if len(members) != 1:
            raise TypeError(f"only X | None is gathered, not {t}")
        t = members[0]
    return t.type if isinstance(t, mi.Metadata) else t


def _gatherer(cls: type[Any], *, flat: bool) -> tuple[Callable[[Any], list[Any]], str]:
    """A function listing every string field of a ``cls`` Struct, and its source.

    Generated once from the types, as :mod:`dataclasses` does: a loop reading the
    types at every call costs several times more.
    """
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    body = _source(info, "obj", 0, flat=flat)
    source = "\n".join(["def gather(obj):", "    out = []", *body, "    return out"])
    names: dict[str, Any] = {}
    exec(compile(source, f"<gatherer of {cls.__name__}>", "exec"), names)
    return names["gather"], source


_Gatherer = tuple[Callable[[Any], list[Any]], str]


@functools.cache
def _gatherers() -> tuple[_Gatherer, _Gatherer]:
    """Both gatherers of a modelContext, generated for the first frame that carries one."""
    return _gatherer(ModelContext, flat=False), _gatherer(ModelContext, flat=True)


def context_texts(context: ModelContext) -> list[str]:
    """Every string field of a modelContext in parts, in field order: what texts_clean takes."""
    texts: list[str] = _gatherers()[0][0](context)
    return texts


def context_strings(context: ModelContext) -> list[str | None]:
    """The same strings one by one, None where unset: what the exact check judges."""
    strings: list[str | None] = _gatherers()[1][0](context)
    return strings


def gatherer_sources() -> tuple[str, str]:
    """The generated source of :func:`context_texts` and of :func:`context_strings`."""
    texts, strings = _gatherers()
    return texts[1], strings[1]


# -- judging them -------------------------------------------------------------

# Deleted by the first translation: any of them makes the text unclean. The
# controls are the ones normalisation removes (the others are whitespace).
_SPECIAL: Final = b'\\/%$~@_=<>"#' + bytes([*range(0x00, 0x09), *range(0x0E, 0x1C), 0x7F])
# Lower case for the case-blind literals; ] and } as ) for a spelled "(at)";
# every whitespace character as a space, for the rules that read one.
_TO_LOWER: Final = bytes.maketrans(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZ]}\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f",
    b"abcdefghijklmnopqrstuvwxyz))" + b" " * 9,
)
_CJK_LITERALS: Final = ("进程", "微信", "扣扣", "艾特", "圈a")
# An account cue of privacy by shape: an identifier may follow (forbidden_by_shape.py).
_ACCOUNT_CUE: Final[re.Pattern[str]] = re.compile(CUE)
# A Chinese numeral, or a digit joined to another by CJK punctuation (、，：):
# then a 4-run of digits and numerals with any joins is looked for on the str.
_CJK_DIGIT_RISK: Final[re.Pattern[str]] = re.compile(f"[{NUMERALS}]|[0-9][^\\x00-\\x7f\\w]")
_CJK_DIGIT_RUN: Final[re.Pattern[str]] = re.compile(
    f"[0-9{NUMERALS}](?:(?:[^\\w\\n]|_){{0,4}}[0-9{NUMERALS}]){{3}}"
)
# One search: a pattern with a literal first byte is scanned for that byte at
# C speed, where nine substring searches would each walk the text.
_A_LITERALS: Final[re.Pattern[bytes]] = re.compile(rb"A(?:KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA|Iza)")
# Digit runs are found on a shape made by bytes.translate, then substring searches
# (both at C speed). Every ASCII character but letters, digits and the line break
# joins digits, whatever their number, which only makes a check stricter.
_JOINS: Final = bytes(b for b in range(0x80) if not chr(b).isalnum() and b != 0x0A)
# Hex digits with their possible separators left out: twelve in a row may be
# a MAC address written without separators, with spaces or dots.
_HEX_SHAPE: Final = bytes(0x68 if chr(b) in "0123456789abcdefABCDEF" else 0x2E for b in range(256))
_HEX_JOINS: Final = b" .:-_"
_HEX_RUN: Final = "h" * 12
_DIGIT_SHAPE: Final = bytes(0x30 if 0x30 <= b <= 0x39 else 0x78 for b in range(256))
_IPV4: Final[re.Pattern[bytes]] = re.compile(rb"\.(?<=[0-9]\.)[0-9]{1,3}\.")
_RUN_SHAPE: Final = bytes(
    0x61 if chr(b).isascii() and (chr(b).isalnum() or chr(b) in "+:-") else 0x2E for b in range(256)
)
_RUN: Final = "a" * 16
_SPELLED_AT: Final = ("at)", "at )", "dot)", "dot )", "a)", "a )")
_COLON: Final[re.Pattern[bytes]] = re.compile(
    rb":(?:(?<![0-9]:)|[0-9A-Fa-f]{2}:|[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:)"
)
_HYPHEN: Final[re.Pattern[bytes]] = re.compile(rb"-(?:(?<=[a-z]-)|-|(?<= -) )")
_LETTER_AFTER_BRACKET: Final[re.Pattern[bytes]] = re.compile(rb"\[[A-Za-z]")
_LEVEL: Final[re.Pattern[bytes]] = re.compile(LEVEL_IN_BRACKETS.encode())


def texts_clean(parts: list[str]) -> bool:
    """Whether no string in ``parts`` can hold forbidden content (see the module).

    A game sends the same strings again and again, so the parts of the last
    modelContext found clean are kept: a part equal to the one in the same place
    there is clean (the verdict is a function of the text alone), and only the
    other parts are judged. Comparing parts in place is a few memcmp calls;
    hashing each new string for a set would cost more than judging them.

    Args:
        parts: Strings as kept (invisible characters removed), in parts as
            :func:`context_texts` lists them.

    Returns:
        True only when every string is certainly clean; False means "run the
        exact check", not "forbidden".
    """
    global _LAST_CLEAN
    last = _LAST_CLEAN
    if parts == last:
        return True
    if len(parts) == len(last):
        text = "\n".join(compress(parts, map(ne, parts, last)))
    else:  # a part came or went, shifting the others: all are judged
        text = "\n".join(parts)
    if not _judged_clean(text):
        return False
    _LAST_CLEAN = parts  # replaced whole, never changed: another thread reads either
    return True


# The parts of the last modelContext found clean, as context_texts listed them.
_LAST_CLEAN: list[str] = []


def _judged_clean(texts: str) -> bool:
    """:func:`texts_clean` without the memory."""
    if texts.isascii():
        raw = texts.encode("ascii")
    elif (
        not is_plain(texts)
        or any(word in texts for word in _CJK_LITERALS)
        or (_CJK_DIGIT_RISK.search(texts) is not None and _CJK_DIGIT_RUN.search(texts) is not None)
    ):
        return False
    else:
        raw = texts.encode("utf-8", "surrogatepass")
    lower = raw.translate(_TO_LOWER, _SPECIAL)
    if len(lower) != len(raw):
        return False
    # Substring searches run on str (no buffer protocol: about twice as fast
    # on a short text); one-byte ones on bytes with an int (memchr) gate the
    # rarer checks.
    low = lower.decode("latin-1")
    if 0x41 in raw and _A_LITERALS.search(raw) is not None:  # "A"
        return False
    if 0x4A in raw and b"eyJ" in raw:  # "J"
        return False
    digits = raw.translate(_DIGIT_SHAPE, _JOINS).decode("latin-1")
    if "0000" in digits:
        if b"7656" in raw.translate(None, _JOINS) or "0" * 11 in digits:
            return False
        if "00000" in digits and ("steam" in low or "qq" in low):
            return False
    if 0x2E in raw and _IPV4.search(raw) is not None:  # "."
        return False
    if "0x" in low or _ACCOUNT_CUE.search(texts) is not None:  # a 0x number; QQ, UID, 账号...
        return False
    if _RUN in raw.translate(_RUN_SHAPE).decode("latin-1"):
        return False
    if _HEX_RUN in raw.translate(_HEX_SHAPE, _HEX_JOINS).decode("latin-1"):
        return False
    # A bare "at" before a dot, "dot", 点: a spelled e-mail (forbidden_shapes.py).
    if " at " in low and ("." in low or "dot" in low or "点" in texts or "點" in texts):
        return False
    if 0x28 in raw and "at " in low:  # "("
        return False
    if "pid" in low or "process" in low:
        return False
    if (0x62 in lower and "bearer" in low) or (0x77 in lower and "wechat" in low):  # "b", "w"
        return False
    if 0x78 in lower and ("wx" in low or "weixin" in low):  # "x"
        return False
    if 0x29 in lower and any(spelled in low for spelled in _SPELLED_AT):  # ")"
        return False
    return (
        (0x3A not in raw or _COLON.search(raw) is None)  # ":"
        and (0x2D not in raw or _HYPHEN.search(lower) is None)  # "-"
        and (
            0x5B not in raw  # "["
            or _LETTER_AFTER_BRACKET.search(raw) is None
            or _LEVEL.search(raw) is None
        )
    )
