"""When the embedding backlog may start its next unit (memory/backlog_pace.py): the player
typing, a turn under way and a reply's end, at times given by hand (issue 39: a turn
beside a backlog of 30,000 imported memories must not wait for it)."""

from __future__ import annotations

import math

import pytest

from xtyserver.memory.backlog_pace import (
    TURN_HOLD_S,
    TYPING_HOLD_S,
    WORKER_FAILURES,
    BacklogPace,
    WorkerWatch,
)

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


# -- the passages' worker process: suspended during a turn, watched for a hang -----------


def test_a_turn_suspends_the_worker_until_its_reply_ends() -> None:
    pace = BacklogPace()
    assert pace.stopped(T) == (False, math.inf)
    pace.turn_began(T + 1)  # an untyped chat.send: the passage under way stops at once
    assert pace.stopped(T + 1) == (True, TURN_HOLD_S)
    assert pace.stopped(T + 2) == (True, TURN_HOLD_S - 1)
    pace.reply_ended(T + 2.5)
    assert pace.stopped(T + 2.5) == (False, math.inf)


def test_typing_suspends_the_worker_until_its_hold_ends_or_a_reply_does() -> None:
    pace = BacklogPace()
    pace.typing(T)  # the query the hint prepares gets the cores
    assert pace.stopped(T) == (True, TYPING_HOLD_S)
    assert pace.stopped(T + TYPING_HOLD_S) == (False, math.inf)  # typed, sent nothing
    pace.typing(T + 10)
    pace.turn_began(T + 10.5)  # sent half a second later: stopped until its reply ends
    assert pace.stopped(T + 10 + TYPING_HOLD_S) == (True, TURN_HOLD_S - TYPING_HOLD_S + 0.5)
    pace.reply_ended(T + 14)
    assert pace.stopped(T + 14) == (False, math.inf)


def test_a_turn_with_no_reply_resumes_the_worker_after_its_hold() -> None:
    pace = BacklogPace()
    pace.turn_began(T)  # refused before its model call: no reply ends
    assert pace.stopped(T + TURN_HOLD_S - 0.25) == (True, 0.25)
    assert pace.stopped(T + TURN_HOLD_S) == (False, math.inf)


def test_a_passage_is_stuck_after_its_running_time_not_counting_suspensions() -> None:
    watch = WorkerWatch(stuck_after=60.0)
    assert watch.until_stuck(T) == math.inf  # nothing in flight
    watch.sent(T)
    assert watch.until_stuck(T + 10) == 50.0
    watch.suspended(T + 10)  # a turn: the passage stands still
    assert watch.until_stuck(T + 500) == math.inf
    assert watch.ran(T + 500) == 10.0
    watch.resumed(T + 500)
    watch.suspended(T + 505)
    watch.suspended(T + 506)  # noted twice: still the first
    watch.resumed(T + 600)
    assert watch.ran(T + 600) == 15.0
    assert watch.until_stuck(T + 645) == 0.0  # 60 s of running: a hang


def test_a_suspension_before_the_passage_counts_from_its_sending() -> None:
    watch = WorkerWatch(stuck_after=60.0)
    watch.suspended(T)  # a turn began while the worker was idle
    watch.sent(T + 3)  # the backlog had read its batch just before
    watch.resumed(T + 5)
    assert watch.ran(T + 6) == 1.0


def test_failures_in_a_row_send_the_passages_back_to_the_servers_thread() -> None:
    watch = WorkerWatch(failures=WORKER_FAILURES)
    for _ in range(WORKER_FAILURES - 1):
        watch.sent(T)
        assert watch.failed() == "restart"
    watch.sent(T)
    watch.answered()  # a passage came back: the count starts again
    assert watch.failures == 0
    assert [watch.failed() for _ in range(WORKER_FAILURES)][-2:] == ["restart", "in_thread"]
    assert watch.until_stuck(T) == math.inf  # nothing in flight after a failure
