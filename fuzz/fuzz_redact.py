"""atheris harness over forbidden-content detection and redaction (v1.md "Forbidden content").

Contract checked for every input text (``xtyserver.protocol.forbidden``):

- ``redact`` returns the kept text (v1.md "Normalisation": only invisible
  characters removed, the rest as typed) in which ``find_forbidden`` finds
  nothing;
- redacting the result again changes nothing and reports no kinds (idempotent);
- the kinds reported are distinct known kinds, the first being what
  ``find_forbidden`` reports for the input; clean input comes back without its
  invisible characters and otherwise unchanged;
- the input and its normal form get the same verdict (a look-alike is judged
  as its plain form);
- nothing but those return values comes out (no exception for any text).

Input format: the first byte picks how the rest becomes a ``str``. Mode 0 (and
any mode with bits 0-1 clear): UTF-8, undecodable bytes replaced by U+FFFD.
Bit 0 set: UTF-16-LE with lone surrogates allowed, so every code point (and
broken surrogate pairs) can be reached. Bit 1 set (bit 0 clear): every byte
picks one fragment of :data:`FRAGMENTS` (secret prefixes, separators, digit and
letter runs, placeholders), so the fuzzer combines abutting and overlapping
matches quickly even though the regex engine itself gives it no coverage.
An empty input is the empty string. Run it (see fuzz/README.md)::

    python fuzz/fuzz_redact.py fuzz/findings/corpus/redact fuzz/corpus/redact -dict=fuzz/redact.dict
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from xtyserver.protocol.forbidden import DEFAULT_PLACEHOLDERS, KINDS, find_forbidden, redact
from xtyserver.protocol.normalize import normalize, visible

FRAGMENTS = (
    *"\\/:.@-_~%$=[]{}()\"' \t\n",
    "\u3000",
    "\u00a0",
    "，",
    "。",
    "：",
    "a",
    "Z",
    "ann",
    "Users",
    "home",
    "AppData",
    "0",
    "7",
    "12345",
    "1234567890",
    "7656119",
    "76561198012345678",
    "C:",
    "C:\\",
    "D:/",
    "%5C",
    "%2F",
    "%3A",
    "\\\\",
    "/home/",
    "/Users/",
    "~/",
    "file://",
    "%APPDATA%",
    "$HOME",
    "${HOME}",
    "$env:TEMP",
    "STEAM_0:1:",
    "[U:1:",
    "]",
    "steam:1100001",
    "steamid=",
    "steamcommunity.com/id/",
    "sk-",
    "sk-proj-",
    "sk_live_",
    "ghp_",
    "github_pat_",
    "xoxb-",
    "hf_",
    "glpat-",
    "AKIA",
    "AIza",
    "eyJ",
    "-----BEGIN PRIVATE KEY-----",
    "Bearer ",
    "api_key=",
    "token: ",
    "secret=",
    "password=",
    "abcdefghij",
    "ABCDEFGHIJKLMNOP",
    "0123456789abcdef",
    ".com",
    ".co.uk",
    "example",
    "https://",
    "http://x/",
    *DEFAULT_PLACEHOLDERS.values(),
    "已隐去",
    # Look-alikes that normalisation removes or folds.
    "\u200b",
    "\u200d",
    "\u2060",
    "\ufeff",
    "\u202e",
    "\u2066",
    "\u00ad",
    "\u3164",
    "＼",
    "＠",
    "７",
    "ｓｋ－",
    "Ｃ：＼",
    # Process ids, stacks and log lines.
    "pid=",
    "PID: ",
    "进程",
    "4242",
    "Traceback (most recent call last):",
    'File "',
    '", line 3',
    ", in <module>",
    "stack traceback:",
    "at A.B(",
    ")",
    " in ",
    ":line 12",
    "[ERROR]",
    "ERROR:",
    "2026-11-30 12:00:01,123 WARNING ",
    "[12:00:01 ERROR SMAPI]",
    # Round three: other scripts' digits, look-alike letters, spelled e-mails,
    # Chinese paths, digit groups, labels, machine names, base64.
    "٧٦٥٦١١٩٨",
    "७६५६",
    "о",  # Cyrillic o
    "ѕk-",
    "Α",  # Greek capital alpha
    " [at] ",
    " [dot] ",
    "(at)",
    "盘/",
    "用户\\",
    "此电脑 > ",
    " > ",
    "//NAS/",
    "S-1-5-21-",
    "DESKTOP-",
    "7KQ2M3P",
    "192.168.",
    "00:1A:",
    "138",
    "1234 5678",
    "11010519491231002X",
    "QQ",
    "微信",
    "wxid_",
    "QzpcVXNlcnNc",
    "…",
    "～",
    "㍿",
    "e\u0301",
)
"""Pieces the fragment mode joins (index = byte value modulo the length)."""


def text_of(data: bytes) -> str:
    """Turn a fuzzer input into the text under test (format in the module docstring)."""
    if not data:
        return ""
    mode, body = data[0], data[1:]
    if mode & 1:
        return body[: len(body) & ~1].decode("utf-16-le", "surrogatepass")
    if mode & 2:
        return "".join(FRAGMENTS[b % len(FRAGMENTS)] for b in body)
    return body.decode("utf-8", "replace")


def seed_of(text: str, *, utf16: bool = False) -> bytes:
    """The fuzzer input that stands for ``text`` in UTF-8 or UTF-16 mode (for corpus seeds)."""
    if utf16:
        return b"\x01" + text.encode("utf-16-le", "surrogatepass")
    return b"\x00" + text.encode("utf-8", "surrogatepass")


def test_one_input(data: bytes) -> None:
    """Check the redaction contract on one input (the libFuzzer entry point)."""
    text = text_of(data)
    first = find_forbidden(text)
    assert first is None or first in KINDS, first

    redacted, kinds = redact(text)
    assert isinstance(redacted, str)
    assert len(set(kinds)) == len(kinds), f"kinds repeated: {kinds}"
    assert set(kinds) <= set(KINDS), kinds
    leftover = find_forbidden(redacted)
    assert leftover is None, f"{leftover} survives redaction: {redacted!r} (from {text!r})"
    assert visible(redacted) == redacted, f"invisible characters kept: {redacted!r}"
    assert find_forbidden(normalize(text)) == first, f"look-alike judged apart: {text!r}"
    if first is None:
        clean = visible(text)
        assert redacted == clean and kinds == [], f"clean text changed: {text!r} -> {redacted!r}"
    else:
        assert kinds and kinds[0] == first, (kinds, first)

    again, again_kinds = redact(redacted)
    assert again == redacted and again_kinds == [], f"not idempotent: {redacted!r} -> {again!r}"


def main() -> None:
    """Run under libFuzzer; arguments are libFuzzer's (corpus dirs, -max_total_time=...)."""
    import atheris

    atheris.instrument_all()
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
