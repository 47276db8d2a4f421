"""The memory command vocabulary: one tagged union, round-tripped on the wire (the answers
too); whether a command is admitted is tests/session/test_admit.py's."""

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
    c.Preview(target=ForgetSpec(kind="profile")),
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


ANSWERS = [
    c.Words(token="t", text="确认删除全部记忆", asked="q", expected=("确认删除全部记忆",)),
    c.Dialog(token="t", yes=False),
    c.Menu(token="t"),
    c.Page(token="t", session="s"),
    c.Elicited(token="t", accepted=True),
    c.Unasked(token="t", quote="item g s #1"),
    c.Terminal(token="t"),
]


@pytest.mark.parametrize("answer", ANSWERS, ids=lambda x: type(x).__name__)
def test_every_answer_round_trips_through_its_tag(answer: c.Answer) -> None:
    assert msgspec.json.decode(msgspec.json.encode(answer), type=c.Answer) == answer
