"""game.event on the wire (v1.md "game.event"): its facts judged like a modelContext's strings,
each refusal naming its field; and every line the server itself says about an event passes the
same forbidden-content checks."""

from __future__ import annotations

import json

import pytest

from xtyserver.errors import PeerError
from xtyserver.protocol.codec import decode_client_frame
from xtyserver.protocol.event_frames import EVENT_FACTS_MAX_BYTES, EVENT_KINDS, GameEvent
from xtyserver.protocol.forbidden import find_forbidden
from xtyserver.session.companion import EVENT_LABELS
from xtyserver.session.settings import Texts


def event(**fields: object) -> bytes:
    return json.dumps({"type": "game.event", "kind": "boss_near", **fields}).encode()


def refusal(data: bytes) -> PeerError:
    with pytest.raises(PeerError) as caught:
        decode_client_frame(data)
    return caught.value


def test_a_valid_event_keeps_its_facts_as_sent_and_judges_their_normal_form() -> None:
    decoded = decode_client_frame(
        event(facts={"subject": "Ｄｅｅｒｃｌｏｐｓ", "value": 12, "maxValue": 30, "count": 3})
    )
    frame = decoded.frame
    assert isinstance(frame, GameEvent) and frame.facts is not None
    assert frame.facts.subject == "Ｄｅｅｒｃｌｏｐｓ" and frame.facts.max_value == 30
    # A path in full-width letters is a path.
    error = refusal(event(facts={"place": "Ｃ:\\Ｕｓｅｒｓ\\Ｐｉｐ\\ｓａｖｅｓ"}))
    assert (error.code, error.fields) == ("forbidden_content", ("facts.place",))


@pytest.mark.parametrize(
    ("facts", "field"),
    [
        ({"subject": "C:\\Users\\Pip\\saves"}, "facts.subject"),
        ({"place": "/home/pip/.klei/DoNotStarveTogether"}, "facts.place"),
        ({"subject": "13812345678"}, "facts.subject"),  # a phone-shaped number
        ({"place": "sk-abcdefghijklmnopqrstuvwx"}, "facts.place"),
    ],
)
def test_forbidden_content_in_the_facts_is_refused_naming_the_field(
    facts: dict[str, str], field: str
) -> None:
    error = refusal(event(facts=facts))
    assert error.code == "forbidden_content" and field in error.fields


def test_the_facts_budget_to_its_byte_and_the_kind_list() -> None:
    error = refusal(event(facts={"subject": "长" * 201}))
    assert error.code == "budget_exceeded"
    # Two names at their longest pass 1,024 bytes serialized: the facts' own bound.
    full = {"subject": "鹿" * 200, "place": "林" * 200, "value": 1e9, "count": 10**9}
    assert len(json.dumps(full, ensure_ascii=False).encode()) > EVENT_FACTS_MAX_BYTES
    error = refusal(event(facts=full))
    assert (error.code, error.fields) == ("budget_exceeded", ("facts",))
    small = {"subject": "鹿" * 200, "value": 1e9, "count": 10**9}
    assert decode_client_frame(event(facts=small)).frame.kind == "boss_near"  # type: ignore[union-attr]
    error = refusal(event(kind="dragon_near"))
    assert error.code == "invalid_frame" and "kind" in " ".join(error.fields) + error.message


def test_every_line_the_server_says_about_an_event_passes_the_forbidden_checks() -> None:
    texts = Texts()
    lines = [texts.speakup_rules, texts.speakup_cue, texts.speakup_why, texts.speakup_why_en]
    for kind in EVENT_KINDS:
        lines += [EVENT_LABELS[kind], texts.speakup_what[kind], texts.speakup_what_en[kind]]
        lines += [
            texts.speakup_why.replace("{what}", texts.speakup_what[kind]),
            texts.speakup_why_en.replace("{what}", texts.speakup_what_en[kind]),
        ]
    assert [line for line in lines if find_forbidden(line, strict=True)] == []
