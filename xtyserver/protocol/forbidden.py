"""Detect and redact what must never leave the player's machine.

Four kinds of content are looked for (``protocol/v1.md`` "Forbidden content"):

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

Everything is one combined regular expression, compiled once at import. Every
quantifier that can be followed by something that may fail is bounded and each
alternative may only start at the beginning of a token (a look-behind), so a
scan is linear in the length of the text: no input can make it backtrack
catastrophically.

Known limits (by design, to keep in-game text intact): a path segment after a
space is only taken as part of the path when it is followed by another
separator (``C:\\Users\\Ann Lee`` leaves ``Lee``); bare user names, bare
numbers that merely might be ids, and keys shorter than 16 characters are not
detected.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final, Literal

from xtyserver.errors import UsageError

__all__ = [
    "DEFAULT_PLACEHOLDERS",
    "KINDS",
    "Kind",
    "find_forbidden",
    "redact",
]

Kind = Literal["path", "account_id", "api_key", "email"]

KINDS: Final[tuple[Kind, ...]] = ("path", "account_id", "api_key", "email")

DEFAULT_PLACEHOLDERS: Final[Mapping[str, str]] = {
    "path": "[已隐去:路径]",
    "account_id": "[已隐去:账号]",
    "api_key": "[已隐去:密钥]",
    "email": "[已隐去:邮箱]",
}

# Characters that end a path: whitespace (ASCII and the common Unicode ones),
# quotes, characters Windows forbids in names, and CJK punctuation, so that a
# path inside a Chinese sentence does not swallow the rest of it.
_PATH_STOP = r"\s\u00a0\u3000\"'<>|*?，。；：！？、（）「」『』【】《》"
_PATH_BODY = (
    rf"[^{_PATH_STOP}]*"
    # Segments after spaces ("C:\Program Files (x86)\Steam"): taken only when
    # a separator follows within three words, so "C:\a is here" keeps "is here".
    rf"(?:(?:\x20[^{_PATH_STOP}\\/]{{1,64}}){{1,3}}[\\/][^{_PATH_STOP}]*){{0,16}}"
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

# Order matters only for matches starting at the same position: a path that
# contains an e-mail or key is redacted whole as a path.
_COMBINED: Final[re.Pattern[str]] = re.compile(
    f"(?P<path>{_PATH})|(?P<account_id>{_ACCOUNT_ID})|(?P<api_key>{_API_KEY})|(?P<email>{_EMAIL})",
)

# A superset of _COMBINED, cheap to search: every alternative above needs one
# of these characters or literals somewhere in the text (a drive path needs
# ":" or "%", a key "-" / "_" / ":" / "=" or one of the literal prefixes, an
# e-mail "@", ...). Most in-game strings contain none, so they skip the big scan.
_TRIGGER: Final[re.Pattern[str]] = re.compile(
    r"[\\/%$~@_=:\[-]|7656119|AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|AIza|eyJ|(?i:bearer)"
)

# A replacement can change what surrounds the next candidate (a look-behind
# that failed next to the removed text may now succeed), so redaction repeats
# until nothing matches. In practice one or two passes; past this bound the
# whole text is replaced rather than risk letting anything through.
_MAX_PASSES: Final = 8


def find_forbidden(text: str) -> Kind | None:
    """Return the kind of the first forbidden match in ``text``, or None.

    Args:
        text: Any string a peer sent.

    Returns:
        One of ``"path"``, ``"account_id"``, ``"api_key"``, ``"email"`` for the
        leftmost match, or None when the text is clean.
    """
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
    for first in values:
        for second in values:
            if _COMBINED.search(first + second) is not None:
                raise UsageError("a placeholder itself looks like forbidden content")


def redact(
    text: str, *, placeholders: Mapping[str, str] = DEFAULT_PLACEHOLDERS
) -> tuple[str, list[str]]:
    """Replace every forbidden match in ``text`` with a placeholder.

    The result never contains a match of :func:`find_forbidden`, and redacting
    it again changes nothing.

    Args:
        text: Any string, typically the player's chat text.
        placeholders: Replacement text per kind (all four kinds required). The
            defaults are Chinese, e.g. ``[已隐去:路径]``.

    Returns:
        The redacted text and the distinct kinds found, in order of first
        appearance (empty when nothing was redacted).

    Raises:
        UsageError: A custom placeholder is missing or itself looks forbidden.
    """
    if placeholders is not DEFAULT_PLACEHOLDERS:
        _check_placeholders(placeholders)
    found: list[str] = []
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
