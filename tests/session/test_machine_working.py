"""The session machine's working memory: park, resume, an older save, stale folds, the log."""

from __future__ import annotations

from tests.session.defaults import session_settings, working_settings
from tests.session.test_machine import (
    FARM_A,
    T0,
    context,
    frame,
    hello,
    make_session,
    of,
    prompt,
    ready_session,
    turn,
)
from xtyserver.protocol.frames import Usage
from xtyserver.session.effects import (
    CallModel,
    FoldWorking,
    ParkWorking,
    RecordInjection,
    ResumeWorking,
    Summarize,
)
from xtyserver.session.events import (
    Connected,
    Disconnected,
    ModelDone,
    WorkingFolded,
    WorkingResumed,
)
from xtyserver.session.working import SessionSummary

USAGE = Usage(prompt_tokens=1, completion_tokens=1, total_tokens=2)


def play(session, first: int, last: int, now: float = T0):  # type: ignore[no-untyped-def]
    effects = []
    for n in range(first, last + 1):
        started = turn(session, frame(type="chat.send", id=f"c{n}", text=f"第{n}轮", source="text"))
        effects += started
        [call] = of(started, CallModel)
        effects += session.handle(ModelDone(call.turn, f"回答{n}", USAGE), now)
    return effects


def test_hello_asks_for_the_saves_parked_working_memory() -> None:
    opened = make_session()
    opened.handle(Connected(), T0)
    assert of(opened.handle(hello(), T0), ResumeWorking) == [ResumeWorking(FARM_A, T0)]
    session = ready_session()
    effects = play(session, 1, 3)
    parked = of(session.handle(Disconnected(), T0 + 5), ParkWorking)
    assert parked and parked[0].save == FARM_A and len(parked[0].snapshot.window) == 3
    assert of(session.handle(Disconnected(), T0 + 5), ParkWorking) == []
    assert effects  # three turns ran
    fresh = ready_session()
    fresh.handle(WorkingResumed(FARM_A, parked[0].snapshot), T0 + 6)
    [call] = of(turn(fresh, frame(type="chat.send", id="n", text="继续", source="text")), CallModel)
    assert "第1轮" in prompt(call) and "回答3" in prompt(call)


def test_a_resumed_session_summarises_only_its_own_rounds() -> None:
    session = ready_session()
    play(session, 1, 3)
    [parked] = of(session.handle(Disconnected(), T0), ParkWorking)
    again = ready_session()
    again.handle(WorkingResumed(FARM_A, parked.snapshot), T0)
    play(again, 4, 5)
    [summary] = of(again.handle(Disconnected(), T0), Summarize)
    assert [p for p, _ in summary.turns] == ["第4轮", "第5轮"]


def test_an_earlier_in_game_day_after_a_resume_drops_the_working_memory() -> None:
    session = ready_session()
    session.handle(frame(type="state.update", modelContext=context(world={"day": 10})), T0)
    play(session, 1, 2)
    [parked] = of(session.handle(Disconnected(), T0), ParkWorking)
    assert parked.snapshot.day == 10
    for day, kept in ((10, True), (9, False)):
        again = ready_session()
        again.handle(WorkingResumed(FARM_A, parked.snapshot), T0)
        again.handle(frame(type="state.update", modelContext=context(world={"day": day})), T0)
        [call] = of(
            turn(again, frame(type="chat.send", id="x", text="桥", source="text")), CallModel
        )
        assert ("第1轮" in prompt(call)) is kept


def test_a_fold_answer_of_an_older_generation_is_ignored() -> None:
    settings = working_settings(window=1, fold_every=1)
    session = ready_session(working=settings)
    effects = play(session, 1, 2)
    [fold] = of(effects, FoldWorking)
    assert fold.rounds == (("第1轮", "回答1"),)
    session.handle(
        frame(
            type="state.update",
            identity={"gameId": "stardew-valley", "saveId": "b"},
            modelContext=context(),
        ),
        T0,
    )
    session.handle(WorkingFolded(fold.generation, SessionSummary(mood="开心")), T0)
    [call] = of(turn(session, frame(type="chat.send", id="y", text="嗯", source="text")), CallModel)
    assert "开心" not in prompt(call)
    session.handle(ModelDone(call.turn, "好", USAGE), T0)
    switched = session.handle(
        frame(
            type="state.update",
            identity={"gameId": "stardew-valley", "saveId": "farm-a"},
            modelContext=context(),
        ),
        T0,
    )
    assert of(switched, ResumeWorking) == [ResumeWorking(FARM_A, T0)]


def test_every_planned_turn_logs_its_layers_without_text() -> None:
    session = ready_session()
    effects = turn(session, frame(type="chat.send", id="z", text="秘密的话", source="text"))
    [record] = [e.record for e in of(effects, RecordInjection)]
    assert record.layers[0].name == "identity"
    assert "秘密" not in repr(record) and record.context == "none"
    assert session_settings().working.window == 10
