"""The shapes of forbidden content: one regular expression per kind, and the cheap filters.

Pure data: the cheap filters compiled at import, the full scan when first
needed (:func:`full_scan`). :mod:`xtyserver.protocol.forbidden` scans with
them and judges what they find (checksums, versions, TLDs, secrets); what each
kind covers, and why every quantifier is bounded, is said there.
"""

from __future__ import annotations

import functools
import re
from typing import Final

from xtyserver.protocol.judged import NUMERALS

# Characters that end a path: whitespace, quotes, characters Windows forbids in
# names, and CJK punctuation (a path inside a Chinese sentence ends there).
_PATH_STOP = r"\s\"'<>|*?。、「」『』【】《》"
# These end a path only before a non-ASCII character ("Program Files (x86)" stays whole).
_PATH_SOFT = r",:;!()"


def _path_run(stop: str) -> str:
    """One path character other than ``stop``, soft stops handled (see above).

    Runs are possessive: what follows a run starts with a character the run
    cannot hold, so giving some back never helps, and forbidding it keeps the scan linear.
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
_PROFILE_FOLDERS = (
    r"AppData|Application Data|Local Settings|My Documents|Saved Games|OneDrive|ProgramData"
    r"|Program Files(?: \(x86\))?|Start Menu|桌面|我的文档|文档|下载"
)
_UNIX_ROOTS = r"home|Users|root|tmp|var|etc|usr|opt|mnt|media|private|Volumes|srv|run|proc"

_PATH = "|".join(
    [
        # Windows drive path; not after a letter/digit so "https://" and "08:10" pass.
        rf"(?<![A-Za-z0-9])[A-Za-z](?::|%3[Aa]){_SEP}{_PATH_BODY}",
        # UNC path \\server\share (also JSON-escaped, with doubled backslashes).
        rf"(?<!\\)\\{{2,}}[A-Za-z0-9$][A-Za-z0-9._$-]{{0,62}}\\+[^{_PATH_STOP}\\/]{_PATH_BODY}",
        # Drive-less Windows profile path.
        rf"(?<![A-Za-z0-9._\\-])\\+(?i:Users|Documents and Settings|用户)\\+[^{_PATH_STOP}\\/]"
        rf"{_PATH_BODY}",
        # ... also without its leading backslash: Users\name, 用户\张伟, Users/name/x.
        rf"(?<![A-Za-z0-9._\\/-])(?i:Users|用户)\\+[^{_PATH_STOP}\\/]{_PATH_BODY}",
        rf"(?<![A-Za-z0-9._\\/-])(?i:Users|用户)/[^{_PATH_STOP}\\/]{_SEGMENT_RUN}*+/{_PATH_BODY}",
        # A drive the Chinese way: C盘/用户/张伟, D盘\游戏.
        rf"(?<![A-Za-z0-9])[A-Za-z]盘\s{{0,2}}{_SEP}{_PATH_BODY}",
        # An Explorer address bar: 此电脑 > 本地磁盘 (C:) > 用户 > 张伟.
        r"(?:此电脑|我的电脑|这台电脑|本地磁盘|(?i:this pc|my computer|local disk))"
        r"[^\n>›]{0,32}(?:[>›][^\n>›]{0,32}){0,15}[>›]\s{0,3}[^\s>›。，、,]{1,64}",
        # UNC path with forward slashes: //NAS/home/name (not a URL's "://").
        rf"(?<![A-Za-z0-9:/\\])//[A-Za-z0-9][A-Za-z0-9._$-]{{0,62}}/+[^{_PATH_STOP}\\/]"
        rf"{_PATH_BODY}",
        # file:// URL, and the share URLs of SMB, AFP, NFS (smb://nas/home/name).
        rf"(?i:file:/{{2,3}}|(?:smb|cifs|afp|nfs)://)[^{_PATH_STOP}]{_PATH_BODY}",
        # A folder of the player's profile without the user before it:
        # AppData\Local\..., Saved Games/..., 桌面\存档.
        rf"(?<![A-Za-z0-9._-])(?i:{_PROFILE_FOLDERS})[\\/][^{_PATH_STOP}\\/]{_PATH_BODY}",
        # Any relative path with two backslashes or more (a\b\c); the ASCII word
        # before the first one is taken too.
        rf"(?<![A-Za-z0-9._$~-])[A-Za-z0-9._$~-]{{0,64}}+\\{{1,4}}+[^{_PATH_STOP}\\/]{{1,64}}+\\"
        rf"{_PATH_BODY}",
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
        r"(?i:steamcommunity[.。]com/(?:id|profiles)/)[A-Za-z0-9_-]{1,64}",
        # "steam" and a number with the SteamID64 prefix, even of a wrong length
        # (a digit mistyped or doubled still points at the account).
        r"(?<![A-Za-z0-9])(?i:steam)(?:[ _-]?(?i:id))?[\s:=#]{0,4}7656119[0-9]{8,13}(?![0-9])",
        # A Windows security identifier (the account's): S-1-5-21-...-1001.
        r"(?<![A-Za-z0-9-])[Ss]-1-[0-9]{1,3}(?:-[0-9]{1,10}){2,15}(?![0-9-])",
        # QQ numbers and WeChat ids, when named as such within 6 characters before.
        # A label is a word of its own: inside an id ("k3qq4567...") it is not one.
        r"(?:(?<![A-Za-z0-9_-])(?i:qq)(?![A-Za-z])|扣扣)[^0-9\n]{0,6}[1-9][0-9]{4,11}(?![0-9])",
        r"(?:(?<![A-Za-z0-9_-])(?i:wx|wechat|weixin)(?![A-Za-z0-9_-])|微信)[^\n]{0,6}?"
        r"(?:(?=[A-Za-z0-9_-]{0,19}[0-9_-])[A-Za-z][A-Za-z0-9_-]{5,19}(?![A-Za-z0-9_-])"
        r"|[1-9][0-9]{4,11}(?![0-9]))",
        r"(?<![A-Za-z0-9_-])(?i:wxid)_[A-Za-z0-9_-]{4,32}",
    ]
)

_KEYCHARS = r"A-Za-z0-9_-"
_KEY_PREFIXES = r"sk-|(?:sk|rk|pk)_(?:live|test)_|gh[pousr]_|github_pat_|hf_|glpat-|AKIA|AIza"
_PREFIXED_KEYS = [
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
]
# A prefixed key, whole: what a key split by spaces must be once squeezed.
PLAIN_KEY: Final[re.Pattern[str]] = re.compile("|".join(_PREFIXED_KEYS))
_API_KEY = "|".join(
    [
        # A prefixed key split by spaces ("sk-proj-AbC1 dEf2 ..."): each later group has a
        # digit or a capital ("sk-learn is fun" is prose); first, so the whole key is taken.
        rf"(?P<spaced_key>(?<![{_KEYCHARS}])(?:{_KEY_PREFIXES})[{_KEYCHARS}]{{0,64}}+"
        rf"(?:[ \t]{{1,2}}(?=[{_KEYCHARS}]{{0,63}}[0-9A-Z])[{_KEYCHARS}]{{2,64}}+){{1,31}})",
        *_PREFIXED_KEYS,
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

# An e-mail is any "@"-like or "at ... dot" shape between a local part and a domain;
# Latin, Greek and Cyrillic letters count, so a look-alike TR39 misses keeps it whole.
_LETTERS = r"A-Za-z0-9\u00c0-\u024f\u0370-\u03ff\u0400-\u04ff"
_LOCAL = rf"[{_LETTERS}._%+-]"
# "@" (＠ and ﹫ are "@" after NFKC) or a spelled one in brackets; the strict form.
_AT = r"(?:@|\s{0,2}[\[({<]\s?(?i:at)\s?[\])}>]\s{0,2})"
_DOT = r"(?:[.。]|\s{0,2}[\[({<]\s?(?i:dot|点)\s?[\])}>]\s{0,2}|\s(?i:dot)\s)"
_LABEL = rf"[{_LETTERS}](?:[{_LETTERS}-]{{0,62}}[{_LETTERS}])?"
_TLD = rf"[A-Za-z\u0370-\u03ff\u0400-\u04ff]{{2,24}}(?![{_LETTERS}-])"
# The loose shapes (spaced "@", 艾特, 圈a, "#", "(a)", a bare "at"; 点, "dot"): _valid asks for a
# mail TLD (or a spelled dot after a bare "at"), so "meet at pierre.shop" stays prose.
_LOOSE_AT = (
    r"(?:\s{0,3}(?:@|艾特|圈a|#|[\[({<]\s?(?i:at|a)\s?[\])}>])\s{0,3}|\s{1,3}(?i:at)\s{1,3})"
)
_LOOSE_DOT = (
    r"(?:\s{0,3}(?:[.。]|点|點|[\[({<]\s?(?i:dot|点)\s?[\])}>])\s{0,3}|\s{1,3}(?i:dot)\s{1,3})"
)
_EMAIL = (
    # Only at the start of a local-part run: a long run without "@" is scanned once.
    rf"(?<![{_LETTERS}._%+-]){_LOCAL}{{1,64}}+(?:{_AT}"
    rf"{_LABEL}(?:{_DOT}{_LABEL}){{0,8}}{_DOT}{_TLD}"
    rf"|(?P<loose_email>{_LOOSE_AT}{_LABEL}(?:{_LOOSE_DOT}{_LABEL}){{0,8}}{_LOOSE_DOT}"
    rf"[A-Za-z]{{2,24}}(?![{_LETTERS}-])))"
)
# Top-level domains of e-mail providers, for the loose shapes.
MAIL_TLDS: Final = frozenset(
    re.findall(
        r"\w+",
        "com net org edu gov mil int info biz cn hk tw mo jp kr sg uk de fr ru it es nl "
        "se no fi ch at be pl cz eu us ca au nz in br me io co cc tv ai app dev xyz top "
        "vip club site online email mail icu asia ",
    )
)
SPELLED_DOT: Final[re.Pattern[str]] = re.compile(r"(?i:dot)|点|點")
TLD_AT_END: Final[re.Pattern[str]] = re.compile(r"[A-Za-z]{2,24}$")

# -- network addresses, machine names, phone and id card numbers --------------

_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_HEX2 = r"[0-9A-Fa-f]{2}"
_HEX4 = r"[0-9A-Fa-f]{1,4}"
_NETWORK_ADDRESS = "|".join(
    [
        # IPv4 (a version number after v/ver/version/版本 is not one; see _valid).
        rf"(?<![A-Za-z0-9.])(?:{_OCTET}\.){{3}}{_OCTET}(?![0-9]|\.[0-9])",
        # MAC addresses: six hex pairs with one separator throughout or none (then with
        # a hex letter: _valid), or Cisco's three dotted quads.
        rf"(?<![0-9A-Za-z_-]){_HEX2}(?P<mac_sep>[:\-._ ]?+){_HEX2}(?:(?P=mac_sep){_HEX2}){{4}}"
        rf"(?![0-9A-Za-z_]|[:-][0-9A-Fa-f])",
        r"(?<![0-9A-Za-z_-])[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}(?![0-9A-Za-z_])",
        # IPv6: eight groups, or three or more with "::" ("a::b" is not one), a zone after.
        rf"(?<![0-9A-Za-z])(?<![0-9A-Fa-f]:)(?:{_HEX4}:){{7}}{_HEX4}(?![0-9A-Za-z]|:[0-9A-Fa-f])",
        rf"(?<![0-9A-Za-z])(?<![0-9A-Fa-f]:)(?=(?:[0-9A-Fa-f]{{0,4}}:){{3}})"
        rf"(?:{_HEX4}(?::{_HEX4}){{0,6}})?::(?:{_HEX4}(?::{_HEX4}){{0,6}})?"
        rf"(?:%[A-Za-z0-9]{{1,16}})?(?![0-9A-Za-z:])",
    ]
)
# Windows' generated machine names: DESKTOP-7KQ2M3P, LAPTOP-..., WIN-...; the
# suffix mixes letters and digits, so "desktop-version" is prose.
_MACHINE_NAME = (
    r"(?<![A-Za-z0-9_-])(?:(?i:desktop|laptop)-(?=[A-Za-z]{0,14}[0-9])(?=[0-9]{0,14}[A-Za-z])"
    r"[A-Za-z0-9]{5,15}|(?:WIN|PC)-(?=[A-Z]{0,14}[0-9])(?=[0-9]{0,14}[A-Z])[A-Z0-9]{5,15})"
    r"(?![A-Za-z0-9_-])"
)
# Mainland China mobile numbers, with or without +86.
_PHONE = r"(?<![0-9+])(?:\+?86[ -]?)?1[3-9][0-9]{9}(?![0-9])"
# 18-digit resident id card numbers (the checksum is checked in _valid).
_ID_CARD = (
    r"(?<![0-9A-Za-z])[1-9][0-9]{5}(?:18|19|20)[0-9]{2}(?:0[1-9]|1[0-2])"
    r"(?:0[1-9]|[12][0-9]|3[01])[0-9]{3}[0-9Xx](?![0-9A-Za-z])"
)

# -- raw logs and crash stacks ------------------------------------------------

# A process id only right after a label that says so, and not a decimal, percentage,
# fraction or the start of a longer word (a saveId may begin "pid2…"). A bare 进程
# (also "progress": 游戏进程) needs three digits, as real process ids have.
_PID_SEP = r"\s{0,3}(?:[:=#]|(?i:is)(?![A-Za-z])|是|为)?\s{0,3}"
_PROCESS_ID = (
    r"(?:(?<![A-Za-z0-9_])(?i:p?pid|process[ _-]?id)|进程\s{0,3}(?i:id|号|编号))"
    rf"{_PID_SEP}[0-9]{{1,10}}(?![0-9A-Za-z%/]|\.[0-9])"
    rf"|进程{_PID_SEP}[0-9]{{3,10}}(?![0-9A-Za-z%/]|\.[0-9])"
)

_PY_FRAME = r'File "[^"\n]{1,1024}", line [0-9]{1,9}(?:, in [^\s,]{1,256})?'
_TRACEBACK = "|".join(
    [
        # Python: the header, its frames (each maybe with its indented source line) and
        # the exception line, also pasted onto one line. The possessive indent reads a
        # frame line after a frame as the next frame, not as a source line.
        r"Traceback \(most recent call last\):"
        rf"(?:\s{{0,16}}{_PY_FRAME}(?:\n[ \t]++(?!File \")[^\n]{{0,1024}})?){{0,256}}"
        r"(?:\s{1,16}[A-Za-z_][\w.]{0,128}(?:Error|Exception|Exit|Interrupt|Warning)\b[^\n]{0,1024})?",
        # A Python frame line on its own (part of a stack pasted).
        rf"(?<![A-Za-z0-9_]){_PY_FRAME}",
        # Lua (Don't Starve Together): "stack traceback:", the rest of its line
        # and the indented lines below it.
        r"(?i:stack traceback):[^\n]{0,1024}(?:\n[ \t]+[^\n]{0,1024}){0,256}",
        # .NET and Java frames "at Name.Space.Method(args)" (.NET's " in ...:line 12");
        # the dotted name and parentheses keep "meet at Pierre's (9am)" prose.
        r"(?<![A-Za-z0-9_])at\s{1,4}[A-Za-z_$<][\w$<>`+/]{0,256}\.[\w$<>`+/.\[\],]{1,512}"
        r"\([^()\n]{0,512}\)(?:\s{1,4}in\s{1,4}[^\n]{1,1024}?:line\s{1,4}[0-9]{1,9})?",
    ]
)

# A log line: from the start of a line, a level in brackets, a timestamp with a
# level, or an upper-case level and a colon, then the whole line.
_LEVELS = r"TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|CRITICAL|FATAL|SEVERE|ALERT|EMERG"
# Bracketed levels may be in any case and abbreviated (Serilog's [INF], [WRN]).
LEVEL_IN_BRACKETS = rf"\[(?i:{_LEVELS}|ERR|CRIT|INF|WRN|DBG|FTL|VRB|EXCEPTION)\]"
_BARE_LEVEL = rf"(?<![A-Za-z])(?:{_LEVELS})(?![A-Za-z])"
_TIME = r"[0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]{1,9})?"
_DATE = r"[0-9]{4}[-/.][0-9]{2}[-/.][0-9]{2}"
_DATE_TIME = rf"{_DATE}[ T]{_TIME}(?:Z|[+-][0-9]{{2}}:?[0-9]{{2}})?"
_LOG_LINE = (
    # A bracketed level or a SMAPI/Serilog head anywhere in a line (pasted after words
    # of the player's: 刚才日志 [12:00:01 ERROR SMAPI] ...), then the rest of the line.
    rf"(?:{LEVEL_IN_BRACKETS}|\[{_TIME}\s{{1,4}}(?i:{_LEVELS}|ERR|INF|WRN|DBG|FTL|VRB)\b"
    r"[^\]\n]{0,64}\])[^\n]*|"
    r"(?<![^\n])[ \t]*(?:"
    + "|".join(
        [
            LEVEL_IN_BRACKETS,
            # SMAPI (Stardew): [12:00:01 ERROR SMAPI]; Serilog: [12:00:01 INF].
            rf"\[{_TIME}\s{{1,4}}(?i:{_LEVELS}|ERR|INF|WRN|DBG|FTL|VRB)\b[^\]\n]{{0,64}}\]",
            # Don't Starve Together: [00:01:23]: message.
            rf"\[{_TIME}\]:",
            # 2026-11-30 12:00:01,123 WARNING ..., [2026-11-30 12:00:01.000] [1] [ERR] ...
            rf"\[?{_DATE_TIME}\]?[^\n]{{0,64}}?(?:{_BARE_LEVEL}|{LEVEL_IN_BRACKETS})",
            rf"{_TIME}\s{{1,4}}{_BARE_LEVEL}",
            # ERROR: ..., WARNING - ... (Python logging's default format).
            rf"(?:{_LEVELS})(?::|\s-\s)",
        ]
    )
    + r")[^\n]*"
)

# Order matters only for matches starting at the same position: a path that
# contains an e-mail or key is redacted whole as a path.
_COMBINED: Final = (
    f"(?P<path>{_PATH})|(?P<account_id>{_ACCOUNT_ID})|(?P<api_key>{_API_KEY})|(?P<email>{_EMAIL})"
    f"|(?P<process_id>{_PROCESS_ID})|(?P<traceback>{_TRACEBACK})|(?P<log_line>{_LOG_LINE})"
    f"|(?P<network_address>{_NETWORK_ADDRESS})|(?P<machine_name>{_MACHINE_NAME})"
    f"|(?P<phone>{_PHONE})|(?P<id_card>{_ID_CARD})"
)
# The kinds made of digits, searched again with digit groups joined ("138-1234-5678").
_DIGITS: Final = f"(?P<account_id>{_ACCOUNT_ID})|(?P<phone>{_PHONE})|(?P<id_card>{_ID_CARD})"


@functools.cache
def full_scan() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The combined scan and the joined-digits scan, compiled when first needed.

    Compiling them is most of this module's import, and only a text with a
    :data:`TRIGGER` needs them: a server compiles them once it listens
    (:func:`compile_patterns`) rather than before.
    """
    return re.compile(_COMBINED), re.compile(_DIGITS)


def compile_patterns() -> None:
    """Compile the full scan's patterns now, so no text waits for them."""
    full_scan()


# A superset of everything above, cheap to search: every alternative needs one of
# these characters or literals somewhere in the judged text (a Unix path "/", an
# e-mail "@", a Steam id "7656", a number 11 digits, a base64 run 16 characters...).
# Most in-game strings, clock times such as "08:10" included, contain none, so they
# skip the big scan. Each alternative starts with a literal or a character set, which
# the engine skips over quickly; a look-behind comes after its literal for that reason.
_N = f"[0-9{NUMERALS}]"  # a digit, also a Chinese numeral
_J = r"(?:[^\w\n]|_){0,4}"  # what may join the digits of one number
TRIGGER: Final[re.Pattern[str]] = re.compile(
    r"""[\\/%$~@_=\["<>›({-]|:(?<![0-9]:)|:[0-9A-Fa-f]{2}:|::|:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:"""
    rf"|[7七柒]{_J}[6六陆陸]{_J}[5五伍]{_J}[6六陆陸]|{_N}(?:{_J}{_N}){{10}}"
    r"|[0-9A-Fa-f]{2}(?:[ .]?[0-9A-Fa-f]{2}){5}|艾特|圈a"
    r"|A(?:KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA|Iza)|eyJ|[Bb](?i:earer)|[Pp](?i:id|rocess)|进程|[Aa][Tt]\s"
    # A labelled Steam id whose label ends in a digit ("steamid64:123...") has no
    # other trigger: its colon follows a digit, like a clock time's.
    r"|[Ss](?i:team)|[Qq][Qq]|扣扣|微信|[Ww](?i:x|echat|eixin)"
    # The account cues of privacy by shape (forbidden_by_shape.py), an "@" spelled "#",
    # a 0x number, twelve hex digits.
    r"|企鹅|[Qq]号|[Vv]信|[Vv][Xx]|威信|薇信|[Dd](?i:iscord|c)|好友代?码|(?i:friend|uid)"
    r"|[账帐][号户]|手机|电话|联系方式|#|0[xX]|[0-9A-Fa-f]{12}"
    r"|[0-9]\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]|[A-Za-z0-9+]{16}"
)

# What a modelContext string never holds (v1.md "Forbidden content"): a number of 11
# digits or more however separated, and any path shape.
STRICT: Final[re.Pattern[str]] = re.compile(
    r"(?P<account_id>[0-9](?:(?:[^\w\n:]|_){0,4}[0-9]){10})"
    r"|(?P<path>\\|(?<![:/])/[^\s/]{0,64}?[^\W\d_][^\s/]{0,64}?/)"
)

# A base64 run: judged on its decoded text when that is printable.
BASE64: Final[re.Pattern[str]] = re.compile(
    r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{16,}+={0,2}+(?![A-Za-z0-9+/=_-])"
)
BASE64_MAX: Final = 4096
