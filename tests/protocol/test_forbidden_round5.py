"""Privacy round five: privacy by shape (forbidden_by_shape.py), in the pure judge.

Per family of tests/protocol/privacy5_cases.py: every spelling is found and redacted in
chat text (its secret piece gone), refused as a save name and in a modelContext string; a
path begun in one chat message and completed in the next is redacted in the second; the
false-positive table stays as typed in chat, and a seed in a modelContext is game state.
"""

from __future__ import annotations

import pytest

from xtyserver.errors import ForbiddenContentError
from xtyserver.protocol.budget import check_identity, check_model_context, check_secrets
from xtyserver.protocol.forbidden import find_forbidden, redact, tail
from xtyserver.protocol.frames import Identity, StateUpdate
from xtyserver.protocol.normalize import normalize, visible

from .privacy5_cases import (
    CONTEXT_STATE,
    FALSE_POSITIVES,
    FAMILIES,
    FORMERLY_CLEAN,
    PAIRED_KEY,
    SPLIT_PATHS,
    TOKEN,
)
from .test_prefilter import _clean, _context

SECRETS = (TOKEN, PAIRED_KEY)
ROWS = [(family, text, secret) for family, rows in FAMILIES.items() for text, secret in rows]
# The token family is found only by the secrets the session knows; the rest by shape alone.
BY_SHAPE = [row for row in ROWS if row[0] != "token"]


def _gone(secret: str, redacted: str) -> bool:
    return secret not in redacted and normalize(secret) not in normalize(redacted)


@pytest.mark.parametrize(("family", "text", "secret"), ROWS)
def test_each_spelling_is_redacted_in_chat(family: str, text: str, secret: str) -> None:
    redacted, kinds = redact(text, secrets=SECRETS)
    assert kinds, (family, text)
    assert _gone(secret, redacted), (family, redacted)
    assert "[已隐去:" in redacted


@pytest.mark.parametrize(("family", "text", "secret"), BY_SHAPE)
def test_each_spelling_is_refused_as_a_save_name(family: str, text: str, secret: str) -> None:
    name = text[:64]  # SAVE_NAME_MAX
    with pytest.raises(ForbiddenContentError) as caught:
        check_identity(Identity(game_id="stardew-valley", save_id="s1", save_name=name))
    assert caught.value.fields == ("identity.saveName",), name


@pytest.mark.parametrize(("family", "text", "secret"), ROWS)
def test_each_spelling_is_refused_in_a_model_context(family: str, text: str, secret: str) -> None:
    assert find_forbidden(text, secrets=SECRETS, strict=True) is not None, text
    if family == "token":  # the decoder cannot know the token; the session's check does
        with pytest.raises(ForbiddenContentError):
            check_secrets(StateUpdate(model_context=_context(text)), SECRETS)
    else:  # the prefilter does not vouch for it, and the exact check refuses it
        assert not _clean(_context(text)), text
        with pytest.raises(ForbiddenContentError):
            check_model_context(_context(text))


@pytest.mark.parametrize(("first", "second", "secret"), SPLIT_PATHS)
def test_a_path_completed_in_the_next_message_is_redacted(
    first: str, second: str, secret: str
) -> None:
    redacted, kinds = redact(second, before=tail(first))
    assert "path" in kinds, (first, second, redacted)
    assert _gone(secret, redacted), redacted


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("我到 C:", "明天再说"),
        ("进度 3/", "5 了"),
        ("冒号结尾：", "好的"),
        ("路径 D:", "和 E: 都满了"),
    ],
)
def test_a_message_after_an_open_end_keeps_its_ordinary_words(first: str, second: str) -> None:
    assert redact(second, before=tail(first)) == (visible(second), [])


@pytest.mark.parametrize("text", FALSE_POSITIVES)
def test_ordinary_game_phrases_stay_as_typed(text: str) -> None:
    assert find_forbidden(text) is None, text
    assert redact(text) == (visible(text), [])


@pytest.mark.parametrize("text", FORMERLY_CLEAN)
def test_bare_long_numbers_and_random_runs_are_now_redacted(text: str) -> None:
    redacted, kinds = redact(text)
    assert kinds and redacted.startswith("[已隐去:"), (text, redacted)


@pytest.mark.parametrize("text", CONTEXT_STATE)
def test_a_seed_in_a_model_context_is_game_state(text: str) -> None:
    assert find_forbidden(text, strict=True) is None, text
    check_model_context(_context(text))  # the state.update is kept


def test_the_tables_are_as_large_as_the_note_says() -> None:
    sizes = {family: len(rows) for family, rows in FAMILIES.items()}
    assert all(size >= 5 for size in sizes.values()), sizes
    assert len(ROWS) >= 60 and len(SPLIT_PATHS) >= 5
    assert len(FALSE_POSITIVES) >= 60


@pytest.mark.parametrize(
    "save_id",
    ["5e7196e16e72300361c63bc7", "3F2504E0-4F89-11D3-9A0C-0305E82C3301", "a1b2c3d4e5f6a7b8"],
)
def test_a_save_id_that_is_a_hex_hash_is_taken(save_id: str) -> None:
    """A mod that derives its saveId as a hash in hex (or a UUID) is not refused by shape."""
    check_identity(Identity(game_id="stardew-valley", save_id=save_id))


@pytest.mark.parametrize(
    "save_id",
    ["110000101a2b3c4d", "0x011000010a2b3c4d", "76561198012345678", "s-76561198012345678"],
)
def test_a_save_id_holding_a_steam_id_is_refused_in_hex_or_decimal(save_id: str) -> None:
    save_id = save_id.replace("0x", "")
    with pytest.raises(ForbiddenContentError) as caught:
        check_identity(Identity(game_id="stardew-valley", save_id=save_id))
    assert caught.value.fields == ("identity.saveId",)
