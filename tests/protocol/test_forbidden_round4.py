"""Privacy round four: each family of spellings caught by a general rule.

Per family (:data:`FAMILIES`) a table of spellings a player or a mod would
paste; every row must be found with its kind in chat text and redacted (the
secret piece gone), in the judged form too after the look-alike variants of
round two, and refused in a modelContext string (the byte prefilter must not
pass it). :data:`CLEAN4` is the false-positive table: ordinary text near each
rule stays as typed; :data:`CONTEXT_CLEAN` holds what a modelContext string
may hold, which the strict rules (long numbers, path shapes) must let pass
(v1.md "Forbidden content").
"""

from __future__ import annotations

import pytest

from xtyserver.protocol.forbidden import DEFAULT_PLACEHOLDERS, find_forbidden, redact
from xtyserver.protocol.normalize import normalize, visible
from xtyserver.protocol.secret_match import PIECE_MIN, skeleton

from .test_forbidden import CLEAN, VARIANTS
from .test_forbidden_round3 import CLEAN3
from .test_prefilter import _clean, _context

# (text, kind, a piece that must not survive redaction)
Row = tuple[str, str, str]

STEAM_IDS: list[Row] = [
    ("我的steam是七六五六一一九八零一二三四五六七八", "account_id", "一二三四五六七八"),
    ("七六五六一一九八〇一二三四五六七八", "account_id", "一二三四"),
    ("柒陆伍陆壹壹玖捌零壹贰叁肆伍陆柒捌", "account_id", "壹贰叁肆"),
    ("7656一198零123四567八", "account_id", "四567"),
    ("7656😀1198😀0123😀4567😀8", "account_id", "4567"),
    ("7656_1198_0123_4567_8", "account_id", "0123_4567"),
    ("7656、1198、0123、4567、8", "account_id", "0123、4567"),
    ("7656，1198，0123，4567，8", "account_id", "4567"),
    ("7·6·5·6·1·1·9·8·0·1·2·3·4·5·6·7·8", "account_id", "4·5·6"),
    ("76561198 / 012345678", "account_id", "012345678"),
    ("7656*1198*0123*4567*8", "account_id", "4567"),
    ("❼❻❺❻①①⑨⑧⓪①②③④⑤⑥⑦⑧", "account_id", "④⑤⑥"),
    ("７６５６　１１９８　０１２３　４５６７　８", "account_id", "４５６７"),
    ("id: 7-6-5-6-1-1-9-8-0-1-2-3-4-5-6-7-8", "account_id", "4-5-6-7"),
    ("手机一三八一二三四五六七八", "phone", "一二三四五六七八"),
    ("call 138😀1234😀5678", "phone", "5678"),
]

EMAILS: list[Row] = [
    ("bob at example dot com", "email", "example"),
    ("Bob AT Example DOT Com", "email", "Example"),
    ("mail bob.smith at mail dot example dot org", "email", "smith"),
    ("bob 艾特 qq 点 com", "email", "bob"),
    ("我的邮箱是zhangwei艾特163点com", "email", "zhangwei"),
    ("zhangwei 艾特 qq.com", "email", "zhangwei"),
    ("bob @ example.com", "email", "bob"),
    ("bob @example.com", "email", "bob"),
    ("bob@ example . com", "email", "example"),
    ("bob(at)qq点com", "email", "bob"),
    ("bob[at]example[点]com", "email", "bob"),
    ("bob@εxample.com", "email", "xample"),  # Greek ε (not a TR39 look-alike of e)
    ("βob@example.com", "email", "ob@"),  # Greek β
    ("δavid@gmαil.com", "email", "avid"),
    ("bοb@exαmple.cοm", "email", "exαmple"),
    ("иван@почта.рф", "email", "иван"),
    ("bob＠example．com", "email", "bob"),
    ("bob﹫example.com", "email", "bob"),
]

IPV6: list[Row] = [
    ("2001:0db8:85a3:0000:0000:8a2e:0370:7334", "network_address", "8a2e"),
    ("my ip is 2001:db8::8a2e:370:7334", "network_address", "8a2e"),
    ("fe80::1ff:fe23:4567:890a%eth0", "network_address", "fe23"),
    ("IPv6地址：240e:3b7:3272:d8d0:a1b2:c3d4:e5f6:7890", "network_address", "d8d0"),
    ("[2001:db8::1]:8080", "network_address", "db8"),
    ("2001:db8:0:0:1:0:0:1", "network_address", "db8"),
    ("２００１：ｄｂ８：：８ａ２ｅ：３７０：７３３４", "network_address", "８ａ２ｅ"),
]

MACS: list[Row] = [
    ("MAC 001A2B3C4D5E", "network_address", "3C4D"),
    ("网卡地址001a2b3c4d5e", "network_address", "3c4d"),
    ("MAC:00:1A:2B:3C:4D:5E", "network_address", "3C:4D"),
    ("我的MAC是00:1A:2B:3C:4D:5E吗", "network_address", "3C:4D"),
    ("物理地址: 00-1A-2B-3C-4D-5E", "network_address", "3C-4D"),
    ("mac 00 1A 2B 3C 4D 5E", "network_address", "3C 4D"),
    ("mac 00.1a.2b.3c.4d.5e", "network_address", "3c.4d"),
    ("cisco 001a.2b3c.4d5e", "network_address", "2b3c"),
    ("mac 00_1a_2b_3c_4d_5e", "network_address", "3c_4d"),
]

PATHS: list[Row] = [
    ("AppData\\Local\\Steam", "path", "Steam"),
    ("存档在AppData\\Roaming\\StardewValley\\Saves里", "path", "StardewValley"),
    ("appdata/local/Klei/DoNotStarveTogether", "path", "Klei"),
    ("Saved Games\\MyGame\\save1", "path", "MyGame"),
    ("OneDrive\\文档\\存档", "path", "存档"),
    ("桌面\\截图\\bug.png", "path", "bug.png"),
    ("游戏\\星露谷\\存档", "path", "星露谷\\存档"),
    ("Mods\\SMAPI\\logs\\SMAPI-latest.txt", "path", "SMAPI-latest"),
    ("smb://nas/home/alice", "path", "alice"),
    ("在 smb://192.168.1.5/share/张伟 里", "path", "张伟"),
    ("//NAS/home/wangfang", "path", "wangfang"),
    ("路径//nas-box/homes/张伟/存档", "path", "张伟"),
]

KEYS: list[Row] = [
    ("sk-proj-ABCD1234 EFGH5678 IJKL9012 MNOP3456", "api_key", "IJKL9012"),
    ("我的key sk-1a2b3c4d 5e6f7a8b 9c0d1e2f", "api_key", "9c0d1e2f"),
    ("sk-ant-api03-AbCd EfGh IjKl MnOp QrSt", "api_key", "QrSt"),
    ("ghp_0123456789ab cdefGHIJklmnop QRSTUVWXYZab", "api_key", "QRSTUVWXYZ"),
    ("AKIA IOSF ODNN 7EXA MPLE", "api_key", "ODNN"),
    ("hf_ABCDEFGHIJ KLMNOPQRST UVWXYZ0123", "api_key", "UVWXYZ0123"),
]

FAMILIES: dict[str, list[Row]] = {
    "steam ids and phones in other numerals, separated": STEAM_IDS,
    "e-mails spelled out, spaced, in other letters": EMAILS,
    "IPv6 addresses": IPV6,
    "MAC addresses without or with any separator": MACS,
    "profile folders, relative and share paths": PATHS,
    "keys split by spaces": KEYS,
}
CAUGHT4: list[Row] = [row for rows in FAMILIES.values() for row in rows]

# What a modelContext string never holds: refused there outright.
CONTEXT_REFUSED: list[str] = [
    "12345678901",  # eleven digits, whatever they are
    "金币 1 2345 6789 012",
    "一二三四五六七八九〇一",
    "123-4567-8901",
    "Farm\\House",
    "Mods/Custom/Farm",
    "C盘/存档",
]

# Ordinary text near every new rule: stays as typed, in chat and modelContext.
CLEAN4: list[str] = [
    # numbers: prices, days, counts, dates, versions, coordinates
    "价格 300",
    "售价 1,380,000 金",
    "第10000天",
    "第 7 天 和 第 6 天",
    "2026-11-30 12:30:45",
    "2026/11/30",
    "12:30:45",
    "版本 1.6.15",
    "坐标 (64, 15)",
    "坐标 (-120, 64, 3000)",
    "x=12 y=-3",
    "3 个苹果、4 个梨、5 根胡萝卜",
    "1、2、3、4 号箱子",
    "HP 50/100",
    "进度 3/5",
    "QQ糖",
    "QQ糖 3 包",
    "QQ飞车",
    "第一天",
    "一五一十地说",
    "三三两两",
    "七七八八",
    "乱七八糟",
    "九九八十一难",
    "十一点见",
    "一二三，木头人",
    "共 12345 金",
    "10000 木材",
    "①②③",
    "得分 13,812,345",
    "电话? 不要",
    # e-mail-like prose
    "meet at the dock",
    "meet me @ pierre.shop",
    "I bought it at amazon.com",
    "look at this.",
    "at home. dot is my cat",
    "艾特我一下",
    "我在农场点了火",
    "下午三点见",
    "Alice @ the saloon",
    "@Abigail 你好",
    # addresses, hex, keys
    "std::vector",
    "a::b",
    "::1",
    "fe80::1",
    "12:30:45:00",
    "deadbeefcafe",
    "hash a1b2c3d4",
    "坐标 1234, 5678",
    "种子 3981 7265 0431 的地图",
    "sk-learn is fun",
    "ask-me-anything",
    "AKIA 是什么",
    # backslashes that are not paths
    "¯\\_(ツ)_/¯",
    "\\(^o^)/",
    "C# 10.0",
    "HP\\MP",  # one backslash
    "ok/no",
    "and/or",
    "3.5 倍速",
    "2 + 2 = 4",
    "第 10000 天了！",
    "钓到 3 条鲈鱼、2 条鲶鱼",
    "木头×999，石头×42",
    "今年 2026 年，明年 2027 年",
    "存了 99999 金币",
    "Day 112, Year 3",
    "温度 -12.5℃",
    "10:00-12:00 开门",
    "一千二百三十四",
    "零零散散",
    "三点水",
    "v1.0.0.0",
    "ABC-123",
    "cafe au lait at 9.",
    "pierre 的店在 7 点开门",
]

# What a modelContext string does hold; the strict rules let it pass.
CONTEXT_CLEAN: list[str] = [
    "Farm",
    "皮埃尔的杂货店",
    "三叶草",
    "一级",
    "第10000天",
    "金币 1,380,000,000",
    "2026-11-30 12:30:45",
    "08:10",
    "HP 50/100",
    "进度 3/5",
    "minecraft:diamond_sword",
    "Item 1",
    "春 3 日",
    "Spring 28, Year 12",
    "1/2/3",
]


@pytest.mark.parametrize(("text", "kind", "secret"), CAUGHT4)
def test_each_spelling_is_caught_with_its_kind_and_redacted(
    text: str, kind: str, secret: str
) -> None:
    assert find_forbidden(text) == kind, text
    redacted, kinds = redact(text)
    assert kind in kinds, (text, kinds)
    assert DEFAULT_PLACEHOLDERS[kind] in redacted
    assert secret not in redacted and normalize(secret) not in normalize(redacted), redacted
    assert find_forbidden(redacted) is None


@pytest.mark.parametrize(("text", "kind", "secret"), CAUGHT4)
def test_each_spelling_is_refused_in_a_model_context(text: str, kind: str, secret: str) -> None:
    assert find_forbidden(text, strict=True) is not None
    assert not _clean(_context(text)), text


@pytest.mark.parametrize(("text", "kind", "secret"), CAUGHT4)
def test_each_look_alike_of_a_spelling_is_caught(text: str, kind: str, secret: str) -> None:
    for family, make in VARIANTS.items():
        for variant in make(text):
            assert find_forbidden(variant) is not None, (family, variant)


@pytest.mark.parametrize("text", CONTEXT_REFUSED)
def test_a_model_context_string_refuses_long_numbers_and_path_shapes(text: str) -> None:
    assert find_forbidden(text, strict=True) is not None, text
    assert not _clean(_context(text)), text


@pytest.mark.parametrize("text", CLEAN4 + CLEAN3 + CLEAN)
def test_ordinary_text_stays_as_typed(text: str) -> None:
    assert find_forbidden(text) is None, text
    assert redact(text) == (visible(text), [])


@pytest.mark.parametrize("text", CONTEXT_CLEAN)
def test_ordinary_model_context_strings_pass_the_strict_rules(text: str) -> None:
    assert find_forbidden(text, strict=True) is None, text


def test_the_tables_are_as_large_as_the_note_says() -> None:
    sizes = {name: len(rows) for name, rows in FAMILIES.items()}
    assert all(size >= 6 for size in sizes.values()), sizes
    assert len(CLEAN4) >= 60 and len(CONTEXT_CLEAN) >= 15
    # The whole false-positive table: rounds two, three and four.
    assert len(CLEAN4) + len(CLEAN3) + len(CLEAN) >= 200


def test_a_piece_is_as_long_as_the_secret_rule_says() -> None:
    assert PIECE_MIN == 9
    assert skeleton("Ab-C d_9") == "abcd9"
