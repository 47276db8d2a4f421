"""SaveTracker (pure): which save a session plays, switches, and where a play session ends."""

from __future__ import annotations

from datetime import UTC, datetime

from tests.session.defaults import session_settings
from xtyserver.memory.types import Scope
from xtyserver.protocol.frames import Identity, ModelContext, World
from xtyserver.session.effects import CloseSave, OpenSave, PlayBeat, ResumeWorking
from xtyserver.session.saves import SaveTracker
from xtyserver.session.turns import Turns

T0 = 1_800_000_000.0


def tracker() -> SaveTracker:
    saves = SaveTracker(Turns(session_settings()), summarize=False, now=T0)
    saves.open(Identity(game_id="stardew-valley", save_id="farm-a"), "Asia/Shanghai", T0)
    return saves


def test_opening_a_save_opens_its_play_session_and_resumes_its_working_memory() -> None:
    saves = SaveTracker(Turns(session_settings()), summarize=False, now=T0)
    effects = saves.open(Identity(game_id="stardew-valley", save_id="farm-a"), "Asia/Shanghai", T0)
    farm = Scope("stardew-valley", "farm-a")
    assert effects == [OpenSave(farm, "Asia/Shanghai", T0, None), ResumeWorking(farm, T0)]
    assert saves.save == farm


def test_a_save_name_alone_is_not_a_switch_but_another_save_id_is() -> None:
    saves = tracker()
    renamed = Identity(game_id="stardew-valley", save_id="farm-a", save_name="枫叶谷")
    assert not saves.is_switch(renamed) and saves.switch(renamed, T0 + 1) == []
    assert saves.is_switch(Identity(game_id="stardew-valley", save_id="farm-b"))
    assert not saves.is_switch(None)


def test_a_switch_ends_the_old_save_at_its_last_heartbeat_and_forgets_its_game_state() -> None:
    saves = tracker()
    assert saves.beat(T0 + 5) == [
        PlayBeat(Scope("stardew-valley", "farm-a"), "Asia/Shanghai", T0 + 5)
    ]
    at = datetime.fromtimestamp(T0 + 6, UTC)
    saves.set_context(ModelContext(captured_at=at, world=World(day=12)), T0 + 7)
    assert saves.day == 12 and saves.context_at == T0 + 6
    effects = saves.switch(Identity(game_id="stardew-valley", save_id="farm-b"), T0 + 30)
    assert effects[0] == CloseSave(Scope("stardew-valley", "farm-a"), T0 + 5)
    assert OpenSave(Scope("stardew-valley", "farm-b"), "Asia/Shanghai", T0 + 30, None) in effects
    assert saves.context is None and saves.day is None
    assert saves.save == Scope("stardew-valley", "farm-b")


def test_a_context_without_captured_at_counts_as_captured_on_arrival() -> None:
    saves = tracker()
    saves.set_context(ModelContext(), T0 + 9)
    assert saves.context_at == T0 + 9
