"""Cut a streaming reply into sentences to speak, as they finish (v1.md "Spoken replies").

Pure. :class:`Sentences` takes the reply's pieces as they stream and hands back
each sentence once its end is seen, so the first one is synthesised while the
model still writes the rest; :meth:`Sentences.flush` gives what is left at the end.
"""

from __future__ import annotations

import re

# Ends a sentence where it stands: CJK and fullwidth stops, a line break.
_HARD_ENDS = frozenset("。！？；…\n!?;")
# Ends a sentence only before whitespace (3.14, example.com and "e.g." stay whole).
_SOFT_ENDS = frozenset(".")
# Where an over-long sentence is cut when no end comes.
_PAUSES = "，、,：:"
# Closing quotes and brackets that belong to the sentence before the cut.
_CLOSERS = frozenset("”’\"'）)」』】")
# Markup and symbols that a voice should not read out.
_UNSPOKEN = re.compile(r"[*#`_~|<>\[\]{}]|[\U0001F000-\U0001FAFF\u2600-\u27BF\uFE0F]")


def speakable(text: str) -> str:
    """``text`` without the markup and emoji a voice would spell out; spaces collapsed."""
    return " ".join(_UNSPOKEN.sub("", text).split())


class Sentences:
    """A reply's sentences as they complete.

    Args:
        longest: Characters after which a sentence with no end is cut at its
            last pause (else where it stands), so speech never waits on a run-on.
    """

    def __init__(self, longest: int = 80) -> None:
        self._longest = longest
        self._buffer = ""

    def feed(self, text: str) -> list[str]:
        """Add a streamed piece; return the sentences it completed, speakable, in order."""
        self._buffer += text
        done: list[str] = []
        while (cut := self._cut()) is not None:
            sentence, self._buffer = self._buffer[:cut], self._buffer[cut:]
            done += [s for s in (speakable(sentence),) if _has_words(s)]
        return done

    def flush(self) -> list[str]:
        """The rest of the reply, once it ended."""
        rest, self._buffer = speakable(self._buffer), ""
        return [rest] if _has_words(rest) else []

    def _cut(self) -> int | None:
        """Where the first complete sentence of the buffer ends, or None."""
        text = self._buffer
        for at, char in enumerate(text):
            end = at + 1
            if char in _HARD_ENDS or (
                char in _SOFT_ENDS and end < len(text) and text[end].isspace()
            ):
                while end < len(text) and (text[end] in _CLOSERS or text[end] in _HARD_ENDS):
                    end += 1
                if end == len(text) and char not in "\n":
                    # A closing quote or a second "！" may still come: wait for one more piece,
                    # unless the sentence is already whole by its CJK stop.
                    return end if char in "。！？；…" else None
                return end
        if len(text) > self._longest:
            pause = max(text.rfind(p, 0, self._longest) for p in _PAUSES)
            return pause + 1 if pause > 0 else self._longest
        return None


def _has_words(text: str) -> bool:
    return any(char.isalnum() for char in text)
