"""Detect and redact what must never leave the player's machine.

Text is judged in its judged form (:mod:`~xtyserver.protocol.judged`), so a
full-width path, a Steam id in Arabic-Indic digits or an e-mail with a Cyrillic
``о`` or a zero-width space inside is judged as its plain form. The eleven kinds
(:data:`KINDS`), and what is left undetected on purpose, are listed in
``protocol/v1.md`` "Forbidden content".

The shapes are one combined regular expression
(:mod:`~xtyserver.protocol.forbidden_shapes`) whose quantifiers are bounded or
possessive and whose alternatives start at a token's start or with a literal, so
a scan is linear in the text's length: nothing backtracks catastrophically.
"""

from __future__ import annotations

import base64
import functools
import itertools
import re
from collections.abc import Mapping
from typing import Any, Final, Literal, get_args

from xtyserver.errors import UsageError
from xtyserver.protocol.forbidden_by_shape import (
    CUE_ID,
    HEX_NUMBER,
    LONG_NUMBER,
    hex_digits_enough,
    is_game_number,
    looks_random,
)
from xtyserver.protocol.forbidden_shapes import (
    BASE64,
    BASE64_MAX,
    MAIL_TLDS,
    PLAIN_KEY,
    SPELLED_DOT,
    STRICT,
    TLD_AT_END,
    TRIGGER,
    compile_patterns,
    full_scan,
)
from xtyserver.protocol.judged import Judged, judged, numerals_folded
from xtyserver.protocol.normalize import normalize, visible
from xtyserver.protocol.secret_match import matcher

__all__ = [
    "DEFAULT_PLACEHOLDERS",
    "KINDS",
    "TAIL_MAX",
    "Kind",
    "compile_patterns",
    "find_forbidden",
    "redact",
    "tail",
]

Kind = Literal[
    "path",
    "account_id",
    "api_key",
    "email",
    "process_id",
    "traceback",
    "log_line",
    "network_address",
    "machine_name",
    "phone",
    "id_card",
]

KINDS: Final[tuple[Kind, ...]] = get_args(Kind)  # in the order above

DEFAULT_PLACEHOLDERS: Final[Mapping[str, str]] = {
    "path": "[已隐去:路径]",
    "account_id": "[已隐去:账号]",
    "api_key": "[已隐去:密钥]",
    "email": "[已隐去:邮箱]",
    "process_id": "[已隐去:进程号]",
    "traceback": "[已隐去:堆栈]",
    "log_line": "[已隐去:日志]",
    "network_address": "[已隐去:网络地址]",
    "machine_name": "[已隐去:设备名]",
    "phone": "[已隐去:手机号]",
    "id_card": "[已隐去:证件号]",
}

_DIGIT_RUN: Final[re.Pattern[str]] = re.compile(r"[0-9]++")
_STEAM_PREFIX: Final = "7656119"
_ID_WEIGHTS: Final = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_VERSION_LABELS: Final = ("v", "ver", "version", "版本", "版本号")
_SECRET_MIN: Final = 8

# A replacement can change what surrounds the next candidate (a look-behind
# that failed next to the removed text may now succeed), so redaction repeats
# until nothing matches. In practice one or two passes; past this bound the
# whole text is replaced rather than risk letting anything through.
_MAX_PASSES: Final = 8

_Span = tuple[int, int, str]


def _valid(match: re.Match[str], kind: str | None, *span: int) -> bool:
    """Checks a pattern cannot make: checksums, versions, TLDs, squeezed keys."""
    text, start, end = match.string, match.start(), match.end()
    if match.re is STRICT and kind == "account_id":
        return not is_game_number(text, start, end)  # a seed in modelContext is game state
    if match.re is LONG_NUMBER:
        return not is_game_number(text, start, end)
    if match.re is HEX_NUMBER:
        return hex_digits_enough(match.group())
    if match.re is CUE_ID:
        return True
    if kind == "id_card_at":  # a span given by the caller (_joined_numbers)
        kind, (start, end) = "id_card", span
    if kind == "id_card":
        digits = text[start:end]
        total = sum(int(d) * w for d, w in zip(digits, _ID_WEIGHTS, strict=False))
        return "10X98765432"[total % 11] == digits[17].upper()
    if kind == "email" and match.group("loose_email") is not None:
        # A loose shape needs a mail provider's TLD, and a bare "at" a spelled dot.
        tld = TLD_AT_END.search(match.group())
        if tld is None or tld.group().casefold() not in MAIL_TLDS:
            return False
        at = match.group("loose_email")
        spelled_at = any(mark in at for mark in ("@", "艾特", "圈", "(", "[", "{", "<", "#"))
        return spelled_at or SPELLED_DOT.search(at) is not None
    if kind == "api_key" and match.group("spaced_key") is not None:
        squeezed = "".join(match.group().split())
        return PLAIN_KEY.fullmatch(squeezed) is not None
    if kind == "network_address" and match.group("mac_sep") is not None:
        if match.group("mac_sep") in ("", ".", "_", " "):
            pairs = match.group()
            return any(c.isdigit() for c in pairs) and any(c.isalpha() for c in pairs)
        return True
    if kind == "network_address" and "." in text[start:end]:
        before = text[max(0, start - 12) : start].rstrip(" :=.").casefold()
        for label in _VERSION_LABELS:
            if before.endswith(label):
                # An ASCII label is a whole word ("server 10.0.0.5" is an address).
                previous = before[: -len(label)][-1:]
                if not (label.isascii() and previous.isascii() and previous.isalpha()):
                    return False
    return True


def _scan(pattern: re.Pattern[str], text: str, out: list[_Span]) -> None:
    """Append every valid match of ``pattern`` in ``text``, leftmost first."""
    pos = 0
    while pos <= len(text):
        match = pattern.search(text, pos)
        if match is None:
            return
        start, end = match.start(), match.end()
        kind = match.lastgroup or _SHAPE_KINDS.get(match.re)
        if kind is not None and _valid(match, kind):
            out.append((start, end, kind))
            pos = max(end, start + 1)
        else:
            pos = start + 1


_SHAPE_KINDS: Final[dict[re.Pattern[str], str]] = {
    LONG_NUMBER: "account_id",
    HEX_NUMBER: "account_id",
    CUE_ID: "account_id",
}


def _coverage(named: list[_Span], size: int) -> bytearray:
    """1 at each position some ``named`` span covers."""
    covered = bytearray(size)
    reach = 0  # spans mostly follow one another: each position is marked about once
    for start, end, _ in sorted(named):
        begin = max(start, reach)
        if end > begin:
            covered[begin:end] = b"\x01" * (end - begin)
            reach = end
    return covered


def _covered(span: _Span, covered: bytearray, text: str) -> bool:
    """Whether every letter and digit of ``span`` lies in a named span."""
    start, end, _ = span
    return all(covered[i] for i in range(start, end) if text[i].isalnum())


@functools.lru_cache(maxsize=16)
def _encodings(secret: str) -> tuple[str, ...]:
    """``secret`` as typed, and as base64 (the standard alphabet and URL-safe) and hex."""
    raw = secret.encode("utf-8")
    b64 = base64.b64encode(raw).decode("ascii").rstrip("=")
    url = base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")
    return tuple(dict.fromkeys((secret, b64, url, raw.hex())))


def _decoded_base64(run: str) -> str | None:
    """The printable text a base64 run decodes to, or None."""
    if len(run) > BASE64_MAX:
        return None
    body = run.rstrip("=")
    if len(body) % 4 == 1:
        return None
    altchars = b"-_" if ("-" in body or "_" in body) else None
    if altchars and ("+" in body or "/" in body):
        return None
    try:
        raw = base64.b64decode(body + "=" * (-len(body) % 4), altchars=altchars, validate=True)
        decoded = raw.decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None
    if len(decoded) < 8 or not decoded.replace("\n", "").replace("\t", "").isprintable():
        return None
    return decoded


def _spans(
    judged: Judged,
    secrets: tuple[str, ...],
    *,
    depth: int = 0,
    carry: str = "",
    strict: bool = False,
) -> list[_Span]:
    """Every forbidden span of ``judged.text``, in its coordinates, by start."""
    text = judged.text
    out: list[_Span] = []
    if TRIGGER.search(text) is not None:
        combined, digits = full_scan()
        _scan(combined, text, out)
        joined = judged.digits_joined()[0]
        if joined != text:
            more: list[_Span] = []
            _scan(digits, joined, more)
            _joined_numbers(judged, more)
            out += [(*judged.joined_span(start, end), kind) for start, end, kind in more]
        if "7656" in joined:
            _split_steam_id(judged, joined, out)
        # Privacy by shape (forbidden_by_shape.py), on the numerals as digits (same length);
        # a shape whose letters and digits the named rules cover already adds nothing, and
        # would hide their kinds ("192.168.31.77、13812345678" is an address and a phone).
        folded = numerals_folded(text)
        shaped: list[_Span] = []
        for shape in (LONG_NUMBER, HEX_NUMBER, CUE_ID):
            _scan(shape, folded, shaped)
        if shaped:
            covered = _coverage(out, len(text))
            out += [span for span in shaped if not _covered(span, covered, text)]
        if depth == 0:
            for match in BASE64.finditer(text):
                decoded = _decoded_base64(match.group())
                inner = (
                    [] if decoded is None else _spans(Judged(visible(decoded)), secrets, depth=1)
                )
                if inner:
                    out.append((match.start(), match.end(), inner[0][2]))
                elif looks_random(match.group()):  # a generated key, whatever it decodes to
                    out.append((match.start(), match.end(), "api_key"))
        if strict:  # last: a span the other rules name keeps their kind (sort is stable)
            _scan(STRICT, numerals_folded(text), out)
    known: list[_Span] = []  # first: a known secret names a span a shape finds too
    for secret in secrets:
        if len(secret) < _SECRET_MIN:
            continue
        # Spaced, dashed, upper-cased, reversed or in pieces (secret_match.py), and
        # encoded: base64, base64url and hex.
        for form in _encodings(secret):
            known += [(a, b, "api_key") for a, b in matcher(form).spans(text, carry)]
    out = known + out
    out.sort(key=lambda span: span[0])
    return out


# A Steam id, phone or id card number among joined digit groups: it may end
# where a separator was removed ("7656、1198、0123、4567、8、5": the ", 5" is the
# next number), so its ends are judged by the groups, not by the digits after.
_GROUPED: Final[re.Pattern[str]] = re.compile(
    r"(?=(?P<account_id>7656119[0-9]{10})|(?P<phone>1[3-9][0-9]{9})"
    r"|(?P<id_card>[1-9][0-9]{5}(?:18|19|20)[0-9]{2}(?:0[1-9]|1[0-2])"
    r"(?:0[1-9]|[12][0-9]|3[01])[0-9]{3}[0-9Xx]))"
)


def _joined_numbers(judged: Judged, out: list[_Span]) -> None:
    """Numbers of the joined text that start and end at a group's edge (see above)."""
    joined, at, _ = judged.digits_joined()
    edges = set(at)
    for match in _GROUPED.finditer(joined):
        kind = match.lastgroup
        assert kind is not None
        start, end = match.span(kind)
        if not (start in edges or start == 0 or not joined[start - 1].isdigit()):
            continue
        if not (end in edges or end == len(joined) or not joined[end].isalnum()):
            continue
        if kind == "id_card" and not _valid(match, "id_card_at", start, end):
            continue
        out.append((start, end, kind))


def _split_steam_id(judged: Judged, joined: str, out: list[_Span]) -> None:
    """A SteamID64 written as two digit runs of one message: both runs."""
    runs = [(m.start(), m.end()) for m in _DIGIT_RUN.finditer(joined)]
    for (a1, b1), (a2, b2) in itertools.pairwise(runs):
        if b1 - a1 < 4 or b2 - a2 < 4 or (b1 - a1) + (b2 - a2) != 17:
            continue
        if (joined[a1:b1] + joined[a2:b2]).startswith(_STEAM_PREFIX):
            out.append((*judged.joined_span(a1, b1), "account_id"))
            out.append((*judged.joined_span(a2, b2), "account_id"))


def find_forbidden(
    text: str,
    *,
    secrets: tuple[str, ...] = (),
    ignore: frozenset[str] = frozenset(),
    strict: bool = False,
) -> Kind | None:
    """Return the kind of the leftmost forbidden match in ``text``'s judged form, or None.

    Args:
        secrets: Strings that must not appear either (the adapter token), as ``api_key``.
        ignore: Kinds not to report (``adapter.version`` is never an IPv4 address).
        strict: Also refuse what a modelContext string never holds (:data:`STRICT`).
    """
    if not (text.isascii() and text.isprintable()):
        text = visible(text)
    elif not secrets and TRIGGER.search(text) is None:
        # Printable ASCII is its own judged form; a modelContext has dozens
        # of short strings.
        return None
    judge = Judged(text, mapped=False)
    spans = [span for span in _spans(judge, secrets, strict=strict) if span[2] not in ignore]
    if not spans:
        return None
    kind: Kind = spans[0][2]  # type: ignore[assignment]
    return kind


def _check_placeholders(placeholders: Mapping[str, str]) -> None:
    missing = [kind for kind in KINDS if kind not in placeholders]
    if missing:
        raise UsageError(f"placeholders missing for kinds: {', '.join(missing)}")
    values = [placeholders[kind] for kind in KINDS]
    if any(normalize(value) != value or judged(value) != value for value in values):
        # A placeholder is inserted into the kept text; one that judging would
        # change could make the result judge differently a second time.
        raise UsageError('a placeholder is not in normal form (v1.md "Normalisation")')
    for first in values:
        for second in values:
            if find_forbidden(first + second) is not None:
                raise UsageError("a placeholder itself looks like forbidden content")


def _kept_spans(kept: str, secrets: tuple[str, ...], carry: str = "") -> list[_Span]:
    """The forbidden spans of ``kept`` in its own coordinates, merged, by start."""
    judge = Judged(kept)
    merged: list[list[Any]] = []
    for start, end, kind in _spans(judge, secrets, carry=carry):
        k_start, k_end = judge.kept_span(start, end)
        if merged and k_start < merged[-1][1]:
            # Overlapping finds are one placeholder, named after the longer one.
            if k_end - k_start > merged[-1][1] - merged[-1][0]:
                merged[-1][2] = kind
            merged[-1][1] = max(merged[-1][1], k_end)
        else:
            merged.append([k_start, k_end, kind])
    return [(a, b, k) for a, b, k in merged]


# A message that ends a path unfinished (a drive, a separator), or one that starts
# with a separator: only then are the two judged as one text.
_OPEN_END: Final[re.Pattern[str]] = re.compile(r"(?:[A-Za-z]:|[\\/]|盘)\s{0,2}$")
_OPEN_START: Final[re.Pattern[str]] = re.compile(r"^\s{0,2}[\\/]")
TAIL_MAX: Final = 64


def tail(text: str) -> str:
    """What :func:`redact`'s ``before`` keeps of a message: its last characters, as kept."""
    return visible(text)[-TAIL_MAX:]


def _completed(
    kept: str,
    before: str,
    placeholders: Mapping[str, str],
    secrets: tuple[str, ...],
    found: list[str],
) -> str:
    """``kept`` with the part of a span begun in ``before`` (a path) redacted."""
    if not (_OPEN_END.search(before) or _OPEN_START.search(kept)):
        return kept
    cut = len(before)
    for start, end, kind in _kept_spans(before + kept, secrets):
        if start < cut < end:  # begun in the message before, completed in this one
            if kind not in found:
                found.append(kind)
            return placeholders[kind] + kept[end - cut :]
    return kept


def redact(
    text: str,
    *,
    placeholders: Mapping[str, str] = DEFAULT_PLACEHOLDERS,
    secrets: tuple[str, ...] = (),
    carry: str = "",
    before: str = "",
) -> tuple[str, list[str]]:
    """Replace every forbidden span of ``text`` with a placeholder; keep the rest.

    Spans found in the judged form are mapped back to the kept text (``text``
    without its invisible characters); the rest stays as typed. The result never
    contains a match of :func:`find_forbidden`, and redacting it again changes nothing.

    Args:
        placeholders: Replacement text per kind (every kind of :data:`KINDS`
            required, each in normal form).
        secrets: Strings redacted as ``api_key`` however spelled (the adapter
            token); shorter than 8 characters ignored.
        carry: The skeleton of the player's messages just before this one
            (:func:`~xtyserver.protocol.secret_match.skeleton`): a secret typed
            in pieces over consecutive messages is found once its pieces add up.
        before: The end of the player's message just before this one (see
            :func:`tail`): a path begun there and completed here ("在 C:\\Users\\",
            then "zhangwei\\Documents") is judged whole, and its part here redacted.

    Returns the kept, redacted text and the distinct kinds found, first seen first.

    Raises:
        UsageError: A custom placeholder is missing, not in normal form, or
            itself looks forbidden.
    """
    if placeholders is not DEFAULT_PLACEHOLDERS:
        _check_placeholders(placeholders)
    found: list[str] = []
    kept = visible(text)
    if before:
        kept = _completed(kept, before, placeholders, secrets, found)
    if not secrets and kept.isascii() and TRIGGER.search(kept) is None:
        return kept, found
    for _ in range(_MAX_PASSES):
        spans = _kept_spans(kept, secrets, carry)
        if not spans:
            return kept, found
        parts: list[str] = []
        last = 0
        for start, end, kind in spans:
            if kind not in found:
                found.append(kind)
            parts.append(kept[last:start])
            parts.append(placeholders[kind])
            last = end
        parts.append(kept[last:])
        kept = "".join(parts)
    # Only a contrived chain of abutting matches gets here; fail closed.
    spans = _kept_spans(kept, secrets)
    if spans:
        kind = spans[0][2]
        if kind not in found:
            found.append(kind)
        return placeholders[kind], found
    return kept, found


# A saveId that is one hash in hex (or a UUID): what a mod's own derivation makes.
_HEX_HASH: Final = re.compile(r"[0-9a-f]+(?:-[0-9a-f]+)*", re.IGNORECASE)
# Steam64 in hex (0x0110000100000000 + the 32-bit account id) and in decimal (7656119...).
_STEAM_ID: Final = re.compile(r"1100001[0-9a-f]{8}|7656119", re.IGNORECASE)


def save_id_forbidden(save_id: str) -> Kind | None:
    """The kind of forbidden content in a saveId, or None (the decoder and the store ask).

    A derived saveId may be twelve hex digits: an id, never a MAC address. A whole hex
    hash is not an account id by its shape (privacy by shape flags long hex runs in what
    players type); a Steam id inside it still is, in hex or in decimal.
    """
    opaque = _HEX_HASH.fullmatch(save_id) is not None and not _STEAM_ID.search(save_id)
    ignore = {"network_address", "account_id"} if opaque else {"network_address"}
    return find_forbidden(save_id, ignore=frozenset(ignore))


def install_id_forbidden(install_id: str) -> Kind | None:
    """The kind of forbidden content in an ``installId`` (v1.md "Keys per install"), or None.

    Made at random (32 hex digits or a UUID), it is judged as a saveId is, and more strictly:
    digits alone are a number (a Steam, QQ or phone number), never a random id, and a Steam id
    in hex or decimal anywhere in it is refused.
    """
    if install_id.replace("-", "").isdigit() or _STEAM_ID.search(install_id):
        return "account_id"
    return save_id_forbidden(install_id)
