"""Privacy: spellings of paths, ids and e-mails beyond the plain ones.

Every row of :data:`CAUGHT3` must be found with its kind in chat text (and
redacted, the secret gone), in a modelContext string and in a save name (both
refused, see ``test_codec_round3``); every look-alike family of round two
(``test_forbidden.VARIANTS``) must get the same verdict. Every row of
:data:`CLEAN3` must stay untouched (v1.md "Forbidden content",
"Normalisation").
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.property_budget import examples
from xtyserver.protocol.forbidden import (
    DEFAULT_PLACEHOLDERS,
    _kept_spans,
    _spans,
    find_forbidden,
    redact,
)
from xtyserver.protocol.judged import Judged, judged
from xtyserver.protocol.normalize import normalize, visible

from .test_forbidden import CAUGHT, CLEAN, VARIANTS, look_alike

# (text, kind, a piece of the secret that must not survive redaction)
CAUGHT3: list[tuple[str, str, str]] = [
    # Steam ids in other scripts' digits, in groups, split in two
    ("我的 steam 是 ٧٦٥٦١١٩٨٠١٢٣٤٥٦٧٨", "account_id", "٧٦٥٦"),
    ("steam id ७६५६११९८०१२३४५६७८", "account_id", "७६५६"),
    ("my id is ۷۶۵۶۱۱۹۸۰۱۲۳۴۵۶۷۸", "account_id", "۷۶۵۶"),
    ("Steam: 7656 1198 0123 4567 8", "account_id", "4567"),
    ("我的号 7656-1198-0123-4567-8 加我", "account_id", "4567"),
    ("id 76561198.01234567.8", "account_id", "01234567"),
    ("7656  1198--0123 4567 8", "account_id", "0123"),
    ("我的号前半段是76561198，后半段是012345678。", "account_id", "012345678"),
    ("my id starts 765611980 and ends with 12345678", "account_id", "12345678"),
    # look-alike letters in e-mail addresses and key prefixes
    ("联系 bоb@exаmple.com", "email", "exаmple"),  # Cyrillic о, а
    ("mail: αlice@example.com", "email", "lice@"),  # Greek α
    ("ѕk-proj-ABCDEFGHIJKLMNOPQRSTUVWX", "api_key", "ABCDEFGHIJ"),  # Cyrillic ѕ
    ("key ѕk-аnt-api03-AbCdEfGhIjKlMnOpQrStUv", "api_key", "AbCdEfGh"),
    ("token ghр_0123456789abcdefghijklmnopqrstuvwxyzAB", "api_key", "0123456789"),  # Cyrillic р
    ("ΑΚΙΑIOSFODNN7EXAMPLE", "api_key", "IOSFODNN7"),  # Greek Α, Κ, Ι
    # 。 and ． as the dot; spelled-out at and dot
    ("bob@example。com", "email", "bob"),
    ("邮箱 canary@qq。com 谢谢", "email", "canary"),
    ("bob@mail．example．org", "email", "bob"),
    ("name [at] example [dot] com", "email", "name"),
    ("bob(at)gmail(dot)com", "email", "bob"),
    ("写信给 alice [at] example.com 吧", "email", "alice"),
    ("carol {at} mail [dot] example [dot] org", "email", "carol"),
    ("dave <at> example dot net", "email", "dave"),
    ("steamcommunity。com/id/canaryuser", "account_id", "canaryuser"),
    # paths the Chinese way, without a drive, over a NAS, in base64
    ("C盘/用户/张伟/文档", "path", "张伟"),
    ("存档在 D盘\\游戏\\星露谷 里", "path", "星露谷"),
    ("此电脑 > 本地磁盘 (C:) > 用户 > 张伟", "path", "张伟"),
    ("This PC > Local Disk (C:) > Users > alice", "path", "alice"),
    ("Users\\alice\\AppData\\Roaming", "path", "alice"),
    ("在 用户\\张伟\\AppData 下面", "path", "张伟"),
    ("Users/alice/Documents/saves", "path", "alice"),
    ("//NAS/home/alice", "path", "alice"),
    ("备份在 //nas-box/homes/张伟/存档", "path", "张伟"),
    ("看这个 QzpcVXNlcnNcYWxpY2VcQXBwRGF0YQ== 是什么", "path", "QzpcVXNlcnNc"),
    ("encoded: Ym9iQGV4YW1wbGUuY29t", "email", "Ym9iQGV4"),
    # Windows SIDs and machine names
    ("S-1-5-21-3623811015-3361044348-30300820-1013", "account_id", "3623811015"),
    ("我的SID是 S-1-5-21-1004336348-1177238915-682003330-512", "account_id", "1004336348"),
    ("DESKTOP-7KQ2M3P", "machine_name", "7KQ2M3P"),
    ("电脑名 LAPTOP-4F2K9QZ1 开不了机", "machine_name", "4F2K9QZ1"),
    ("host WIN-8J3K2L1M0N9 crashed", "machine_name", "8J3K2L1M0N9"),
    # IPv4 and MAC addresses
    ("我的IP是192.168.1.23", "network_address", "192.168"),
    ("connect to 10.0.0.5 please", "network_address", "10.0.0.5"),
    ("server 10.0.0.5 is down", "network_address", "10.0.0.5"),
    ("游戏服务器地址：47.100.12.8", "network_address", "47.100.12.8"),
    ("MAC 00:1A:2B:3C:4D:5E", "network_address", "3C:4D"),
    ("网卡 00-1a-2b-3c-4d-5e", "network_address", "3c-4d"),
    # Every pair ending in a digit: no colon after a letter, no hyphen after one.
    ("MAC a0:b1:c2:d3:e4:f5", "network_address", "c2:d3"),
    ("网卡 a0-b1-c2-d3-e4-f5", "network_address", "c2-d3"),
    # Chinese mobile numbers, id card numbers
    ("手机 13812345678", "phone", "12345678"),
    ("电话 +86 138 1234 5678", "phone", "1234"),
    ("call me at 139-1234-5678", "phone", "5678"),
    ("身份证 11010519491231002X", "id_card", "19491231"),
    ("my ID card is 440304199001011233", "id_card", "19900101"),
    # QQ numbers and WeChat ids, when named
    ("我的QQ是 12345678", "account_id", "12345678"),
    ("加我扣扣：987654321", "account_id", "987654321"),
    ("qq 10001234 thanks", "account_id", "10001234"),
    ("QQ号码 1234 5678", "account_id", "1234"),
    ("微信：abc_12345", "account_id", "abc_12345"),
    ("WeChat id: zhang_wei88", "account_id", "zhang_wei88"),
    ("wx: lucky-cat-2026", "account_id", "lucky-cat"),
    ("加微信 wxid_abc1234", "account_id", "abc1234"),
]

# Ordinary text near each new kind: it must stay as typed.
CLEAN3: list[str] = [
    "QQ飞车 3 局",
    "我用微信聊天",
    "微信 message 发我",
    "wechat me later",
    "wx 好",
    "wx4ejibbqktolsnp3j2mkh6qrr",  # a derived saveId (the adapter's base32)
    "k3qq4567abcdefghijklmnopqr",
    "版本 1.2.3.4",
    "v1.2.3.4",
    "version 1.6.15.1",
    "游戏版本 1.2.3.4",
    "ver. 2.0.1.3",
    "Stardew 1.6.14",
    "坐标 (64, 15)",
    "x=12 y=-3",
    "价格 300",
    "第 12 天",
    "2026-11-30",
    "12:30:45",
    "共 12345 金",
    "金币 1380000",
    "得分 13812345",
    "售价 19,999 元",
    "订单 2026113012",
    "C盘满了",
    "D盘空间不够了！",
    "此电脑很卡",
    "desktop-version",
    "LAPTOP-STAND",
    "win-win",
    "PC-98 游戏",
    "S-1 赛季",
    "S-1-5 小组",
    "dot com 泡沫",
    "meet at the dock",
    "meet me @ pierre.shop",
    "[at] the farm",
    "Users 都在线",
    "用户/设置",
    "我的用户名是张伟",
    "// TODO 明天",
    "1.2.3",
    "256.1.1.1",
    "Supercalifragilisticexpialidocious",
    "internationalization",
    "765611980",  # the first half of a Steam id alone
    "76561198 和 12 个",
    "١٢٣ 个苹果",  # Arabic-Indic digits in a count
    "第 ७ 天",
    "привет, как дела?",  # Russian
    "Καλημέρα",  # Greek
    "今天适合去钓鱼吗？（认真的）",
    "好的～明天见…①②③ 😀 ｶﾀｶﾅ ＡＢＣ",
]


_CAUGHT3_VARIANTS = [
    pytest.param(text, kind, family, id=f"{kind}-{n}-{family}")
    for n, (text, kind, _) in enumerate(CAUGHT3)
    for family in VARIANTS
]


@pytest.mark.parametrize(("text", "kind", "secret"), CAUGHT3)
def test_each_new_spelling_is_caught_with_its_kind_and_redacted(
    text: str, kind: str, secret: str
) -> None:
    assert find_forbidden(text) == kind
    redacted, kinds = redact(text)
    assert kinds == [kind]
    assert DEFAULT_PLACEHOLDERS[kind] in redacted
    assert secret not in redacted and secret not in normalize(redacted)
    assert find_forbidden(redacted) is None


@pytest.mark.parametrize(("text", "kind", "family"), _CAUGHT3_VARIANTS)
def test_each_look_alike_of_a_new_spelling_is_caught_like_it(
    text: str, kind: str, family: str
) -> None:
    plain, plain_kinds = redact(text)
    for variant in VARIANTS[family](text):
        assert find_forbidden(variant) == kind, variant
        redacted, kinds = redact(variant)
        assert kinds == plain_kinds, variant
        assert normalize(redacted) == normalize(plain), variant


@pytest.mark.parametrize("text", CLEAN3 + CLEAN)
def test_ordinary_text_near_the_new_kinds_stays_as_typed(text: str) -> None:
    assert find_forbidden(text) is None, text
    assert redact(text) == (visible(text), [])


@pytest.mark.parametrize("text", CLEAN3)
def test_each_look_alike_of_ordinary_text_near_the_new_kinds_stays_clean(text: str) -> None:
    for family, make in VARIANTS.items():
        for variant in make(text):
            assert find_forbidden(variant) is None, (family, variant)


def test_tables_cover_every_new_kind_in_both_languages() -> None:
    kinds = {kind for _, kind, _ in CAUGHT3}
    assert {"network_address", "machine_name", "phone", "id_card"} <= kinds
    assert len(CAUGHT3) >= 50 and len(CLEAN3) >= 40
    for kind in ("path", "account_id", "email", "network_address", "machine_name", "phone"):
        rows = [t for t, k, _ in CAUGHT3 if k == kind]
        assert any(any("\u4e00" <= c <= "\u9fff" for c in t) for t in rows), kind
        assert any(not any("\u4e00" <= c <= "\u9fff" for c in t) for t in rows), kind
    assert any(t.isascii() for t in CLEAN3) and any(not t.isascii() for t in CLEAN3)


@settings(max_examples=examples(3000), deadline=None)
@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz234567", min_size=26, max_size=26))
def test_a_derived_save_id_is_never_forbidden(save_id: str) -> None:
    # Twenty-six digits are a long number like any other (privacy by shape); a hash
    # gives one once in 10^19.
    assume(not save_id.isdigit())
    # adapter/saveid.py derives saveIds as 26 base32 characters; a QQ or WeChat
    # label inside one is not a label, and its digits are never a phone number.
    assert find_forbidden(save_id) is None


# -- the player's words as typed (part 4) -------------------------------------------


def test_the_players_punctuation_reaches_the_output_as_typed() -> None:
    text = "今天适合去钓鱼吗？（认真的）"
    assert redact(text) == (text, [])
    kept = "好的～明天见…① 😀 ｶﾀｶﾅ ＡＢＣ，我的邮箱 ｂｏｂ＠ｅｘａｍｐｌｅ．ｃｏｍ！"
    redacted, kinds = redact(kept)
    assert redacted == "好的～明天见…① 😀 ｶﾀｶﾅ ＡＢＣ，我的邮箱 [已隐去:邮箱]！"
    assert kinds == ["email"]


def test_only_invisible_characters_are_removed() -> None:
    assert redact("今天\u200b钓鱼\u202e吗？") == ("今天钓鱼吗？", [])


def test_a_span_is_mapped_across_expansions_and_combining_marks() -> None:
    # ㍿ is four characters in the normal form, é two in the kept text.
    text = "㍿ café 的邮箱 ｂｏｂ＠ｅｘａｍｐｌｅ．ｃｏｍ ﬁsh"
    redacted, _ = redact(text)
    assert redacted == "㍿ café 的邮箱 [已隐去:邮箱] ﬁsh"
    # (é is a letter an address may hold, so a comma ends the text before it.)
    text = "e\u0301，ｂｏｂ＠ｅｘａｍｐｌｅ．ｃｏｍ"
    assert redact(text) == ("e\u0301，[已隐去:邮箱]", ["email"])


def test_the_adapter_token_typed_into_chat_is_redacted() -> None:
    token = "q3J9vX2mL8pR4tY6wZ1aB5cD7eF0gH2jK4lM6nP8rS0"
    redacted, kinds = redact(f"我的 token 是 {token} 对吗？", secrets=(token,))
    assert redacted == "我的 token 是 [已隐去:密钥] 对吗？"
    assert kinds == ["api_key"]
    full_width = "".join(chr(ord(c) + 0xFEE0) for c in token)
    assert redact(full_width, secrets=(token,)) == ("[已隐去:密钥]", ["api_key"])
    assert find_forbidden(token, secrets=(token,)) == "api_key"
    assert find_forbidden(token) == "api_key"  # without the secret: a random run is a key
    assert redact("hi", secrets=("",)) == ("hi", [])


# -- the offset map (property) --------------------------------------------------------

_KEPT = st.sampled_from(
    ["？", "（", "）", "～", "…", "①", "😀", "ｶ", "Ａ", "㍿", "ﬁ", "e\u0301", "\u200b", " ", "，"]
)
_PIECES = st.sampled_from([t for t, _, _ in CAUGHT3] + [t for t, _ in CAUGHT] + CLEAN3)
_TEXTS = st.one_of(
    st.lists(st.one_of(_KEPT, _PIECES, _PIECES.flatmap(look_alike)), max_size=6).map("".join),
    st.text(max_size=80),
)


@settings(max_examples=examples(500), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_TEXTS)
def test_every_span_the_judged_form_redacts_is_redacted_in_the_kept_text(text: str) -> None:
    kept = visible(text)
    judge = Judged(kept)
    assert judge.text == judged(kept)
    covered = _kept_spans(kept, ())
    for start, end, _ in _spans(judge, ()):
        k_start, k_end = judge.kept_span(start, end)
        # The map is right: those kept characters judge to the span's text ...
        assert judge.text[start:end] in judged(kept[k_start:k_end])
        # ... and redaction replaces all of them.
        assert any(a <= k_start and k_end <= b for a, b, _ in covered), (start, end)
    redacted, kinds = redact(text)
    assert find_forbidden(redacted) is None
    assert bool(kinds) == bool(covered)
    # Outside the redacted spans the kept text is untouched (when one pass
    # suffices: a replacement may uncover a match next to it, caught next pass).
    parts, last = [], 0
    for a, b, kind in covered:
        parts += [kept[last:a], DEFAULT_PLACEHOLDERS[kind]]
        last = b
    one_pass = "".join([*parts, kept[last:]])
    if not _kept_spans(one_pass, ()):
        assert redacted == one_pass
