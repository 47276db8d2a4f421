"""When the embedding backlog may start its next unit (memory/backlog_pace.py): the player
typing, a turn under way and a reply's end, at times given by hand (issue 39: a turn
beside a backlog of 30,000 imported memories must not wait for it)."""

from __future__ import annotations

import pytest

from xtyserver.memory.backlog_pace import TURN_HOLD_S, TYPING_HOLD_S, BacklogPace

T = 1_790_000_000.0


def test_with_no_move_of_the_player_the_backlog_goes_on() -> None:
    assert BacklogPace().held(T) == (0.0, None)


def test_typing_holds_the_backlog_until_its_hold_has_passed_since_the_last_hint() -> None:
    pace = BacklogPace()
    pace.typing(T)
    pace.typing(T + 1)  # still typing: the hold counts from the last hint
    assert pace.held(T + 1) == (TYPING_HOLD_S, "typing")
    assert pace.held(T + 1 + TYPING_HOLD_S - 0.5) == (0.5, "typing")
    assert pace.held(T + 1 + TYPING_HOLD_S) == (0.0, None)  # stopped typing, sent nothing


def test_a_turn_holds_the_backlog_until_its_reply_ends() -> None:
    pace = BacklogPace()
    pace.typing(T)
    pace.turn_began(T + 2)
    assert pace.held(T + 2) == (TURN_HOLD_S, "turn")
    assert pace.wait(T + 3) == TURN_HOLD_S - 1
    pace.reply_ended(T + 3)
    assert pace.held(T + 3) == (0.0, None)  # the typing before it lets go too


def test_a_turn_with_no_reply_lets_go_after_its_hold() -> None:
    pace = BacklogPace()
    pace.turn_began(T)  # refused before its model call: no reply ends
    assert pace.held(T + TURN_HOLD_S - 0.25) == (0.25, "turn")
    assert pace.held(T + TURN_HOLD_S) == (0.0, None)


def test_a_reply_that_ended_before_the_player_began_again_holds_nothing_back() -> None:
    pace = BacklogPace()
    pace.turn_began(T)
    pace.reply_ended(T + 1)
    pace.typing(T + 10)  # the next message
    assert pace.held(T + 10) == (TYPING_HOLD_S, "typing")
    pace.turn_began(T + 11)
    assert pace.held(T + 11) == (TURN_HOLD_S, "turn")  # the longer of the two holds


@pytest.mark.parametrize("late", [True, False])
def test_a_move_noted_late_never_moves_a_hold_back(late: bool) -> None:
    pace = BacklogPace()
    pace.typing(T + 5)
    pace.typing(T + 1 if late else T + 5)  # noted out of order (two connections)
    assert pace.held(T + 5) == (TYPING_HOLD_S, "typing")
