"""The codec judges free text in its normal form and hands on the text as typed.

v1.md "Normalisation": modelContext strings, chat.send text, identity.saveName
and profile.update values come out of :func:`decode_client_frame` as sent with
only their invisible characters removed (full-width punctuation, kana and
full-width letters kept), and are measured and judged in their normal form;
ids are checked against their ASCII patterns as sent.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.property_budget import examples
from tests.protocol.test_codec import _CARRIERS, _STRING_SLOTS, contexts, decode
from tests.protocol.test_forbidden import ISSUE_ROWS, full_width, look_alike
from xtyserver.errors import BudgetError, ForbiddenContentError, FrameError, PeerError
from xtyserver.protocol import normal_frames
from xtyserver.protocol.codec import decode_client_frame
from xtyserver.protocol.frames import ChatSend, Hello, ProfileUpdate, StateUpdate
from xtyserver.protocol.normalize import normalize, visible


def _ctx(**parts: Any) -> dict[str, Any]:
    return {"schemaVersion": 1, "capturedAt": "2026-09-21T08:00:00Z", **parts}


def _identity(**extra: Any) -> dict[str, Any]:
    return {"gameId": "stardew-valley", "saveId": "k3J9xQ2mPa", **extra}


def _hello(identity: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "adapter.hello",
        "protocol": "v1",
        "adapter": {"name": "xty-stardew", "version": "1.0.0"},
        "identity": identity,
    }


def _chat(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "chat.send", "id": "c1", "text": text, "source": "text", **extra}


def _decode(frame: dict[str, Any]) -> Any:
    return decode_client_frame(json.dumps(frame, ensure_ascii=False)).frame


def _refused(frame: dict[str, Any]) -> PeerError:
    with pytest.raises(PeerError) as caught:
        decode_client_frame(json.dumps(frame, ensure_ascii=False))
    return caught.value


# -- what comes out is the normal form -------------------------------------------------


def test_model_context_strings_come_out_as_typed_without_invisibles() -> None:
    ctx = _ctx(
        world={"location": "农场（东）\u200b", "time": "０８:１０"},
        player={"status": ["饿了！", "wet\u00ad"], "heldItem": "Ｆｉｓｈｉｎｇ Ｒｏｄ"},
        nearby=[{"name": "阿比\u200d盖尔"}],
        relevantItems=[{"name": "鱼饵\ufeff", "count": 3}],
    )
    frame = decode("state.update", ctx).frame
    assert isinstance(frame, StateUpdate)
    context = frame.model_context
    assert context.world is not None and context.player is not None
    assert (context.world.location, context.world.time) == ("农场（东）", "０８:１０")
    assert context.player.status == ["饿了！", "wet"]
    assert context.player.held_item == "Ｆｉｓｈｉｎｇ Ｒｏｄ"
    assert context.nearby is not None and context.nearby[0].name == "阿比盖尔"
    assert context.relevant_items is not None and context.relevant_items[0].name == "鱼饵"


def test_chat_text_and_its_context_come_out_as_typed_without_invisibles() -> None:
    frame = _decode(
        _chat(
            "Ｆｉｓｈ Ｔａｎｋ在哪？\u200b",
            context={
                "modelContext": _ctx(world={"location": "海滩\u2060"}),
                "identity": _identity(saveName="我的\u200b农场！"),
            },
        )
    )
    assert isinstance(frame, ChatSend)
    assert frame.text == "Ｆｉｓｈ Ｔａｎｋ在哪？"
    assert frame.context is not None and frame.context.model_context is not None
    assert frame.context.model_context.world is not None
    assert frame.context.model_context.world.location == "海滩"
    assert frame.context.identity is not None
    assert frame.context.identity.save_name == "我的农场！"


def test_hello_save_name_comes_out_without_invisibles() -> None:
    frame = _decode(_hello(_identity(saveName="\u202e星露谷\u202c农场")))
    assert isinstance(frame, Hello)
    assert frame.identity.save_name == "星露谷农场"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("小明\u200b！", "小明！"),
        (["钓鱼！", "ｆｉｓｈｉｎｇ", "种\u00ad田"], ["钓鱼！", "ｆｉｓｈｉｎｇ", "种田"]),
        (True, True),
    ],
)
def test_profile_values_come_out_as_typed_without_invisibles(value: Any, expected: Any) -> None:
    frame = _decode({"type": "profile.update", "field": "hobbies", "value": value})
    assert isinstance(frame, ProfileUpdate)
    assert frame.value == expected


def test_plain_frames_are_passed_on_as_decoded() -> None:
    raw = json.dumps({"type": "state.update", "modelContext": _ctx(world={"location": "Farm"})})
    decoded = decode_client_frame(raw)
    assert decoded.frame == msgspec.json.decode(raw, type=StateUpdate)


# -- look-alike forbidden content is refused where plain content is ----------------------


@pytest.mark.parametrize(("text", "kind", "secret"), ISSUE_ROWS)
@pytest.mark.parametrize(("obj", "key"), _STRING_SLOTS)
@pytest.mark.parametrize("carrier", sorted(_CARRIERS))
def test_every_issue_row_in_every_model_context_string_is_refused(
    text: str, kind: str, secret: str, obj: str, key: str, carrier: str
) -> None:
    _, prefix = _CARRIERS[carrier]
    with pytest.raises(ForbiddenContentError) as caught:
        decode(carrier, _ctx(**{obj: {key: text}}))
    assert caught.value.fields == (f"{prefix}.{obj}.{key}",)
    assert f"({kind})" in caught.value.message


@pytest.mark.parametrize(
    "text",
    ["ERROR: pid=4242", "pid=4242", "进程ID：4242", 'File "game.py", line 3', "[ERROR] x"],
)
def test_process_ids_stacks_and_log_lines_in_a_model_context_are_refused(text: str) -> None:
    with pytest.raises(ForbiddenContentError) as caught:
        decode("state.update", _ctx(world={"location": text}))
    assert caught.value.fields == ("modelContext.world.location",)


@pytest.mark.parametrize(("text", "kind", "secret"), ISSUE_ROWS)
def test_a_look_alike_save_name_is_refused(text: str, kind: str, secret: str) -> None:
    if len(normalize(text)) > 64:  # pragma: no cover - every row fits today
        pytest.skip("too long for a save name")
    err = _refused(_hello(_identity(saveName=text)))
    assert err.code == "forbidden_content"
    assert err.fields == ("identity.saveName",)


def test_look_alike_profile_values_reach_the_store_as_typed() -> None:
    # The store judges profile values (forbidden_content from the store) in
    # their normal form; the codec hands it the text as typed.
    frame = _decode({"type": "profile.update", "field": "notes", "value": ["bob＠example.com"]})
    assert isinstance(frame, ProfileUpdate)
    assert frame.value == ["bob＠example.com"]


# -- ids are checked as sent --------------------------------------------------------------


@pytest.mark.parametrize(
    ("identity", "field"),
    [
        (_identity(gameId="ｓｔａｒｄｅｗ-valley"), "identity.gameId"),
        (_identity(gameId="stardew\u200b-valley"), "identity.gameId"),
        (_identity(saveId="ｋ３Ｊ９"), "identity.saveId"),
        (_identity(saveId="k3J9\u200bxQ2mPa"), "identity.saveId"),
        (_identity(saveId="７６５６１１９８０１２３４５６７８"), "identity.saveId"),
    ],
)
def test_a_look_alike_id_is_refused_by_its_pattern_not_merged(
    identity: dict[str, Any], field: str
) -> None:
    err = _refused(_hello(identity))
    assert err.code == "invalid_frame"
    assert err.fields == (field,)


def test_a_plain_steam_id_as_save_id_is_still_forbidden_content() -> None:
    err = _refused(_hello(_identity(saveId="76561198012345678")))
    assert err.code == "forbidden_content"


_PATTERNS = [
    r"^[a-z0-9][a-z0-9._-]{0,63}$",  # gameId
    r"^[A-Za-z0-9_-]{1,128}$",  # saveId
    r"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$",  # adapter.name
    r"^[A-Za-z0-9][A-Za-z0-9.+_-]{0,31}$",  # adapter.version
    r"^[A-Za-z][A-Za-z0-9_+/. ()-]{0,63}$",  # timezone (IANA or Windows)
]


@pytest.mark.parametrize("pattern", _PATTERNS)
def test_the_id_patterns_are_the_ones_in_frames(pattern: str) -> None:
    schemas = "".join(
        json.dumps(msgspec.json.schema(t)) for t in (Hello, StateUpdate, ChatSend)
    ).replace("\\\\", "\\")
    assert pattern in schemas


@settings(max_examples=examples(300))
@given(st.sampled_from(_PATTERNS).flatmap(lambda p: st.tuples(st.just(p), st.from_regex(p))))
def test_every_string_an_id_pattern_admits_is_already_normal(pair: tuple[str, str]) -> None:
    pattern, value = pair
    if re.search(pattern, value) is None:  # from_regex may add a trailing newline
        return
    assert normalize(value) is value


# -- limits hold for the normal form -----------------------------------------------------


def test_chat_text_of_only_invisible_characters_is_refused_as_empty() -> None:
    err = _refused(_chat("\u200b\u200d\ufeff"))
    assert isinstance(err, FrameError)
    assert err.fields == ("text",)
    assert "after normalisation" in err.message


def test_chat_text_that_normalisation_lengthens_past_2000_chars_is_over_budget() -> None:
    assert len(normalize("\ufdfa")) == 18
    err = _refused(_chat("\ufdfa" * 112))
    assert isinstance(err, BudgetError)
    assert err.fields == ("text",)


def test_a_context_string_that_normalisation_lengthens_past_200_chars_is_over_budget() -> None:
    assert len(normalize("㍿")) == 4
    err = _refused({"type": "state.update", "modelContext": _ctx(world={"location": "㍿" * 51})})
    assert isinstance(err, BudgetError)
    assert err.fields == ("modelContext.world.location",)
    assert _decode({"type": "state.update", "modelContext": _ctx(world={"location": "㍿" * 50})})


def test_every_string_over_its_limit_after_normalisation_is_named() -> None:
    frame = _chat(
        "\ufdfa" * 112,
        context={
            "modelContext": _ctx(world={"location": "㍿" * 51}, ui={"menu": "㍿" * 60}),
            "identity": _identity(saveName="\u200b"),
        },
    )
    err = _refused(frame)
    assert set(err.fields) == {
        "text",
        "context.modelContext.world.location",
        "context.modelContext.ui.menu",
        "context.identity.saveName",
    }
    assert err.code == "invalid_frame"  # one of them is empty, not only too long


def test_a_profile_value_that_normalisation_lengthens_past_its_limit_is_over_budget() -> None:
    err = _refused({"type": "profile.update", "field": "notes", "value": ["㍿" * 16]})
    assert isinstance(err, BudgetError)
    assert err.fields == ("value[0]",)


# -- properties --------------------------------------------------------------------------


@st.composite
def _context_and_look_alike(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    ctx = draw(contexts(max_str=24))

    def disguise(value: Any) -> Any:
        if isinstance(value, str):
            return draw(look_alike(value))
        if isinstance(value, dict):
            return {k: v if k == "capturedAt" else disguise(v) for k, v in value.items()}
        if isinstance(value, list):
            return [disguise(v) for v in value]
        return value

    return ctx, disguise(ctx)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_context_and_look_alike(), st.sampled_from(sorted(_CARRIERS)))
def test_a_look_alike_context_gets_the_same_verdict_as_its_plain_form(
    pair: tuple[dict[str, Any], dict[str, Any]], carrier: str
) -> None:
    plain, disguised = pair
    try:
        expected: Any = _normal_model_context(decode(carrier, plain).frame)
    except PeerError as exc:
        expected = (exc.code, exc.fields)
    try:
        got: Any = _normal_model_context(decode(carrier, disguised).frame)
    except PeerError as exc:
        got = (exc.code, exc.fields)
    assert got == expected


def _normal_model_context(frame: Any) -> Any:
    """The frame's modelContext as builtins, every string in its normal form."""
    context = frame.model_context if isinstance(frame, StateUpdate) else frame.context
    if isinstance(frame, ChatSend):
        context = context.model_context

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            assert visible(value) == value  # what is kept has no invisible character
            return normalize(value)
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    return walk(msgspec.to_builtins(context))


@settings(max_examples=examples(500))
@given(st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=40))
def test_the_plain_ascii_shortcut_never_skips_a_string_that_would_change(text: str) -> None:
    for encoded in (json.dumps(text).encode(), msgspec.json.encode(text)):
        if normal_frames.plain_json(encoded):
            assert normalize(text) == text


def test_the_plain_ascii_shortcut_takes_ordinary_frames() -> None:
    raw = json.dumps({"type": "state.update", "modelContext": _ctx(world={"time": "08:10"})})
    assert normal_frames.plain_json(raw.encode())
    assert not normal_frames.plain_json(json.dumps({"t": "\u200b"}).encode())
    assert not normal_frames.plain_json(json.dumps({"t": "a\x7fb"}).encode())
    assert not normal_frames.plain_json(json.dumps({"t": "a\bb"}).encode())
    assert not normal_frames.plain_json(json.dumps(full_width("x"), ensure_ascii=False).encode())
