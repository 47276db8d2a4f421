"""derive_save_id: opaque, stable, the saveId pattern, no collisions."""

from __future__ import annotations

import re

import pytest

from xtyserver.adapter.saveid import SAVE_ID_CHARS, derive_save_id, new_salt, save_id_message
from xtyserver.protocol.forbidden import find_forbidden

PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
SALT = "00112233445566778899aabbccddeeff"
FEATURES = {"farm": "Sunny Farm", "created": "1714700000", "seed": "42"}
# The vector the C# and Lua adapters are tested against too.
VECTOR = "5qerlvpodf25qawmxprrvkd4qe"
# Eleven vectors the three adapters must agree on (issue 36 item 14). The last four sort
# differently by UTF-16 units than by code point: an astral character (an emoji, a
# mathematical letter: a surrogate pair, D800-DFFF) after a full-width letter (FF21-FF5A) or
# a private-use character (E000); v1.md "Identity" says code point order.
VECTORS: list[tuple[dict[str, str], str]] = [
    (FEATURES, VECTOR),
    ({"farm": "小汤圆的农场", "seed": "42"}, "w22sarc4u2gkeos7qwrpb5impq"),
    ({"colony": "Bubbles", "seed": "1845874684"}, "l4ant2duymuvhp57lnexn6ndfm"),
    ({"session": "A1B2C3D4E5F60789", "seed": "1714700000"}, "echpyanx2wgh262d773ewp5vhi"),
    ({"a": "", "ab": "c"}, "x6clywqock6j7q737l6zclumtm"),
    ({"é": "1", "e": "2", "E": "3"}, "kh47b54tupif7nt3jj7yltsfme"),
    ({"key with space": "value=with=equals"}, "zaxizpar3vcc46lylxnhnlfil4"),
    ({"Ｆarm": "full-width F", "😀": "emoji"}, "474j25giytkog6eb34w4lpucga"),
    ({"ａ": "1", "𝒶": "2", "z": "3"}, "p4i3ha37fry7aefl67b6prtu5a"),
    ({"～": "tilde", "🌟": "star", "\ue000": "private use"}, "4s4dupfj63twkwu62a4reyzjxu"),
    (
        {"ＡＢ": "full", "AB": "half", "🍡": "dango", "汤圆": "tangyuan"},
        "preehjmfk3tk6iqjvsyojs5fqq",
    ),
]


def test_save_id_is_the_known_vector_and_passes_the_pattern() -> None:
    save_id = derive_save_id(FEATURES, SALT)
    assert save_id == VECTOR
    assert len(save_id) == SAVE_ID_CHARS and PATTERN.match(save_id)
    assert re.fullmatch(r"[a-z2-7]{26}", save_id)


def test_the_eleven_vectors_sort_keys_by_code_point() -> None:
    for features, expected in VECTORS:
        assert derive_save_id(features, SALT) == expected
    # The edge: UTF-16 order would differ from code point order for the last four.
    by_unit = [f for f, _ in VECTORS if sorted(f) != sorted(f, key=lambda k: k.encode("utf-16-be"))]
    assert len(by_unit) == 4
    emoji_after = save_id_message({"Ｆarm": "x", "😀": "y"})
    assert emoji_after.index("Ｆarm".encode()) < emoji_after.index("😀".encode())


def test_save_id_is_stable_and_ignores_feature_order() -> None:
    reordered = dict(reversed(list(FEATURES.items())))
    assert derive_save_id(reordered, SALT) == derive_save_id(FEATURES, SALT)


def test_save_id_depends_on_every_feature_and_the_salt() -> None:
    base = derive_save_id(FEATURES, SALT)
    assert derive_save_id({**FEATURES, "seed": "43"}, SALT) != base
    assert derive_save_id(FEATURES, new_salt()) != base
    # Moving text between key and value changes the message.
    assert save_id_message({"ab": "c"}) != save_id_message({"a": "bc"})


def test_save_id_reveals_no_feature() -> None:
    save_id = derive_save_id({"farm": "Sunny", "user": "alice"}, SALT)
    assert "sunny" not in save_id and "alice" not in save_id


def test_save_id_refuses_no_features_or_no_salt() -> None:
    with pytest.raises(ValueError):
        derive_save_id({}, SALT)
    with pytest.raises(ValueError):
        derive_save_id(FEATURES, "")


def test_100000_generated_saves_never_collide() -> None:
    salt = new_salt()
    ids = {
        derive_save_id(
            {"farm": f"Farm {i % 97}", "created": str(1_700_000_000 + i), "seed": str(i)}, salt
        )
        for i in range(100_000)
    }
    assert len(ids) == 100_000
    sample = list(ids)[:2000]
    assert all(PATTERN.match(s) and find_forbidden(s) is None for s in sample)
