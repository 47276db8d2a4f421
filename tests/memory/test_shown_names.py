"""Names the game shows beside the ids a mod sends: aliases of the glossary entry, per save."""

from __future__ import annotations

from xtyserver.memory.glossary import TERM_PREFIX, parse_documents
from xtyserver.memory.shown_names import MAX_SHOWN, ShownNames, alias_terms, key_of
from xtyserver.memory.tokenize import tokenize

DOC = {
    "game": "stardew-valley",
    "item": {
        "fishing_rod": {"en": "Fishing Rod", "zh": "鱼竿"},
        "bamboo_pole": {
            "en": "Bamboo Pole",
            "zh": "竹竿",
            "ids": ["(O)BambooPole"],
            "broader": "fishing_rod",
        },
        "cow": {"en": "Cow", "zh": "奶牛", "ids": ["Mod.Cow"]},
    },
}
GAME = parse_documents([("test", DOC)]).for_game("stardew-valley")


def terms(text: str, pairs: list[tuple[str, str]]) -> set[str]:
    asked = set(tokenize(text)) | {TERM_PREFIX + k for k in GAME.entities(tokenize(text))}
    return alias_terms(GAME, text, asked, pairs)


def test_an_id_names_its_entry_by_any_of_its_whole_names_only() -> None:
    assert key_of(GAME, "(O)BambooPole") == "bamboo_pole"
    assert key_of(GAME, "bamboo pole") == "bamboo_pole"
    assert key_of(GAME, "Bamboo") == ""  # part of a name is not the name
    assert key_of(GAME, "Mod.Unknown") == ""


def test_saying_the_shown_name_asks_for_the_entry_and_the_broader_ones() -> None:
    pairs = [("(O)BambooPole", "入门钓竿")]
    assert terms("我的入门钓竿放哪了？", pairs) == {"@bamboo_pole", "@fishing_rod"}
    # Naming the entry asks for the shown name's words.
    assert terms("Where is my Bamboo Pole?", pairs) == set(tokenize("入门钓竿"))
    assert terms("今天下雨", pairs) == set()


def test_a_one_character_shown_name_is_found_inside_a_sentence() -> None:
    assert "@cow" in terms("我的牛呢", [("Mod.Cow", "牛")])
    assert terms("我的猪呢", [("Mod.Cow", "牛")]) == set()


def test_an_id_the_glossary_lacks_gives_no_alias() -> None:
    assert terms("金鱼在哪", [("Mod.Goldfish", "金鱼")]) == set()


def test_a_session_keeps_the_newest_32_shown_names_of_its_save() -> None:
    shown = ShownNames()
    shown.learn("(O)1", "一")
    shown.learn("(O)1", "一")  # the same pair once
    shown.learn("Rod", "Rod")  # the id as its own name adds nothing
    shown.learn("Rod", None)
    assert shown.pairs() == (("(O)1", "一"),)
    for n in range(2, MAX_SHOWN + 2):
        shown.learn(f"(O){n}", f"名{n}")
    pairs = shown.pairs()
    assert len(pairs) == MAX_SHOWN
    assert pairs[0] == ("(O)2", "名2") and pairs[-1] == (
        f"(O){MAX_SHOWN + 1}",
        f"名{MAX_SHOWN + 1}",
    )
    shown.learn("(O)2", "名二")  # shown again, renamed: newest
    assert shown.pairs()[-1] == ("(O)2", "名二") and len(shown.pairs()) == MAX_SHOWN
