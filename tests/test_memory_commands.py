"""The memory command vocabulary: one tagged union, round-tripped on the wire."""

from __future__ import annotations

import msgspec
import pytest

from xtyserver.memory import commands as c
from xtyserver.memory.manage import ForgetSpec
from xtyserver.memory.types import Scope

SAVE = Scope("stardew", "farm1")
EVERY = [
    c.View(game_id="stardew"),
    c.Search(scope=SAVE, query="鱼"),
    c.Correct(field="nickname", value="阿汤"),
    c.Pin(scope=SAVE, event_id=3),
    c.Forget(target=ForgetSpec(kind="all")),
    c.Restore(game_id="stardew"),
    c.ForgetName(scope=SAVE, alias="大锅"),
    c.Export(),
]


@pytest.mark.parametrize("command", EVERY, ids=lambda x: type(x).__name__)
def test_every_command_round_trips_through_its_tag(command: c.MemoryCommand) -> None:
    wire = msgspec.json.encode(command)
    assert msgspec.json.decode(wire, type=c.MemoryCommand) == command


def test_an_unknown_command_names_the_field() -> None:
    with pytest.raises(msgspec.ValidationError, match="command"):
        msgspec.json.decode(b'{"command": "drop_table"}', type=c.MemoryCommand)


def test_only_forget_and_restore_need_consent_and_only_broad_forgets_are_broad() -> None:
    assert [c.needs_consent(x) for x in EVERY] == [False] * 4 + [True, True, False, False]
    assert c.is_broad(c.Forget(target=ForgetSpec(kind="save", game_id="g", save_id="s")))
    item = ForgetSpec(kind="item", game_id="g", save_id="s", item_id=1)
    assert not c.is_broad(c.Forget(target=item))


def test_chat_words_and_an_unasked_echo_never_answer_only_this() -> None:
    assert not c.answers_only_this(c.Words(token="t", text="好"))
    assert not c.answers_only_this(c.Unasked(token="t"))
    for answer in (
        c.Dialog(token="t", yes=True),
        c.Menu(token="t"),
        c.Page(token="t", session="s"),
        c.Elicited(token="t", accepted=True),
        c.Terminal(token="t"),
    ):
        assert c.answers_only_this(answer)
