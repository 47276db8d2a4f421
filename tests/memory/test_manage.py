"""Memory management in the store: save names, forget by target, tombstones, statistics."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from tests.memory.conftest import buried
from xtyserver.clock import ManualClock
from xtyserver.errors import StoreContentError, UsageError
from xtyserver.memory.commands import Preview
from xtyserver.memory.extraction import is_deliberate
from xtyserver.memory.manage import ForgetPreview, ForgetSpec
from xtyserver.memory.sqlite.schema import MIGRATIONS
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.memory.types import NewEvent, Scope

FARM_A = Scope("stardew-valley", "farm-a")
FARM_B = Scope("stardew-valley", "farm-b")
WORLD_A = Scope("dont-starve-together", "world-a")
TZ = "Asia/Shanghai"


def _fill(store: MemoryStore, clock: ManualClock) -> None:
    now = clock.now()
    store.set_profile_field("hobbies", ["钓鱼"])
    for scope, name in ((FARM_A, "阳光农场"), (FARM_B, "月光农场"), (WORLD_A, None)):
        play = store.open_play_session(scope, now, TZ, save_name=name)
        store.close_play_session(play, now + 60)
    store.upsert_event(FARM_A, NewEvent("goal", "社区中心", "计划先完成社区中心的鱼缸收集包"), now)
    store.upsert_event(FARM_A, NewEvent("decision", "钓鱼路线", "这个存档走钓鱼路线"), now)
    store.upsert_event(FARM_B, NewEvent("goal", "温室", "修好温室"), now)
    store.upsert_event(WORLD_A, NewEvent("goal", "过冬", "囤够过冬的食物"), now)


def test_a_save_name_is_stored_with_the_save_and_shown_in_statistics(
    store: MemoryStore, clock: ManualClock
) -> None:
    _fill(store, clock)
    assert store.overview().names == {FARM_A: "阳光农场", FARM_B: "月光农场"}
    names = {(s.game_id, s.save_id): s.save_name for s in store.stats().saves}
    assert names[("stardew-valley", "farm-a")] == "阳光农场"
    assert names[("dont-starve-together", "world-a")] is None
    # The newest name wins; a forbidden one is refused with the field named.
    store.open_play_session(FARM_A, clock.now() + 100, TZ, save_name="Ｓｕｎｎｙ")
    assert store.overview().names[FARM_A] == "Ｓｕｎｎｙ"  # kept as typed
    with pytest.raises(StoreContentError) as info:
        store.open_play_session(FARM_A, clock.now() + 200, TZ, save_name="C:\\Users\\ann\\x")
    assert info.value.fields == ("saveName",)


def test_overview_of_a_game_lists_its_saves_with_names_and_items(
    store: MemoryStore, clock: ManualClock
) -> None:
    _fill(store, clock)
    view = store.overview(game_id="stardew-valley")
    assert [(s.label, len(s.events)) for s in view.saves] == [("阳光农场", 2), ("月光农场", 1)]
    assert view.profile.hobbies == ["钓鱼"]
    only = store.overview(scope=FARM_B)
    assert [s.label for s in only.saves] == ["月光农场"]
    everything = store.overview()
    assert [s.label for s in everything.saves] == ["world-a", "阳光农场", "月光农场"]


def _preview(store: MemoryStore, spec: ForgetSpec) -> ForgetPreview:
    preview = store.execute(Preview(target=spec))
    assert isinstance(preview, ForgetPreview)
    return preview


def test_forget_preview_names_the_save_and_changes_nothing(
    store: MemoryStore, clock: ManualClock
) -> None:
    _fill(store, clock)
    item = next(e for e in store.load_scope(FARM_A) if e.subject == "社区中心")
    spec = ForgetSpec(kind="item", game_id="stardew-valley", save_id="farm-a", item_id=item.id)
    preview = _preview(store, spec)
    assert preview.found and preview.item_count == 1
    assert preview.saves[0].label == "阳光农场"
    assert preview.stats_saves == ()
    assert len(store.load_scope(FARM_A)) == 2
    missing = _preview(
        store, ForgetSpec(kind="item", game_id="stardew-valley", save_id="farm-a", item_id=9999)
    )
    assert not missing.found


@pytest.mark.parametrize("kind", ["item", "save", "game", "all"])
def test_every_forget_keeps_statistics_unless_they_are_included(
    store: MemoryStore, clock: ManualClock, kind: str
) -> None:
    _fill(store, clock)
    first = store.load_scope(FARM_A)[0].id
    spec = ForgetSpec(
        kind=kind,  # type: ignore[arg-type]
        game_id="stardew-valley",
        save_id="farm-a",
        item_id=first,
    )
    before = store.stats()
    store.forget(spec)
    assert store.stats() == before


def test_forget_a_game_with_statistics_deletes_only_that_game(
    store: MemoryStore, clock: ManualClock
) -> None:
    _fill(store, clock)
    preview = _preview(store, ForgetSpec(kind="game", game_id="stardew-valley", include_stats=True))
    assert preview.stats_saves == (FARM_A, FARM_B)
    result = store.forget(ForgetSpec(kind="game", game_id="stardew-valley", include_stats=True))
    assert (result.items, result.stats_saves, result.profile_cleared) == (3, 2, False)
    assert store.load_scope(FARM_A) == [] and store.load_scope(FARM_B) == []
    assert [s.game_id for s in store.stats().saves] == ["dont-starve-together"]
    assert [e.subject for e in store.load_scope(WORLD_A)] == ["过冬"]
    assert store.get_profile().hobbies == ["钓鱼"]


def test_the_profile_has_no_statistics_to_delete(store: MemoryStore) -> None:
    with pytest.raises(UsageError):
        store.forget(ForgetSpec(kind="profile", include_stats=True))
    with pytest.raises(UsageError):
        store.forget(ForgetSpec(kind="item", game_id="stardew-valley", save_id="farm-a"))


def test_a_forgotten_subject_is_not_formed_again_unless_told_on_purpose(
    store: MemoryStore, clock: ManualClock
) -> None:
    _fill(store, clock)
    item = next(e for e in store.load_scope(FARM_A) if e.subject == "社区中心")
    store.forget(
        ForgetSpec(kind="item", game_id=FARM_A.game_id, save_id=FARM_A.save_id, item_id=item.id)
    )
    assert buried(store) == [("stardew-valley", "farm-a", "goal", "社区中心")]
    again = NewEvent("decision", "社区中心", "玩家又提到社区中心")
    assert store.remember_candidate(FARM_A, again, clock.now(), deliberate=False) is None
    # Another save has no tombstone for it.
    assert store.remember_candidate(FARM_B, again, clock.now(), deliberate=False) is not None
    stored = store.remember_candidate(FARM_A, again, clock.now(), deliberate=True)
    assert stored is not None and stored.pinned
    assert buried(store) == []


@pytest.mark.parametrize(
    ("text", "deliberate"),
    [
        ("记住：我要走钓鱼路线", True),
        ("请记住这个", True),
        ("  记住这个", True),
        ("你还记住了什么", False),
        ("我想记住", False),
        ("删掉社区中心计划", False),
    ],
)
def test_a_deliberate_remember_is_recognised(text: str, deliberate: bool) -> None:
    assert is_deliberate(text) is deliberate


def test_a_version_1_file_migrates_and_keeps_its_memories(
    tmp_path: Path, clock: ManualClock
) -> None:
    path = tmp_path / "old.sqlite"
    conn = apsw.Connection(str(path))
    with conn:
        for statement in MIGRATIONS[0]:
            conn.execute(statement)
        conn.execute(
            "INSERT INTO game_memory(game_id, save_id, kind, subject, summary, importance, "
            "status, pinned, day, created_at, updated_at, last_used_at) "
            "VALUES ('stardew-valley', 'farm-a', 'goal', '温室', '修好温室', 3, 'active', 0, "
            "NULL, 1, 1, 1)"
        )
        conn.execute("PRAGMA user_version=1")
    conn.close()
    with MemoryStore(path, clock=clock) as store:
        assert [e.subject for e in store.load_scope(FARM_A)] == ["温室"]
        assert store.overview().names == {} and buried(store) == []


def test_one_profile_field_table_matches_the_frames_and_the_struct() -> None:
    from typing import get_args

    from xtyserver.memory.types import EDITABLE_FIELDS, PROFILE_TABLE, profile_field
    from xtyserver.protocol.memory_frames import ProfileField

    assert tuple(f.wire for f in PROFILE_TABLE) == get_args(ProfileField)
    assert [f.wire for f in EDITABLE_FIELDS] == [
        "nickname",
        "language",
        "replyStyle",
        "personality",
        "hobbies",
        "games",
        "companionName",
        "companionPersona",
        "notes",
    ]
    assert {f.wire for f in PROFILE_TABLE if f.is_list} == {
        "personality",
        "hobbies",
        "games",
        "notes",
    }
    reply_style = profile_field("replyStyle")
    assert reply_style is not None and reply_style == profile_field("reply_style")
    assert reply_style.name == "reply_style"
    assert profile_field("salary") is None
    auto = profile_field("autoShared")
    assert auto is not None and not auto.editable


def test_a_token_is_bound_to_who_asked_and_stays_valid_for_them() -> None:
    from xtyserver.memory.manage import TOKEN_TTL, Confirmations, ForgetPreview

    spec = ForgetSpec(kind="save", game_id="stardew-valley", save_id="farm-a")
    preview = ForgetPreview(spec=spec, saves=(), profile_fields=(), stats_saves=())
    tokens = Confirmations("page")
    token = tokens.issue(preview, 0.0, asker="session-a")
    assert tokens.peek(token, 1.0, asker="session-b") == "unknown"
    assert tokens.peek(token, 1.0) == "unknown"
    pending = tokens.peek(token, TOKEN_TTL, asker="session-a")
    assert not isinstance(pending, str) and pending.preview.spec == spec
    tokens.spend(token)
    assert tokens.peek(token, TOKEN_TTL, asker="session-a") == "unknown"  # spent
    late = tokens.issue(preview, 0.0, asker="session-a")
    assert tokens.peek(late, TOKEN_TTL + 0.001, asker="session-a") == "expired"
