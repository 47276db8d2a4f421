"""Detect and redact what must never leave the player's machine.

Text is judged in its normal form (``protocol/v1.md`` "Normalisation"):
:func:`find_forbidden` and :func:`redact` first apply
:func:`~xtyserver.protocol.normalize.normalize`, so a full-width
``Ｃ：＼Ｕｓｅｒｓ``, a Steam id in full-width digits or an e-mail with a
zero-width space inside is judged as its plain form, and :func:`redact`
returns the normalised text.

Seven kinds of content are looked for (``protocol/v1.md`` "Forbidden content"):

- ``path``: Windows drive paths (``C:\\...``, ``D:/...``, also URL-encoded), UNC
  paths (``\\\\server\\share``), home and system directories (``/home/<user>``,
  ``/Users/<user>``, ``~/...``, ``\\Users\\...``), ``file://`` URLs and
  environment-variable paths (``%USERPROFILE%``, ``%APPDATA%``, ``$HOME``).
- ``account_id``: Steam ids (17-digit ``7656119...``, ``STEAM_0:1:123``,
  ``[U:1:123]``, ``steam:1100001...``, ``steamid=...``, community profile URLs).
- ``api_key``: ``sk-...`` style keys (OpenAI, Anthropic, DeepSeek, ...), bearer
  tokens, AWS ``AKIA...``, Google ``AIza...``, GitHub, Slack, Hugging Face,
  Stripe, JWTs, PEM private keys and ``key=``/``token=``/``secret=`` values that
  look generated (20+ characters mixing letters and digits).
- ``email``: e-mail addresses.
- ``process_id``: a number right after ``pid``, ``PID``, ``process id``,
  ``进程ID``/``进程号`` (any number) or a bare ``进程`` (three digits or more).
- ``traceback``: a Python traceback (``Traceback (most recent call last):``,
  its ``File "...", line N`` frames and exception line), a Python frame line on
  its own, a Lua ``stack traceback:`` block, .NET and Java ``at A.B(...)``
  frames (with .NET's ``in <file>:line N``).
- ``log_line``: a whole line that starts like a log line: a level in brackets
  (``[ERROR]``, ``[Warning]``, ``[INF]``), a timestamp with a level
  (``2026-11-30 12:00:01,123 WARNING``, SMAPI's ``[12:00:01 ERROR SMAPI]``),
  Don't Starve Together's ``[00:01:23]:``, or an upper-case level and a colon
  (``ERROR:``).

Everything is one combined regular expression, compiled once at import. Every
quantifier that can be followed by something that may fail is bounded or
possessive and each alternative may only start at the beginning of a token (a
look-behind) or with a literal word, so a scan is linear in the length of the
text: no input can make it backtrack catastrophically.

Known limits (by design, to keep in-game text intact): a path segment after a
space is only taken as part of the path when it is followed by another
separator (``C:\\Users\\Ann Lee`` leaves ``Lee``); bare user names, bare
numbers that merely might be ids, and keys shorter than 16 characters are not
detected; a log level in mixed case without brackets (``Error: ...``) is the
player's own words, not a log line. Look-alikes that normalisation does not fold
(Cyrillic letters that look Latin, the ideographic full stop ``。`` in place of
a dot) are not recognised.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final, Literal

from xtyserver.errors import UsageError
from xtyserver.protocol.normalize import normalize

__all__ = [
    "DEFAULT_PLACEHOLDERS",
    "KINDS",
    "Kind",
    "find_forbidden",
    "redact",
]

Kind = Literal["path", "account_id", "api_key", "email", "process_id", "traceback", "log_line"]

KINDS: Final[tuple[Kind, ...]] = (
    "path",
    "account_id",
    "api_key",
    "email",
    "process_id",
    "traceback",
    "log_line",
)

DEFAULT_PLACEHOLDERS: Final[Mapping[str, str]] = {
    "path": "[已隐去:路径]",
    "account_id": "[已隐去:账号]",
    "api_key": "[已隐去:密钥]",
    "email": "[已隐去:邮箱]",
    "process_id": "[已隐去:进程号]",
    "traceback": "[已隐去:堆栈]",
    "log_line": "[已隐去:日志]",
}

# Characters that end a path: whitespace, quotes, characters Windows forbids in
# names, and the CJK punctuation that survives normalisation, so that a path
# inside a Chinese sentence does not swallow the rest of it.
_PATH_STOP = r"\s\"'<>|*?。、「」『』【】《》"
# Full-width ，：；！（） become ASCII under NFKC; they end a path only when a
# non-ASCII character follows (Chinese text after Chinese punctuation) and stay
# part of it otherwise ("Program Files (x86)", "a,b.txt").
_PATH_SOFT = r",:;!()"


def _path_run(stop: str) -> str:
    """One path character other than ``stop``, soft stops handled (see above).

    Runs of plain path characters are taken possessively: what follows a run
    always starts with a character the run cannot hold, so giving some back
    could never help a match, and forbidding it keeps the scan linear.
    """
    return rf"(?:[^{stop}{_PATH_SOFT}]++|[{_PATH_SOFT}](?![^\x00-\x7f]))"


_PATH_RUN = _path_run(_PATH_STOP)
_SEGMENT_RUN = _path_run(_PATH_STOP + r"\\/")
_PATH_BODY = (
    rf"{_PATH_RUN}*+"
    # Segments after spaces ("C:\Program Files (x86)\Steam"): taken only when
    # a separator follows within three words, so "C:\a is here" keeps "is here".
    rf"(?:(?:\x20{_SEGMENT_RUN}{{1,64}}){{1,3}}[\\/]{_PATH_RUN}*+){{0,16}}"
)
_SEP = r"(?:[\\/]|%5[Cc]|%2[Ff])"

_ENV_NAMES = (
    r"USERPROFILE|APPDATA|LOCALAPPDATA|HOMEPATH|HOMEDRIVE|HOMESHARE|USERNAME|USERDOMAIN"
    r"|TEMP|TMP|PROGRAMDATA|PROGRAMFILES(?:\(X86\))?|ONEDRIVE\w{0,32}|PUBLIC"
    r"|SYSTEMROOT|WINDIR|SYSTEMDRIVE|ALLUSERSPROFILE"
)
_UNIX_ROOTS = r"home|Users|root|tmp|var|etc|usr|opt|mnt|media|private|Volumes|srv|run|proc"

_PATH = "|".join(
    [
        # Windows drive path; not after a letter/digit so "https://" and "08:10" pass.
        rf"(?<![A-Za-z0-9])[A-Za-z](?::|%3[Aa]){_SEP}{_PATH_BODY}",
        # UNC path \\server\share (also JSON-escaped, with doubled backslashes).
        rf"(?<!\\)\\{{2,}}[A-Za-z0-9$][A-Za-z0-9._$-]{{0,62}}\\+[^{_PATH_STOP}\\/]{_PATH_BODY}",
        # Drive-less Windows profile path.
        rf"(?<![A-Za-z0-9._\\-])\\+(?i:Users|Documents and Settings)\\+[^{_PATH_STOP}\\/]"
        rf"{_PATH_BODY}",
        # file:// URL.
        rf"(?i:file:/{{2,3}})[^{_PATH_STOP}]{_PATH_BODY}",
        # Absolute Unix path under a well-known root; not inside a URL path
        # ("https://host/home/x" has a letter before the slash).
        rf"(?<![A-Za-z0-9._~-])/(?i:{_UNIX_ROOTS})/[^{_PATH_STOP}/]{_PATH_BODY}",
        # Home-relative path: ~/x, ~user/x.
        rf"(?<![A-Za-z0-9._~/-])~(?:[A-Za-z_][A-Za-z0-9_.-]{{0,31}})?[\\/]{_PATH_BODY}",
        # Environment-variable paths.
        rf"%(?i:{_ENV_NAMES})%{_PATH_BODY}",
        rf"(?<![A-Za-z0-9_$])\$(?i:env:(?:{_ENV_NAMES})|\{{?HOME\}}?(?![A-Za-z0-9_]))"
        rf"{_PATH_BODY}",
    ]
)

_ACCOUNT_ID = "|".join(
    [
        # SteamID64: individual accounts all start 7656119 and have 17 digits.
        r"(?<![0-9])7656119[0-9]{10}(?![0-9])",
        # SteamID2 and SteamID3.
        r"(?<![A-Za-z0-9])(?i:STEAM)_[0-5]:[01]:[0-9]{1,10}(?![0-9])",
        r"\[[UuIiGgAa]:[01]:[0-9]{1,10}\]",
        # FiveM-style hex SteamID64 (0x110000100000000 + account).
        r"(?<![A-Za-z0-9])(?i:steam:1100001[0-9a-f]{8})(?![0-9A-Za-z])",
        # Labelled ids: steamid=123456, steam_id: 123456.
        r"(?<![A-Za-z0-9])(?i:steam[_ -]?id[0-9]{0,2})\s{0,3}[:=]\s{0,3}[0-9]{5,20}(?![0-9])",
        r"(?i:steamcommunity\.com/(?:id|profiles)/)[A-Za-z0-9_-]{1,64}",
        # "steam" and a number with the SteamID64 prefix, even of a wrong length
        # (a digit mistyped or doubled still points at the account).
        r"(?<![A-Za-z0-9])(?i:steam)(?:[ _-]?(?i:id))?[\s:=#]{0,4}7656119[0-9]{8,13}(?![0-9])",
    ]
)

_KEYCHARS = r"A-Za-z0-9_-"
_API_KEY = "|".join(
    [
        # sk-..., sk-proj-..., sk-ant-api03-..., sk-or-v1-..., DeepSeek sk-<hex>.
        rf"(?<![{_KEYCHARS}])sk-[{_KEYCHARS}]{{16,}}",
        # Stripe-style and other prefixed keys.
        r"(?<![A-Za-z0-9_-])(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",
        r"(?<![A-Za-z0-9_-])gh[pousr]_[A-Za-z0-9]{30,}",
        r"(?<![A-Za-z0-9_-])github_pat_[A-Za-z0-9_]{22,}",
        r"(?<![A-Za-z0-9_-])xox[abposr]-[A-Za-z0-9-]{10,}",
        r"(?<![A-Za-z0-9_-])hf_[A-Za-z0-9]{30,}",
        r"(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,}",
        r"(?<![A-Za-z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}(?![A-Za-z0-9])",
        r"(?<![A-Za-z0-9_-])AIza[A-Za-z0-9_-]{35}",
        # JWT (header.payload.signature).
        r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        r"-----BEGIN [A-Z ]{0,32}PRIVATE KEY-----",
        # Bearer tokens: "Bearer <token>" with a token-like value.
        r"(?<![A-Za-z0-9])(?i:bearer)\s{1,8}[A-Za-z0-9._~+/=-]{16,}",
        # key=value / token: value / "secret": "value" where the value looks
        # generated: 20+ characters, at least one letter and one digit.
        r"(?<![A-Za-z0-9])(?i:(?:api[_-]?|access[_-]?|secret[_-]?|private[_-]?)?key|apikey"
        r"|(?:access[_-]?|auth[_-]?|refresh[_-]?)?token|secret|passw(?:or)?d|pwd|credentials?)"
        r"[\"']?\s{0,3}[:=]\s{0,3}[\"']?"
        r"(?=[A-Za-z0-9_./+=-]{0,255}[0-9])(?=[A-Za-z0-9_./+=-]{0,255}[A-Za-z])"
        r"[A-Za-z0-9_./+=-]{20,}",
    ]
)

_EMAIL = (
    # The local part may only start where a run of local-part characters
    # starts, so a long run without "@" is scanned once, not once per character.
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@"
    r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?){0,8}\.[A-Za-z]{2,24}(?![A-Za-z0-9-])"
)

# -- raw logs and crash stacks ------------------------------------------------

# A number is a process id only right after a label that says so, and not a
# decimal, a percentage or a fraction. A bare 进程 ("process", but also
# "progress": 游戏进程) needs three digits, as real process ids have.
_PID_SEP = r"\s{0,3}(?:[:=#]|(?i:is)(?![A-Za-z])|是|为)?\s{0,3}"
_PROCESS_ID = (
    r"(?:(?<![A-Za-z0-9_])(?i:p?pid|process[ _-]?id)|进程\s{0,3}(?i:id|号|编号))"
    rf"{_PID_SEP}[0-9]{{1,10}}(?![0-9%/]|\.[0-9])"
    rf"|进程{_PID_SEP}[0-9]{{3,10}}(?![0-9%/]|\.[0-9])"
)

_PY_FRAME = r'File "[^"\n]{1,1024}", line [0-9]{1,9}(?:, in [^\s,]{1,256})?'
_TRACEBACK = "|".join(
    [
        # Python: the header, its frames (each maybe followed by its indented
        # source line) and the exception line; also pasted onto one line. The
        # indent is possessive so that a frame line without a source line
        # before it is read as the next frame, not as a source line.
        r"Traceback \(most recent call last\):"
        rf"(?:\s{{0,16}}{_PY_FRAME}(?:\n[ \t]++(?!File \")[^\n]{{0,1024}})?){{0,256}}"
        r"(?:\s{1,16}[A-Za-z_][\w.]{0,128}(?:Error|Exception|Exit|Interrupt|Warning)\b[^\n]{0,1024})?",
        # A Python frame line on its own (part of a stack pasted).
        rf"(?<![A-Za-z0-9_]){_PY_FRAME}",
        # Lua (Don't Starve Together): "stack traceback:", the rest of its line
        # and the indented lines below it.
        r"(?i:stack traceback):[^\n]{0,1024}(?:\n[ \t]+[^\n]{0,1024}){0,256}",
        # .NET and Java frames: "at Name.Space.Method(args)", with .NET's
        # " in C:\\...\\File.cs:line 12". A dotted name and the parentheses are
        # required, so "meet at Pierre's (9am)" is prose.
        r"(?<![A-Za-z0-9_])at\s{1,4}[A-Za-z_$<][\w$<>`+/]{0,256}\.[\w$<>`+/.\[\],]{1,512}"
        r"\([^()\n]{0,512}\)(?:\s{1,4}in\s{1,4}[^\n]{1,1024}?:line\s{1,4}[0-9]{1,9})?",
    ]
)

# A log line: from the start of a line, a level in brackets, a timestamp with a
# level, or an upper-case level and a colon, then the whole line.
_LEVELS = r"TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|CRITICAL|FATAL|SEVERE|ALERT|EMERG"
# Bracketed levels may be in any case and abbreviated (Serilog's [INF], [WRN]).
_LEVEL_IN_BRACKETS = rf"\[(?i:{_LEVELS}|ERR|CRIT|INF|WRN|DBG|FTL|VRB|EXCEPTION)\]"
_BARE_LEVEL = rf"(?<![A-Za-z])(?:{_LEVELS})(?![A-Za-z])"
_TIME = r"[0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]{1,9})?"
_DATE = r"[0-9]{4}[-/.][0-9]{2}[-/.][0-9]{2}"
_DATE_TIME = rf"{_DATE}[ T]{_TIME}(?:Z|[+-][0-9]{{2}}:?[0-9]{{2}})?"
_LOG_LINE = (
    r"(?<![^\n])[ \t]*(?:"
    + "|".join(
        [
            _LEVEL_IN_BRACKETS,
            # SMAPI (Stardew): [12:00:01 ERROR SMAPI]; Serilog: [12:00:01 INF].
            rf"\[{_TIME}\s{{1,4}}(?i:{_LEVELS}|ERR|INF|WRN|DBG|FTL|VRB)\b[^\]\n]{{0,64}}\]",
            # Don't Starve Together: [00:01:23]: message.
            rf"\[{_TIME}\]:",
            # 2026-11-30 12:00:01,123 WARNING ..., [2026-11-30 12:00:01.000] [1] [ERR] ...
            rf"\[?{_DATE_TIME}\]?[^\n]{{0,64}}?(?:{_BARE_LEVEL}|{_LEVEL_IN_BRACKETS})",
            rf"{_TIME}\s{{1,4}}{_BARE_LEVEL}",
            # ERROR: ..., WARNING - ... (Python logging's default format).
            rf"(?:{_LEVELS})(?::|\s-\s)",
        ]
    )
    + r")[^\n]*"
)

# Order matters only for matches starting at the same position: a path that
# contains an e-mail or key is redacted whole as a path.
_COMBINED: Final[re.Pattern[str]] = re.compile(
    f"(?P<path>{_PATH})|(?P<account_id>{_ACCOUNT_ID})|(?P<api_key>{_API_KEY})|(?P<email>{_EMAIL})"
    f"|(?P<process_id>{_PROCESS_ID})|(?P<traceback>{_TRACEBACK})|(?P<log_line>{_LOG_LINE})",
)

# A superset of _COMBINED, cheap to search: every alternative above needs one
# of these characters or literals somewhere in the text (a Unix path needs "/",
# an e-mail "@", a drive path or a labelled key a ":" after a letter, a log
# line "[", "-", "LEVEL:" or a time with seconds, a Python frame '"', a .NET or
# Java frame "at ", a process id its label, ...). Most in-game strings, clock
# times such as "08:10" included, contain none, so they skip the big scan.
# Every alternative starts with a literal or a character set, which the regex
# engine skips over quickly; a look-behind comes after its literal for that
# reason.
_TRIGGER: Final[re.Pattern[str]] = re.compile(
    r"""[\\/%$~@_=\["-]|:(?<![0-9]:)|:[0-9]{2}:|7656119"""
    r"|A(?:KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA|Iza)|eyJ|[Bb](?i:earer)|[Pp](?i:id|rocess)|进程|at\s"
    # A labelled Steam id whose label ends in a digit ("steamid64:123...") has no
    # other trigger: its colon follows a digit, like a clock time's.
    r"|[Ss](?i:team)"
)

# A replacement can change what surrounds the next candidate (a look-behind
# that failed next to the removed text may now succeed), so redaction repeats
# until nothing matches. In practice one or two passes; past this bound the
# whole text is replaced rather than risk letting anything through.
_MAX_PASSES: Final = 8


def find_forbidden(text: str) -> Kind | None:
    """Return the kind of the first forbidden match in normalised ``text``, or None.

    Args:
        text: Any string a peer sent; it is normalised before it is judged.

    Returns:
        One of :data:`KINDS` for the leftmost match, or None when the text is
        clean.
    """
    if not (text.isascii() and text.isprintable()):
        # Inlined fast path of normalize(): printable ASCII is already normal,
        # and a modelContext has dozens of short strings.
        text = normalize(text)
    if _TRIGGER.search(text) is None:
        return None
    match = _COMBINED.search(text)
    if match is None:
        return None
    kind: Kind = match.lastgroup  # type: ignore[assignment]
    return kind


def _check_placeholders(placeholders: Mapping[str, str]) -> None:
    missing = [kind for kind in KINDS if kind not in placeholders]
    if missing:
        raise UsageError(f"placeholders missing for kinds: {', '.join(missing)}")
    values = [placeholders[kind] for kind in KINDS]
    if any(normalize(value) != value for value in values):
        # A placeholder is inserted into normalised text; one that normalisation
        # would change could make the result judge differently a second time.
        raise UsageError('a placeholder is not in normal form (v1.md "Normalisation")')
    for first in values:
        for second in values:
            if _COMBINED.search(first + second) is not None:
                raise UsageError("a placeholder itself looks like forbidden content")


def redact(
    text: str, *, placeholders: Mapping[str, str] = DEFAULT_PLACEHOLDERS
) -> tuple[str, list[str]]:
    """Normalise ``text``, then replace every forbidden match with a placeholder.

    The result is in normal form, never contains a match of
    :func:`find_forbidden`, and redacting it again changes nothing.

    Args:
        text: Any string, typically the player's chat text.
        placeholders: Replacement text per kind (every kind of :data:`KINDS`
            required, each in normal form). The defaults are Chinese, e.g.
            ``[已隐去:路径]``.

    Returns:
        The normalised, redacted text and the distinct kinds found, in order of
        first appearance (empty when nothing was redacted).

    Raises:
        UsageError: A custom placeholder is missing, not in normal form, or
            itself looks forbidden.
    """
    if placeholders is not DEFAULT_PLACEHOLDERS:
        _check_placeholders(placeholders)
    found: list[str] = []
    text = normalize(text)
    if _TRIGGER.search(text) is None:
        return text, found

    def replace(match: re.Match[str]) -> str:
        kind = match.lastgroup or "path"
        if kind not in found:
            found.append(kind)
        return placeholders[kind]

    for _ in range(_MAX_PASSES):
        text, count = _COMBINED.subn(replace, text)
        if count == 0 or _COMBINED.search(text) is None:
            return text, found
    # Only a contrived chain of abutting matches gets here; fail closed.
    match = _COMBINED.search(text)
    if match is not None:
        replace(match)
        return placeholders[match.lastgroup or "path"], found
    return text, found
