"""The player's own names for things, learnt from what they say, per save (pure).

After "我管暖石叫小暖" or "I call the crock pot 'big pot'", on that save a question
naming 小暖 asks for what 暖石 would, and one naming 暖石 also asks for 小暖's
words (:func:`alias_terms`). :func:`read_naming` reads one chat message the
player typed (never a model's text) in its normal form and hands back the
parts as typed; questions and pronouns name nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from typing import Annotated

import msgspec

from xtyserver.memory.shown_names import says
from xtyserver.memory.tokenize import tokenize
from xtyserver.memory.types import GameIdText, SaveIdText
from xtyserver.protocol.normalize import normalize

MAX_ALIASES = 32
"""Names one save keeps; past it the one said longest ago goes."""
ALIAS_MAX = 16
MEANS_MAX = 32

AliasText = Annotated[str, msgspec.Meta(min_length=1, max_length=ALIAS_MAX)]
MeansText = Annotated[str, msgspec.Meta(min_length=1, max_length=MEANS_MAX)]


class PlayerAlias(msgspec.Struct, frozen=True, rename="camel"):
    """One name the player gave something on one save.

    Attributes:
        id: The stored row's id (what the page, the CLI and MCP delete it by).
        alias: The player's name, as typed (小暖).
        means: What it names, as typed (暖石).
        said_at: When the player last said it (epoch seconds).
    """

    id: int
    game_id: GameIdText
    save_id: SaveIdText
    alias: AliasText
    means: MeansText
    said_at: float


class Naming(msgspec.Struct, frozen=True):
    """The player named something: ``alias`` stands for ``means`` (both as typed)."""

    alias: str
    means: str


class Unnaming(msgspec.Struct, frozen=True):
    """The player took a name back (as typed)."""

    alias: str


def alias_key(text: str) -> str:
    """How names compare: normalised, trimmed, case-folded."""
    return normalize(text).strip().casefold()


# -- reading a message ---------------------------------------------------------------------

_QUOTES = "\"'“”‘’「」『』《》"
_Q = f"[{_QUOTES}]?"
# A name: no spaces (Chinese) or a few words (English), no punctuation or quotes.
_ZH = rf"[^\s{_QUOTES},，。.!！?？;；:：、()（）]"
_NAME = rf"{_ZH}{{1,16}}?"
_THING = rf"{_ZH}{{1,32}}?"
_LEAD = r"(?:以后|之后|今后|从现在起|从今以后|从今天起|那|嗯|好|对了|记住)?[,，]?"
_WE = r"(?:我|我们|咱们|咱)?(?:就|都|一般|一直|平时|习惯)?"
_END = r"(?:就好|好了|吧|了|啦|呀|哦|嘛|喔|哈|呢)?$"
_CALL = r"(?:叫做|叫作|叫|称为|称作|喊)"
_MEAN = r"(?:就是指|就是|是指|指的是|意思是|就代表|代表|=)"
_MINE = r"(?:我的|我家的|我们的|咱家的|我家)"

_ZH_NAMINGS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p)
    for p in (
        # 我管暖石叫小暖 / 我把烹饪锅叫做大锅
        rf"^{_LEAD}{_WE}(?:管|把)(?P<means>{_THING}){_CALL}{_Q}(?P<alias>{_NAME}){_Q}{_END}",
        # 烹饪锅我叫它大锅 / 暖石我管它叫小暖
        rf"^{_LEAD}(?P<means>{_THING}){_WE}(?:叫它|管它叫|称它为|叫它做){_Q}(?P<alias>{_NAME}){_Q}{_END}",
        # 以后说'大锅'就是烹饪锅 / 我说的大锅是烹饪锅
        rf"^{_LEAD}{_WE}(?:说|讲|提到|喊)(?:的)?{_Q}(?P<alias>{_NAME}){_Q}(?:的时候)?(?:{_MEAN}|是)"
        rf"(?P<means>{_THING}){_END}",
        # '大锅'就是烹饪锅 (quoted)
        rf"^{_LEAD}[{_QUOTES}](?P<alias>{_NAME})[{_QUOTES}]{_MEAN}(?P<means>{_THING}){_END}",
        # 我的狗叫小黄 / 我家的猫名字叫咪咪
        rf"^{_LEAD}{_MINE}(?P<means>{_THING})(?:的名字是|名字是|名字叫|名叫|叫做|叫){_Q}"
        rf"(?P<alias>{_NAME}){_Q}{_END}",
        # 给暖石起名叫小暖
        rf"^{_LEAD}{_WE}给(?P<means>{_THING})(?:起|取)了?(?:个|一个)?(?:名字|名|外号|昵称|小名)"
        rf"(?:叫做|叫|为)?{_Q}(?P<alias>{_NAME}){_Q}{_END}",
        # 暖石的外号是小暖
        rf"^{_LEAD}(?P<means>{_THING})的(?:外号|昵称|小名)(?:是|叫|就叫){_Q}(?P<alias>{_NAME}){_Q}{_END}",
        # 小黄是我的狗
        rf"^{_LEAD}{_Q}(?P<alias>{_NAME}){_Q}(?:就)?是{_MINE}(?P<means>{_ZH}{{1,8}}?){_END}",
    )
)
_ZH_UNNAMINGS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p)
    for p in (
        # 别再把暖石叫小暖了 / 不要再叫小暖了
        rf"^{_LEAD}(?:别|不要|不用|不再)再?(?:(?:把|管)(?P<means>{_THING}))?{_CALL}{_Q}"
        rf"(?P<alias>{_NAME}){_Q}{_END}",
        # 忘掉小暖这个叫法
        rf"^{_LEAD}(?:忘掉|忘了|删掉|删除|去掉|取消|不要|不用){_Q}(?P<alias>{_NAME}){_Q}"
        rf"(?:这个|那个)?(?:叫法|名字|外号|昵称|称呼){_END}",
    )
)
_EN_THE = r"(?:the |my |our |that |this |a )?"
_EN_Q = r"[\"'“”‘’]"
_EN_NAME = r"[\w][\w -]{0,15}?"
_EN_NAMINGS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        # I call the crock pot 'big pot' / let's call the crock pot "big pot"
        rf"^(?:from now on,? )?(?:i|we|let's|lets)(?: will| 'll)? (?:call|name|nickname) "
        rf"{_EN_THE}(?P<means>[\w][\w' -]{{0,31}}?) {_EN_Q}(?P<alias>{_EN_NAME}){_EN_Q}"
        rf"(?: from now on)?$",
        # when I say big pot I mean the crock pot / by "big pot" I mean the crock pot
        rf"^(?:when i say|by) {_EN_Q}?(?P<alias>{_EN_NAME}){_EN_Q}?,? i mean {_EN_THE}"
        rf"(?P<means>[\w][\w' -]{{0,31}}?)$",
        # "big pot" means the crock pot
        rf"^{_EN_Q}(?P<alias>{_EN_NAME}){_EN_Q} (?:means|is) {_EN_THE}"
        rf"(?P<means>[\w][\w' -]{{0,31}}?)$",
        # my dog is called Rex / my dog's name is Rex
        rf"^my (?P<means>[\w]+(?: [\w]+)?)(?:'s name is| is called| is named) {_EN_Q}?"
        rf"(?P<alias>{_EN_NAME}){_EN_Q}?$",
        # I named my dog Rex
        rf"^i (?:named|call|nicknamed) my (?P<means>[\w]+) {_EN_Q}?(?P<alias>[\w]+){_EN_Q}?$",
    )
)
_EN_STOP = (
    rf"^(?:please )?(?:stop calling|don't call|do not call) (?:it|{_EN_THE}[\w' -]{{1,32}}?) "
)
_EN_UNNAMINGS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        rf"{_EN_STOP}{_EN_Q}(?P<alias>{_EN_NAME}){_EN_Q}(?: anymore| any more)?$",
        rf"{_EN_STOP}(?P<alias>{_EN_NAME})(?: anymore| any more)?$",
        rf"^(?:please )?forget (?:the |my )?(?:name|nickname) "
        rf"{_EN_Q}?(?P<alias>{_EN_NAME}){_EN_Q}?$",
    )
)
# "Rex is my dog": a capitalised name only (not "Winter is my enemy" sort of sentences
# with a common word: those say "is my" of anything).
_EN_IS_MY = re.compile(
    rf"^{_EN_Q}?(?P<alias>[A-Z][\w]{{1,15}}){_EN_Q}? is my (?P<means>[a-z]+(?: [a-z]+)?)$"
)

# What is no name: pronouns, demonstratives, question words, times, verb endings.
_NOT_NAMES = frozenset(
    word
    for line in (
        "我 你 他 她 它 我们 你们 他们 她们 它们 自己 大家 别人 人家 这 那 这个 那个 这些 那些",
        "这里 那里 这儿 那儿 哪 哪个 哪里 什么 啥 谁 怎么 怎样 多少 几 今天 明天 昨天 现在",
        "以后 之前 刚才 今年 明年 去年 来 去 过来 出来 起来 回来 醒 上 下 进来 出去 一下",
        "东西 名字 外号 的 是 了",
        "it he she they this that what who which me you him her them here there something",
        "anything everything nothing thing one today tomorrow yesterday winter summer spring",
        "autumn fall night day",
    )
    for word in line.split()
)
_NOT_MEANT = frozenset(
    word
    for line in (
        "最爱 目标 梦想 生日 错 问题 菜 命 朋友们 选择 责任 荣幸 意思 想法 希望 全部 一切",
        "fault problem favorite favourite goal dream life",
    )
    for word in line.split()
)
_QUESTION_END = re.compile(r"(?:[?？]|吗|么|呢|不|没有)\s*$")
_QUESTION_WORDS = re.compile(r"什么|啥|哪个|哪里|谁|怎么|多少|\bwhat\b|\bwhich\b", re.IGNORECASE)
_CLAUSES = re.compile(r"[^,，。.!！?？;；\n]+[,，。.!！?？;；\n]*")


def _normal_map(text: str) -> tuple[str, list[int]]:
    """``text`` in its normal form, and for each normal character the typed one it came from."""
    out: list[str] = []
    where: list[int] = []
    for i, char in enumerate(text):
        for each in normalize(char):
            out.append(each)
            where.append(i)
    return "".join(out), where


def _typed(text: str, where: list[int], start: int, end: int, offset: int) -> str:
    """The typed text behind normal characters ``start:end`` of a clause at ``offset``."""
    if end <= start:
        return ""
    return text[where[offset + start] : where[offset + end - 1] + 1].strip()


def _clean(part: str) -> str:
    return alias_key(part).strip(_QUOTES + " ")


def _fits(alias: str, means: str | None) -> bool:
    """Whether a found pair is a name for a thing (no pronoun, question, or the same word)."""
    key = _clean(alias)
    if not key or key in _NOT_NAMES or len(key) > ALIAS_MAX or _QUESTION_WORDS.search(key):
        return False
    if len(key) < 2:
        return False  # one Chinese character is a word of every sentence, not a name
    if means is None:
        return True
    thing = _clean(means)
    return bool(
        thing
        and thing not in _NOT_NAMES
        and thing not in _NOT_MEANT
        and len(thing) <= MEANS_MAX
        and thing != key
        and not _QUESTION_WORDS.search(thing)
    )


def read_naming(text: str) -> Naming | Unnaming | None:
    """The naming or un-naming in the player's message (first clause wins), its parts
    as typed (quotes and particles trimmed), or None."""
    normal, where = _normal_map(text)
    for match in _CLAUSES.finditer(normal):
        raw = match.group(0)
        clause = raw.rstrip(",，。.!！?？;；\n ")
        if not clause.strip() or _QUESTION_END.search(raw):
            continue
        offset = match.start() + (len(clause) - len(clause.lstrip()))
        clause = clause.strip()
        found = _read_clause(clause)
        if found is None:
            continue
        kind, spans = found
        parts = {name: _typed(text, where, s, e, offset) for name, (s, e) in spans.items()}
        alias = parts["alias"].strip(_QUOTES + " ")
        if kind == "unname":
            return Unnaming(alias) if _fits(alias, None) else None
        means = parts["means"].strip(_QUOTES + " ")
        for article in ("the ", "my ", "our ", "that ", "this ", "a "):
            if means.lower().startswith(article):
                means = means[len(article) :]
        if _fits(alias, means):
            return Naming(alias, means)
    return None


def _read_clause(clause: str) -> tuple[str, dict[str, tuple[int, int]]] | None:
    """The first pattern a clause fits: ``("name" | "unname", {part: span})``."""
    for kind, patterns in (
        ("unname", _ZH_UNNAMINGS),
        ("unname", _EN_UNNAMINGS),
        ("name", _ZH_NAMINGS),
        ("name", _EN_NAMINGS),
        ("name", (_EN_IS_MY,)),
    ):
        for pattern in patterns:
            m = pattern.match(clause)
            if m is not None and _fits(m.group("alias"), None):
                spans = {k: m.span(k) for k, v in m.groupdict().items() if v is not None}
                if kind == "name" and "means" not in spans:
                    continue
                return kind, spans
    return None


# -- finding memories by the player's names ----------------------------------------------


def alias_terms(
    aliases: Iterable[PlayerAlias],
    said: Sequence[str],
    asked: AbstractSet[str],
    terms_of: Callable[[str], set[str]],
) -> set[str]:
    """The query terms a question (tokens ``said``, terms ``asked``) gains from its save's
    names: for a name it says, the terms (``terms_of``) of what it means; for a thing it
    names (its words in a row, or an entity), the name's words."""
    out: set[str] = set()
    for each in aliases:
        name = tokenize(each.alias)
        if name and says(said, name):
            out |= terms_of(each.means)
            continue
        thing = tokenize(each.means)
        meant = terms_of(each.means)
        entities = {t for t in meant if t.startswith("@")}
        if (thing and says(said, thing)) or (entities and entities <= asked):
            out.update(name)
    return out


def used(aliases: Iterable[PlayerAlias], text: str) -> list[PlayerAlias]:
    """The names of ``aliases`` that ``text`` says (for the prompt's note of them)."""
    said = tokenize(text)
    return [a for a in aliases if (name := tokenize(a.alias)) and says(said, name)]


def unnamed(aliases: Iterable[PlayerAlias], said: Unnaming) -> list[PlayerAlias]:
    """The name ``said`` takes back: the same name, else the longest one its words end
    with ("don't call the crock pot big pot" ends with the name ``big pot``, not ``pot``)."""
    key = alias_key(said.alias)
    found: list[tuple[int, PlayerAlias]] = []
    for each in aliases:
        name = alias_key(each.alias)
        if key == name or key.endswith(" " + name) or (not name.isascii() and key.endswith(name)):
            found.append((len(name), each))
    longest = max((size for size, _ in found), default=0)
    return [each for size, each in found if size == longest]
