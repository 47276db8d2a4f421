"""The checks of a ``game.event`` beyond its types (v1.md "game.event").

The facts hold game names and numbers, judged as a modelContext's strings are:
strictly for forbidden content (an 11-digit number, a path shape), each field
named, and the whole under :data:`~xtyserver.protocol.event_frames.EVENT_FACTS_MAX_BYTES`.
"""

from __future__ import annotations

import msgspec

from xtyserver.errors import BudgetError
from xtyserver.protocol.budget import refuse_forbidden
from xtyserver.protocol.event_frames import EVENT_FACTS_MAX_BYTES, GameEvent

_ENCODER = msgspec.json.Encoder()


def check_event(frame: GameEvent) -> None:
    """Refuse facts over their size or holding forbidden content, naming the fields.

    Raises:
        BudgetError: the facts are over ``EVENT_FACTS_MAX_BYTES`` serialized.
        ForbiddenContentError: naming every offending string.
    """
    facts = frame.facts
    if facts is None:
        return
    size = len(_ENCODER.encode(facts))
    if size > EVENT_FACTS_MAX_BYTES:
        raise BudgetError(
            f"facts is {size} bytes serialized; at most {EVENT_FACTS_MAX_BYTES}", fields=["facts"]
        )
    strings = [("facts.subject", facts.subject), ("facts.place", facts.place)]
    refuse_forbidden([(path, text) for path, text in strings if text], strict=True)
