"""Privacy round five: my own spellings per family, and the game phrases that must pass.

Data only (tests/protocol/test_forbidden_round5.py and tests/test_server_privacy5.py read
it). Each row is (text, a piece that must not survive redaction). The held-out set of the
``evalset`` helper (eval/heldout/heldout_privacy5.json) was never read while writing these.
"""

from __future__ import annotations

import base64

# The adapter token and a paired key of the tests (43 URL-safe characters, as generated).
TOKEN = "q7ZxK2mP9wLrT4vB8nYc3HdF6sJg1aEe5uNo0iQkW_R"
PAIRED_KEY = "Vb3Nc8Lq2Zr5Tx9Mw1Pk4Hd7Gf0Sj6Ya-Ue2Io5Rp8"


DESKTOP = "C:\\Users\\zhangwei\\Desktop"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


Row = tuple[str, str]

FAMILIES: dict[str, list[Row]] = {
    # Long digit runs in any numeral system and base, separators inside.
    "long_number": [
        ("我的银行卡号 6222 0212 3456 7890 123", "7890"),
        ("卡号6222-0212-3456-7890", "3456"),
        ("信用卡 4111 1111 1111 1111 有效期别问", "1111 1111"),
        ("４１１１１１１１１１１１１１１１", "１１１１１１"),
        ("六二二二零二一二三四五六七八九零", "三四五六七八"),
        ("陆贰贰贰零贰壹贰叁肆伍陆柒捌玖零", "叁肆伍陆"),
        ("6222.0212.3456.7890", "3456"),
        ("62220212 34567890", "34567890"),
        ("我的 discord 是 482910374652019283", "482910374652019283"),
        ("482910374652019283", "4829103746"),
        ("account 1100001038b2d4e", "038b2d4e"),
        ("steam hex 0x1100001038B2D4E", "038B2D4E"),
        ("我的号 0x3f9a2c7e41", "3f9a2c7e41"),
        ("id a3f9-2c7e-41d8-9b06", "41d8-9b06"),
        ("银行卡：六二二八 四八零三 一二三四 五六七八 九", "一二三四"),
    ],
    # base64 and hex runs (an encoded path, name or token).
    "encoded": [
        ("433a5c55736572735c7a68616e677765695c4465736b746f70", "7a68616e"),
        ("路径 " + _b64(DESKTOP), _b64(DESKTOP)[8:20]),
        (_b64("QQ 1234567890"), _b64("QQ 1234567890")[4:12]),
        ("给你 dGhpc0lzTXlTZWNyZXRUb2tlbjEyMzQ1Njc4", "TXlTZWNy"),
        ("key: 9fK2Lm7QxP4rT8vB1nYc6HdZ", "7QxP4rT8"),
        ("2f686f6d652f7a68616e677765692f2e6c6f63616c", "7a68616e"),
        ("ZmlsZTovLy9ob21lL3poYW5nd2Vp", "L3poYW5n"),
    ],
    # An account cue followed by an identifier.
    "cue": [
        ("我的企鹅号 一二三四五六七八九", "五六七八"),
        ("Q号：壹贰叁肆伍陆柒捌玖", "伍陆柒"),
        ("q号 1234 5678 9", "5678"),
        ("扣扣 12345678", "12345678"),
        ("加我V信 zw_1990abc", "zw_1990abc"),
        ("vx：zhangwei1990", "zhangwei1990"),
        ("VX zhangwei_99", "zhangwei_99"),
        ("加我微信 zw_1990abc 一起玩", "zw_1990abc"),
        ("discord: gamer#1234", "gamer#1234"),
        ("我DC是 farmer_joe#0420", "farmer_joe"),
        ("steam好友代码 123456789", "123456789"),
        ("好友代码：8765 4321", "8765 4321"),
        ("Steam friend code 987654321", "987654321"),
        ("我的UID 100234567", "100234567"),
        ("我的账号是 zhangwei2024", "zhangwei2024"),
        ("帐号:farmer_2024", "farmer_2024"),
        ("手机 138 0013 8000", "0013"),
        ("手机号一三八零零一三八零零零", "一三八零零"),
        ("uid=77881234", "77881234"),
    ],
    # Any @-like shape in an e-mail.
    "email": [
        ("zhangwei#qq.com", "zhangwei"),
        ("zhangwei(a)163.com", "zhangwei"),
        ("zhangwei[at]gmail.com", "zhangwei"),
        ("zhangwei 艾特 qq 点 com", "zhangwei"),
        ("zhangwei圈a163.com", "zhangwei"),
        ("zhangwei＃qq.com", "zhangwei"),
        ("zhangwei (at) outlook dot com", "zhangwei"),
        ("zhangwei#foxmail.com 有事找我", "zhangwei"),
        ("邮箱 zhangwei（a）126.com", "zhangwei"),
        ("zhangwei{at}qq.com", "zhangwei"),
    ],
    # The adapter token and a stored (paired) key in any encoding.
    "token": [
        (TOKEN, TOKEN[10:20]),
        (_b64(TOKEN), _b64(TOKEN)[10:24]),
        (base64.urlsafe_b64encode(TOKEN.encode()).decode().rstrip("="), _b64(TOKEN)[24:34]),
        (TOKEN.encode().hex(), TOKEN.encode().hex()[20:40]),
        (TOKEN.encode().hex().upper(), TOKEN.encode().hex().upper()[20:40]),
        (TOKEN[::-1], TOKEN[::-1][10:20]),
        (" ".join(TOKEN[i : i + 4] for i in range(0, len(TOKEN), 4)), TOKEN[12:16]),
        (PAIRED_KEY, PAIRED_KEY[10:20]),
        (_b64(PAIRED_KEY), _b64(PAIRED_KEY)[10:24]),
        (PAIRED_KEY.encode().hex(), PAIRED_KEY.encode().hex()[20:40]),
    ],
    # UNC paths with forward slashes, and a user name inside a log line in chat.
    "path": [
        ("存档在 //NAS/share/zhangwei/saves", "zhangwei"),
        ("//192.168.1.5/share/saves", "192.168.1.5"),
        ("我放在//nas/home/小明/星露谷 了", "小明"),
        ("报错：[ERROR] C:\\Users\\zhangwei\\AppData 找不到", "zhangwei"),
        ("刚才日志 [12:00:01 ERROR SMAPI] user zhangwei failed", "zhangwei"),
    ],
}

# A path completed in the next chat message: (first message, second, a piece of the second
# that must not reach the model).
SPLIT_PATHS: list[tuple[str, str, str]] = [
    ("我的存档在 C:", "\\Users\\zhangwei\\AppData\\Roaming", "zhangwei"),
    ("存档路径是 D:", "/游戏/存档/zhangwei", "zhangwei"),
    ("在 C:\\Users\\", "zhangwei\\Documents", "zhangwei"),
    ("我的家目录 /home/", "zhangwei/.local/share", "zhangwei"),
    ("文件在 \\\\NAS\\", "share\\zhangwei\\saves", "zhangwei"),
]

# Ordinary text of earlier rounds' tables that privacy by shape now redacts: a bare number of
# eleven digits or more (any separators) is an account or card number unless a seed cue names
# it, and a 24-character base64 run mixing cases and digits is an encoded key or token.
FORMERLY_CLEAN: list[str] = [
    "12345678901",
    "12345678901234567",
    "765611980123456789012",
    "110105194912310021",
    "123456789012345678",
    "1234 5678 9012",
    "12 34 56 78 90 12",
    "5LuK5aSp5aSp5rCU5b6I5aW95ZWK",
]

# Ordinary phrases from the three games: nothing may be redacted or refused.
FALSE_POSITIVES: list[str] = [
    # Stardew Valley
    "种子号 398172650431",
    "世界种子 1234567890123",
    "seed: 398172650431",
    "我有 1,000,000 金了",
    "这个卖 2500g",
    "第 2 年春季 13 日",
    "春 28 日下雨",
    "农场坐标 (64, 15)",
    "去矿洞 120 层",
    "钓了 37 条鱼",
    "鸡舍升级要 10000 金和 450 木材",
    "版本 1.6.14",
    "SMAPI 4.1.10 装好了",
    "Stardew Valley 1.6.15 更新了什么",
    "分辨率 1920x1080",
    "分辨率 2560×1440 的时候字太小",
    "颜色 #FF8800 的帽子",
    "RGB(255, 128, 0)",
    "QQ糖是什么",
    "我喜欢吃QQ糖",
    "我在玩 Steam 版",
    "steam 上买的，打折 24 元",
    "手机版也能玩吗",
    "我的账号等级 12 级",
    "微信里看到的攻略",
    "2026-12-07 记得浇水",
    "2026-12-07 08:10:00 存了一次档",
    "今天 18:30 去见阿比盖尔",
    "价格 1,250,000 金",
    "一共 12345 个硬木",
    "鱼塘有 10 条鲟鱼",
    "金星 3 个，银星 5 个",
    # Don't Starve Together
    "世界种子是 1700000000",
    "第 70 天了，冬天",
    "服务器人数 6/6",
    "延迟 120ms",
    "生命 150/150 饥饿 75/150 理智 200/200",
    "坐标 x=312.5 z=-48.25",
    "科技 2 本",
    "猪王给了 10 个金块",
    "DST 版本 591240",
    "服务器代码 KU_abcd1234",
    "蜘蛛巢 3 级",
    "第 21 天猎犬来了",
    "时间 00:01:23",
    "1080p 60fps",
    # Oxygen Not Included
    "SNDST-A-1234567890-0-0-0",
    "种子 SNDST-A-1234567890-0-0-0 很好",
    "氧气 1800 g/s",
    "温度 25.5 °C",
    "周期 312",
    "电量 20 kJ",
    "水 10000 kg",
    "复制人 8 个",
    "CO2 浓度 1.2 kg",
    "地图 256x384",
    "ONI 版本 U51-600112",
    "产出 3,000,000 kcal",
    "管道 10 kg/s",
    "比例 1:3",
    # Shared
    "哈哈哈哈哈哈哈哈",
    "666666",
    "我今天打了 3 个小时",
    "明天 8 点上线",
    "这把 30 连胜",
]

# What a modelContext string may hold (state.update): a seed is game state. A bare 12-digit
# number is not among them: without its seed cue it cannot be told from a QQ number.
CONTEXT_STATE: list[str] = [
    "SNDST-A-1234567890-0-0-0",
    "种子 SNDST-A-1234567890-0-0-0",
    "seed: 398172650431",
    "种子号 398172650431",
    "world seed 398172650431",
]
