"""Find a known secret (the adapter token) however it is spelled. Pure code.

A secret is looked for on its **skeleton**: the ASCII letters and digits of a
judged text, lower-cased. So the token spaced, dashed, upper-cased or in
look-alike letters has the token's skeleton; its reverse is looked for too. A
piece counts from :data:`PIECE_MIN` skeleton characters, and a caller that
keeps the skeleton's tail of the player's previous messages (``carry``) catches
shorter pieces once they add up.

Cost: the skeleton is one regular-expression substitution; the secret's
skeleton is cut into blocks of :data:`BLOCK` characters, and any common run of
``2 * BLOCK - 1`` characters holds a whole block, so a text is searched for
those few blocks with ``in`` (C speed) before anything is mapped back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from xtyserver.protocol.judged import judged
from xtyserver.protocol.normalize import visible

__all__ = ["BLOCK", "CARRY_MAX", "PIECE_MIN", "SecretMatcher", "carried", "matcher", "skeleton"]

BLOCK: Final = 5
"""Characters per block of the secret's skeleton that a text is searched for."""
PIECE_MIN: Final = 2 * BLOCK - 1
"""A run of the secret's (or its reverse's) skeleton this long is the secret."""
CARRY_MAX: Final = 64
"""Skeleton characters of the player's earlier messages a session keeps (:func:`carried`)."""

_NOT_SKELETON: Final[re.Pattern[str]] = re.compile(r"[^0-9A-Za-z]+")
_NOT_SKELETON_BYTES: Final[re.Pattern[bytes]] = re.compile(rb"[^0-9A-Za-z]+")


def skeleton(text: str) -> str:
    """The ASCII letters and digits of ``text``, lower-cased."""
    return _NOT_SKELETON.sub("", text).lower()


def carried(carry: str, text: str) -> str:
    """The carry after the player's message ``text`` (as sent): the tail of both skeletons."""
    return (carry + skeleton(judged(visible(text))))[-CARRY_MAX:]


class SecretMatcher:
    """One secret's (the adapter token's) skeleton, its reverse and their blocks."""

    __slots__ = ("_blocks", "_bytes_blocks", "_forms")

    def __init__(self, secret: str) -> None:
        forward = skeleton(secret)
        self._forms = (forward, forward[::-1])
        blocks = {
            form[i : i + BLOCK]
            for form in self._forms
            for i in range(0, len(form) - BLOCK + 1, BLOCK)
        }
        self._blocks = tuple(sorted(blocks))
        self._bytes_blocks = tuple(b.encode("ascii") for b in self._blocks)

    def maybe_in(self, data: bytes) -> bool:
        """Whether ``data`` (ASCII bytes, e.g. a JSON encoding) may hold a piece."""
        skel = _NOT_SKELETON_BYTES.sub(b"", data).lower()
        return any(block in skel for block in self._bytes_blocks)

    def spans(self, text: str, carry: str = "") -> list[tuple[int, int]]:
        """Spans of ``text`` (a judged text) that spell a piece of the secret, by start.

        ``carry``: the skeleton of earlier messages; a piece that starts there and
        ends in ``text`` counts whole, and only its part in ``text`` is returned.
        """
        skel = carry + skeleton(text)
        if not any(block in skel for block in self._blocks):
            return []
        runs = self._runs(skel)
        if not runs:
            return []
        index = [i for i, c in enumerate(text) if c.isascii() and c.isalnum()]
        shifted = ((max(start - len(carry), 0), end - len(carry)) for start, end in runs)
        return _merged((index[start], index[end - 1] + 1) for start, end in shifted if end > 0)

    def _runs(self, skel: str) -> list[tuple[int, int]]:
        """Runs of ``skel`` of at least :data:`PIECE_MIN` that are in a form, merged."""
        found: list[tuple[int, int]] = []
        for block in self._blocks:
            at = skel.find(block)
            while at >= 0:
                for form in self._forms:
                    where = form.find(block)
                    while where >= 0:
                        found.append(_extend(skel, at, form, where))
                        where = form.find(block, where + 1)
                at = skel.find(block, at + 1)
        return _merged(sorted(run for run in found if run[1] - run[0] >= PIECE_MIN))


def _merged(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` (by start) with those that overlap or touch joined."""
    out: list[tuple[int, int]] = []
    for start, end in spans:
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _extend(skel: str, at: int, form: str, where: int) -> tuple[int, int]:
    """The common run around ``skel[at:]`` == ``form[where:]`` (a block), as a span of ``skel``."""
    left = 0
    while at - left > 0 and where - left > 0 and skel[at - left - 1] == form[where - left - 1]:
        left += 1
    right = BLOCK
    while (
        at + right < len(skel)
        and where + right < len(form)
        and (skel[at + right] == form[where + right])
    ):
        right += 1
    return at - left, at + right


_CACHE: dict[str, SecretMatcher] = {}


def matcher(secret: str) -> SecretMatcher:
    """The matcher of ``secret``, built once (a server has one token at a time)."""
    found = _CACHE.get(secret)
    if found is None:
        if len(_CACHE) >= 8:
            _CACHE.clear()
        found = _CACHE[secret] = SecretMatcher(secret)
    return found
