"""The shared profile through the store: field by field, checked, normalised, cleared."""

from __future__ import annotations

import pytest

from xtyserver.errors import StoreContentError, StoreError, UsageError
from xtyserver.memory.manage import ForgetSpec
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.memory.types import SharedProfile


def test_store_refuses_a_forbidden_profile_field_and_keeps_the_old_value(
    store: MemoryStore,
) -> None:
    store.set_profile_field("nickname", "小明")
    with pytest.raises(StoreContentError) as info:
        store.set_profile_field("notes", ["住在 /home/bob/"])
    assert info.value.fields == ("notes",)
    with pytest.raises(StoreContentError):
        store.set_profile_field("nickname", "ming@example.com")
    with pytest.raises(StoreContentError):  # a soft hyphen does not hide an e-mail address
        store.set_profile_field("nickname", "ming@exam\u00adple.com")
    profile = store.get_profile()
    assert (profile.nickname, profile.notes) == ("小明", [])


def test_profile_is_updated_field_by_field_and_cleared(store: MemoryStore) -> None:
    store.set_profile_field("nickname", "小明")
    store.set_profile_field("hobbies", ["钓鱼", "种田"])
    store.set_profile_field("auto_shared", False)
    p = store.get_profile()
    assert (p.nickname, p.hobbies, p.auto_shared) == ("小明", ["钓鱼", "种田"], False)
    with pytest.raises(StoreError) as info:
        store.set_profile_field("nickname", "名" * 33)
    assert info.value.code == "invalid_memory"
    with pytest.raises(UsageError):
        store.set_profile_field("password", "x")
    store.forget(ForgetSpec(kind="profile"))
    assert store.get_profile().nickname == ""


def test_profile_strings_are_stored_as_typed_without_invisibles(store: MemoryStore) -> None:
    p = store.set_profile_field("nickname", "ｍｉｎｇ\u200b")
    assert p.nickname == "ｍｉｎｇ"
    p = store.set_profile_field("hobbies", ["ｆｉｓｈ", "种\u200d田"])
    assert p.hobbies == ["ｆｉｓｈ", "种田"]
    assert store.get_profile().hobbies == ["ｆｉｓｈ", "种田"]
    with pytest.raises(StoreError) as info:  # an item of only format characters is empty
        store.set_profile_field("hobbies", ["\u200b"])
    assert info.value.fields == ("hobbies",)


@pytest.mark.parametrize("auto_shared", [False, True])
def test_auto_shared_survives_clearing_the_profile_and_forgetting_everything(
    store: MemoryStore, auto_shared: bool
) -> None:
    store.set_profile_field("auto_shared", auto_shared)
    store.set_profile_field("nickname", "小明")
    store.forget(ForgetSpec(kind="profile"))
    assert store.get_profile() == SharedProfile(auto_shared=auto_shared)
    store.set_profile_field("notes", ["喜欢钓鱼"])
    store.forget(ForgetSpec(kind="all"))
    assert store.get_profile() == SharedProfile(auto_shared=auto_shared)
