"""The adapter token: 256 bits, owner-only file, constant-time checks.

See v1.md "Authentication".
"""

from __future__ import annotations

import hmac
import math
import os
import re
import secrets
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from xtyserver.errors import UsageError
from xtyserver.files import private_dir, write_private

TOKEN_BYTES = 32  # 256 bits
TOKEN_FILE = "token"
MIN_TOKEN_CHARS = 32


MIN_TOKEN_BITS = 128


def estimated_bits(token: str) -> float:
    """A generous estimate of a token's entropy in bits: the lower of two.

    The length of its shortest repeating unit times that unit's per-character
    (Shannon) entropy (repeats and a small alphabet), and what a guesser pays for its
    parts (:func:`_parsed_bits`: sequences, keyboard walks, word-like letters).

    "0" * 32 is 0 bits, "ab" * 16 is 2 bits, "0123456789abcdef" * 2 is 64; the
    alphabet and a digit run (``abc…xyz012345``) are about 24, a keyboard walk
    ``qwertyuiop…`` about 60, a passphrase of common words 2 bits a letter;
    a generated token (43 URL-safe characters) is about 200.
    """
    unit = token[: _period(token)]
    counts = Counter(unit)
    n = len(unit)
    per_char = abs(sum(c / n * math.log2(c / n) for c in counts.values())) if n else 0.0
    return min(n * per_char, _parsed_bits(token))


# A guesser's model of a human-made token (after zxcvbn): runs of consecutive characters,
# walks over adjacent keys of a QWERTY keyboard, and runs of letters that read like words
# cost little; any other character costs the bits of the character classes the token uses.
_ROWS = ("`1234567890-=", "qwertyuiop[]\\", "asdfghjkl;'", "zxcvbnm,./")
_SHIFTED = dict(zip('~!@#$%^&*()_+{}|:"<>?', "`1234567890-=[]\\;',./", strict=True))
_KEY_AT = {key: (row, col) for row, keys in enumerate(_ROWS) for col, key in enumerate(keys)}
_SEQUENCE_MIN = 3
_WALK_MIN = 4
_WORDLIKE_MIN = 4
_WORDLIKE_VOWELS = 0.3  # of a word's letters; random lower case has about 0.23
_WORD_LETTER_BITS = 2.0  # English text: a letter of common words
_WALK_STEP_BITS = 2.0  # about four neighbours a key
_CLUSTER = re.compile("[bcdfghjklmnpqrstvwxz]{4}")


def _key(char: str) -> tuple[int, int] | None:
    lowered = _SHIFTED.get(char, char.lower())
    return _KEY_AT.get(lowered)


def _adjacent(a: str, b: str) -> bool:
    ka, kb = _key(a), _key(b)
    return (
        ka is not None
        and kb is not None
        and ka != kb
        and abs(ka[0] - kb[0]) <= 1
        and abs(ka[1] - kb[1]) <= 1
    )


def _run(token: str, start: int, step: Callable[[str, str], bool]) -> int:
    """How many characters from ``start`` each follow the one before by ``step``."""
    end = start + 1
    while end < len(token) and step(token[end - 1], token[end]):
        end += 1
    return end - start


def _consecutive(a: str, b: str) -> bool:
    return a.isalnum() and b.isalnum() and abs(ord(a) - ord(b)) == 1 and a.isdigit() == b.isdigit()


def _wordlike(token: str, start: int) -> int:
    """The length of the run of letters of one case from ``start`` if it reads like words."""
    end = start
    while (
        end < len(token)
        and token[end].isascii()
        and token[end].isalpha()
        and (token[end].islower() == token[start].islower() or end == start + 1)
    ):
        end += 1
    letters = token[start:end].lower()
    vowels = sum(c in "aeiouy" for c in letters)
    if len(letters) < _WORDLIKE_MIN or vowels < _WORDLIKE_VOWELS * len(letters):
        return 0
    # Words rarely stack four consonants; random letters often do.
    return 0 if _CLUSTER.search(letters) else len(letters)


def _parsed_bits(token: str) -> float:
    """What a guesser pays for ``token`` read as cheap parts and single characters."""
    classes = (
        10 * any(c.isdigit() for c in token)
        + 26 * any(c.islower() for c in token)
        + 26 * any(c.isupper() for c in token)
        + 33 * any(not c.isalnum() for c in token)
    )
    per_char = math.log2(max(classes, 2))
    bits, i = 0.0, 0
    while i < len(token):
        sequence = _run(token, i, _consecutive)
        walk = _run(token, i, _adjacent)
        word = _wordlike(token, i)
        options = [(1, per_char)]
        if sequence >= _SEQUENCE_MIN:
            options.append((sequence, per_char + math.log2(sequence) + 1))
        if walk >= _WALK_MIN:
            options.append((walk, math.log2(len(_KEY_AT)) + (walk - 1) * _WALK_STEP_BITS))
        if word:
            options.append((word, word * _WORD_LETTER_BITS))
        length, cost = min(options, key=lambda o: o[1] / o[0])
        bits += cost
        i += length
    return bits


def _period(text: str) -> int:
    """The length of the shortest prefix whose repetition spells ``text`` (KMP failure function)."""
    fail = [0] * len(text)
    k = 0
    for i in range(1, len(text)):
        while k and text[i] != text[k]:
            k = fail[k - 1]
        if text[i] == text[k]:
            k += 1
        fail[i] = k
    period = len(text) - (fail[-1] if text else 0)
    return period if period and period <= len(text) // 2 else len(text)


def check_strength(token: str) -> str:
    """Refuse a configured token too short or too regular (v1.md "Authentication")."""
    hint = "(or leave it unset and the server makes a 256-bit one: `xtyserver token show`)"
    if len(token) < MIN_TOKEN_CHARS:
        raise UsageError(
            f"the configured token has {len(token)} characters; use at least "
            f"{MIN_TOKEN_CHARS} {hint}"
        )
    bits = estimated_bits(token)
    if bits < MIN_TOKEN_BITS:
        raise UsageError(
            f"the configured token is too regular to resist guessing (about {bits:.0f} bits;"
            f" at least {MIN_TOKEN_BITS} needed): use {MIN_TOKEN_CHARS} or more random"
            f" characters, not repeats of a few, a sequence (abcd, 1234), a keyboard walk"
            f" (qwerty) or words {hint}"
        )
    return token


class TokenSource:
    """The adapter token as the running server sees it: re-read when its file changes.

    ``xtyserver token rotate`` writes a new file; the next upgrade, hello or page
    request reads it (one ``stat`` each), so the old token stops working at once
    without a restart (v1.md "Authentication"). ``path`` is None for a token
    from ``XTY_TOKEN`` or the config.
    """

    def __init__(self, token: str, path: Path | None = None) -> None:
        self._token = token
        self._path = path
        self._seen = self._stamp()

    def _stamp(self) -> tuple[int, int] | None:
        if self._path is None:
            return None
        try:
            info = self._path.stat()
        except OSError:
            return None
        return info.st_mtime_ns, info.st_size

    def current(self) -> str:
        """The token now; a changed, readable, non-empty file replaces it."""
        stamp = self._stamp()
        if stamp is not None and stamp != self._seen and self._path is not None:
            try:
                token = self._path.read_text(encoding="ascii").strip()
            except (OSError, UnicodeDecodeError):
                return self._token
            self._seen = stamp
            if token:
                self._token = token
        return self._token


def token_path(data_dir: Path) -> Path:
    return data_dir / TOKEN_FILE


def load_or_create(data_dir: Path, *, env_token: str | None = None) -> tuple[str, Path | None]:
    """Return the token and the file it lives in (None when it came from ``XTY_TOKEN``).

    The file is created on first start with owner-only permissions (0600 where
    the OS has them) and never rewritten except by :func:`rotate`.
    """
    if env_token:
        return check_strength(env_token), None
    path = token_path(data_dir)
    try:
        token = path.read_text(encoding="ascii").strip()
        if token:
            return token, path
    except FileNotFoundError:
        pass
    return rotate(data_dir), path


def rotate(data_dir: Path) -> str:
    """Write a new random token (replacing the old one) and return it."""
    private_dir(data_dir)
    path = token_path(data_dir)
    token = secrets.token_urlsafe(TOKEN_BYTES)
    tmp = path.with_suffix(".tmp")
    write_private(tmp, token.encode("ascii"))
    os.replace(tmp, path)
    return token


def matches(given: str | None, expected: str) -> bool:
    """Constant-time comparison; None never matches."""
    if given is None:
        return False
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode("utf-8"))
