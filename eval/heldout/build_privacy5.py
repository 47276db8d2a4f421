"""Build heldout_privacy5.json: privacy held-out set 5 (forbidden spellings, allowed phrases).

HELD OUT: never tune on it. Hand-written blind from the spirit of issue 40, avoiding the
spellings the issue lists. `secret` is the substring that must not reach a model request or
memory. Run with `python3 build_privacy5.py`; check with `python3 validate_privacy5.py`.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "heldout_privacy5.json"

ZH_DIGITS = "零一二三四五六七八九"
FULL_WIDTH = str.maketrans("0123456789Xx-", "０１２３４５６７８９ＸＸ－")


def id_card(base17: str) -> str:
    """A Chinese resident id with a correct ISO 7064 MOD 11-2 check character."""
    weights = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]
    total = sum(int(d) * w for d, w in zip(base17, weights, strict=True))
    return base17 + "10X98765432"[total % 11]


def zh_num(digits: str) -> str:
    return "".join(ZH_DIGITS[int(d)] if d.isdigit() else d for d in digits)


ID1 = id_card("11010519491231002")
ID2 = id_card("44030419900307123")
ID3 = id_card("31011519851120456")
ID4 = id_card("51010719951212789")
ID5 = id_card("33010619880808234")
ID6 = id_card("42010219920615321")
ID7 = id_card("37020219870101567")
ID2_SPACED = f"{ID2[:6]} {ID2[6:14]} {ID2[14:]}"
ID7_DASHED = f"{ID7[:6]}-{ID7[6:14]}-{ID7[14:]}"

CHAT, SAVE, CTX = "chat", "saveName", "modelContext"

# (family, where, text, secret)
FORBIDDEN = [
    # steam_id
    ("steam_id", CHAT, "加我steam好友吧，我的64位ID是 76561198071234567", "76561198071234567"),
    (
        "steam_id",
        CHAT,
        "my steam profile: https://steamcommunity.com/profiles/76561198234567890/ add me",
        "steamcommunity.com/profiles/76561198234567890",
    ),
    (
        "steam_id",
        CHAT,
        "蒸汽平台主页 steamcommunity.com/id/tangyuan_lover_99 来点个赞",
        "steamcommunity.com/id/tangyuan_lover_99",
    ),
    (
        "steam_id",
        CHAT,
        "my SteamID is STEAM_0:1:52839104 if you wanna invite me",
        "STEAM_0:1:52839104",
    ),
    ("steam_id", CHAT, "steam3 的 id 是 [U:1:105678209] 别外传", "[U:1:105678209]"),
    ("steam_id", CHAT, "我的steam号十六进制是 0110 0001 064C 8581", "0110 0001 064C 8581"),
    ("steam_id", CHAT, "加好友用这个码 105-678-209 （steam的）", "105-678-209"),
    ("steam_id", SAVE, "Farm_76561198012345678", "76561198012345678"),
    ("steam_id", CTX, "host=76561198099887766 players=2", "76561198099887766"),
    # qq
    ("qq", CHAT, "扣扣 2837461950 加我一起开黑", "2837461950"),
    ("qq", CHAT, "QQ：２８３７４６１９５０", "２８３７４６１９５０"),
    ("qq", CHAT, "加我Q 283 746 1950，备注汤圆", "283 746 1950"),
    ("qq", CHAT, "我的企鹅是 贰捌叁柒肆陆壹玖伍零", "贰捌叁柒肆陆壹玖伍零"),
    (
        "qq",
        CHAT,
        "my qq is two eight three seven four six one nine five zero",
        "two eight three seven four six one nine five zero",
    ),
    ("qq", SAVE, "扣扣1847293650的农场", "1847293650"),
    ("qq", CHAT, "qq: 1293-8475-60 有事留言", "1293-8475-60"),
    # wechat
    ("wechat", CHAT, "微信号 wxid_8k2j3h4g5f6d22 加一下", "wxid_8k2j3h4g5f6d22"),
    ("wechat", CHAT, "加我绿泡泡：tangyuan_1999", "tangyuan_1999"),
    ("wechat", CHAT, "威信 liming0802，通过一下", "liming0802"),
    ("wechat", CHAT, "WeChat ID: chen-jie_88, ping me there", "chen-jie_88"),
    ("wechat", CHAT, "wei xin 是 xiaohuang2026 别告诉别人", "xiaohuang2026"),
    ("wechat", CHAT, "薇❤：sunny_moon77", "sunny_moon77"),
    ("wechat", SAVE, "微信同号13912345678", "13912345678"),
    # phone
    ("phone", CHAT, "我手机 139-1234-5678 有事打给我", "139-1234-5678"),
    ("phone", CHAT, "电话是 +86 186 0123 4567", "+86 186 0123 4567"),
    ("phone", CHAT, "打我电话 幺三八零零幺三八零零零", "幺三八零零幺三八零零零"),
    ("phone", CHAT, "座机 021-6258 3391 找我", "021-6258 3391"),
    ("phone", CHAT, "call me at (415) 555-0132 after 6", "(415) 555-0132"),
    ("phone", CHAT, "我号码１５８１２３４５６７８", "１５８１２３４５６７８"),
    (
        "phone",
        CHAT,
        "text me: four one five, five five five, zero one nine eight",
        "four one five, five five five, zero one nine eight",
    ),
    ("phone", CTX, "note: contact 17712345678", "17712345678"),
    # email
    ("email", CHAT, "发邮件到 tangyuan.fan at gmail dot com", "tangyuan.fan at gmail dot com"),
    ("email", CHAT, "邮箱 liming＠163．com", "liming＠163．com"),
    ("email", CHAT, "我的邮箱是 xiaoli小老鼠qq点com", "xiaoli小老鼠qq点com"),
    ("email", CHAT, "mail me: sunny_moon{at}outlook{dot}com", "sunny_moon{at}outlook{dot}com"),
    ("email", CHAT, "邮箱 chenjie 爱特 foxmail.com", "chenjie 爱特 foxmail.com"),
    ("email", CHAT, "reach me at wang.fang%40yahoo.com", "wang.fang%40yahoo.com"),
    ("email", SAVE, "zhangwei_AT_hotmail_DOT_com", "zhangwei_AT_hotmail_DOT_com"),
    ("email", CHAT, "email: tang&#64;example.org", "tang&#64;example.org"),
    # discord
    ("discord", CHAT, "迪斯科上找我：TangYuanFan#0420", "TangYuanFan#0420"),
    ("discord", CHAT, "my discord user id is 318475920183746561", "318475920183746561"),
    ("discord", CHAT, "<@!318475920183746561> 来帮我看看", "<@!318475920183746561>"),
    ("discord", CHAT, "dc用户名 @xiao_tang_yuan.99 私聊我", "xiao_tang_yuan.99"),
    ("discord", CHAT, "DC：moonlight_cat 加我一起玩饥荒", "moonlight_cat"),
    ("discord", CHAT, "discord dot com slash users slash 402918374650192837", "402918374650192837"),
    ("discord", CTX, "discord_uid=289374650192837465", "289374650192837465"),
    (
        "discord",
        CHAT,
        "https://discord.com/users/519283746501928374",
        "discord.com/users/519283746501928374",
    ),
    # bank_card
    ("bank_card", CHAT, "银行卡号 6222 0212 3456 7890 123，帮我记一下", "6222 0212 3456 7890 123"),
    ("bank_card", CHAT, "转账到 6217-0000-1234-5678-901", "6217-0000-1234-5678-901"),
    ("bank_card", CHAT, "卡号" + zh_num("6228480402564890123"), zh_num("6228480402564890123")),
    ("bank_card", CHAT, "my visa is 4111 1111 1111 1111 exp 12/28", "4111 1111 1111 1111"),
    (
        "bank_card",
        CHAT,
        "信用卡：５５００－００００－００００－０００４",
        "５５００－００００－００００－０００４",
    ),
    (
        "bank_card",
        CHAT,
        "IBAN DE89 3704 0044 0532 0130 00 for the refund",
        "DE89 3704 0044 0532 0130 00",
    ),
    ("bank_card", CHAT, "招行卡 6225880112345678 里没钱了", "6225880112345678"),
    # id_card
    ("id_card", CHAT, f"身份证 {ID1} 别给别人看", ID1),
    ("id_card", CHAT, f"sfz号：{ID2_SPACED}", ID2_SPACED),
    ("id_card", CHAT, f"我身份证尾巴是小写的，全号 {ID3.lower()}", ID3.lower()),
    ("id_card", CHAT, f"证件号码 {zh_num(ID4)}", zh_num(ID4)),
    ("id_card", CHAT, f"ID number {ID5.translate(FULL_WIDTH)}", ID5.translate(FULL_WIDTH)),
    ("id_card", SAVE, ID6, ID6),
    ("id_card", CHAT, f"实名认证用的 {ID7_DASHED}", ID7_DASHED),
    # windows_path
    (
        "windows_path",
        CHAT,
        "存档在 C:\\Users\\李明\\AppData\\Roaming\\StardewValley\\Saves 里",
        "C:\\Users\\李明\\AppData\\Roaming\\StardewValley\\Saves",
    ),
    (
        "windows_path",
        CHAT,
        "我放在 Ｃ：＼Ｕｓｅｒｓ＼ｗａｎｇｌｅｉ＼Ｄｏｃｕｍｅｎｔｓ＼Ｋｌｅｉ 下面了",
        "Ｃ：＼Ｕｓｅｒｓ＼ｗａｎｇｌｅｉ＼Ｄｏｃｕｍｅｎｔｓ＼Ｋｌｅｉ",
    ),
    (
        "windows_path",
        CHAT,
        "路径是 %USERPROFILE%\\Documents\\Klei\\OxygenNotIncluded\\save_files",
        "%USERPROFILE%\\Documents\\Klei\\OxygenNotIncluded\\save_files",
    ),
    (
        "windows_path",
        CHAT,
        "看这个 C:\\\\Users\\\\wangfang\\\\Documents 有日志",
        "C:\\\\Users\\\\wangfang\\\\Documents",
    ),
    (
        "windows_path",
        CHAT,
        "在 C 盘 Users 文件夹下面 zhangwei 那个目录里的 AppData",
        "C 盘 Users 文件夹下面 zhangwei",
    ),
    (
        "windows_path",
        CHAT,
        "共享在 \\\\DESKTOP-7F3K2QA\\Users\\chen\\Saves",
        "\\\\DESKTOP-7F3K2QA\\Users\\chen\\Saves",
    ),
    (
        "windows_path",
        CHAT,
        "file:///C:/Users/liuyang/Documents/Klei/ 打开看看",
        "file:///C:/Users/liuyang/Documents/Klei/",
    ),
    (
        "windows_path",
        CHAT,
        "报错文件 C:\\Users\\ZHANGW~1\\AppData\\Local\\Temp\\ONI.log",
        "C:\\Users\\ZHANGW~1\\AppData\\Local\\Temp\\ONI.log",
    ),
    (
        "windows_path",
        SAVE,
        "C:/Users/Administrator/Desktop/备份",
        "C:/Users/Administrator/Desktop/备份",
    ),
    (
        "windows_path",
        CTX,
        "logPath=%APPDATA%\\..\\LocalLow\\Klei\\Oxygen Not Included\\Player.log",
        "%APPDATA%\\..\\LocalLow\\Klei\\Oxygen Not Included\\Player.log",
    ),
    # unix_path
    (
        "unix_path",
        CHAT,
        "我在linux上，存档在 /home/liming/.klei/DoNotStarveTogether/Cluster_1",
        "/home/liming/.klei/DoNotStarveTogether/Cluster_1",
    ),
    (
        "unix_path",
        CHAT,
        "mac的话在 /Users/chenjie/Library/Application Support/unity.Klei.Oxygen Not Included",
        "/Users/chenjie/Library/Application Support/unity.Klei.Oxygen Not Included",
    ),
    (
        "unix_path",
        CHAT,
        "~/.config/StardewValley/Saves/Tangyuan_312456789 这个文件夹",
        "~/.config/StardewValley/Saves/Tangyuan_312456789",
    ),
    (
        "unix_path",
        CHAT,
        "WSL 里是 /mnt/c/Users/wangfang/Documents",
        "/mnt/c/Users/wangfang/Documents",
    ),
    (
        "unix_path",
        CHAT,
        "路径 \\/home\\/zhangsan\\/.local\\/share\\/Steam",
        "\\/home\\/zhangsan\\/.local\\/share\\/Steam",
    ),
    (
        "unix_path",
        CHAT,
        "file:///home/xiaoming/Games/stardew/save.xml 这个",
        "file:///home/xiaoming/Games/stardew/save.xml",
    ),
    ("unix_path", SAVE, "/Users/lihua/Desktop/dst_backup", "/Users/lihua/Desktop/dst_backup"),
    (
        "unix_path",
        CTX,
        "cwd=/home/deck/.steam/steam/steamapps/common/Stardew Valley",
        "/home/deck/.steam/steam/steamapps/common/Stardew Valley",
    ),
    # user_name_in_log
    ("user_name_in_log", CHAT, "日志里写着 [12:03:44] User 'zhang_wei' logged in", "zhang_wei"),
    ("user_name_in_log", CHAT, "报错：[SteamManager] Logged on as 汤圆小王子", "汤圆小王子"),
    (
        "user_name_in_log",
        CHAT,
        "[00:01:02]: Logged in as KU_Ab3dEf12 (liu_yang)",
        "KU_Ab3dEf12 (liu_yang)",
    ),
    ("user_name_in_log", CHAT, "whoami 输出 desktop-9k2l3m\\wangfang", "desktop-9k2l3m\\wangfang"),
    ("user_name_in_log", CHAT, "log: Loading save for user lihua_1998 ... done", "lihua_1998"),
    (
        "user_name_in_log",
        CHAT,
        "USERNAME=chenjie COMPUTERNAME=CHENJIE-PC 这是环境变量",
        "USERNAME=chenjie",
    ),
    (
        "user_name_in_log",
        CHAT,
        "[SMAPI] Log started by user tangyuan88 on DESKTOP-ABC",
        "tangyuan88",
    ),
    # api_key
    (
        "api_key",
        CHAT,
        "帮我看看这个key能不能用 sk-proj-Xb7Kq2mN9pL4vR8tW1yZ3aC6dF0gH5jK",
        "sk-proj-Xb7Kq2mN9pL4vR8tW1yZ3aC6dF0gH5jK",
    ),
    (
        "api_key",
        CHAT,
        "key: s k-4f9a2b7c1d8e3f6a0b5c9d2e7f1a4b8c",
        "s k-4f9a2b7c1d8e3f6a0b5c9d2e7f1a4b8c",
    ),
    (
        "api_key",
        CHAT,
        "base64的是 c2stOWY4ZTdkNmM1YjRhMzkyODE3MTYxNTE0MTMxMjExMTA=",
        "c2stOWY4ZTdkNmM1YjRhMzkyODE3MTYxNTE0MTMxMjExMTA=",
    ),
    (
        "api_key",
        CHAT,
        "十六进制 736b2d613162326333643465356636613762386339643065316632",
        "736b2d613162326333643465356636613762386339643065316632",
    ),
    (
        "api_key",
        CHAT,
        "Authorization: Bearer "
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ0YW5neXVhbiJ9.4pcPyMD09olPSyXnrXCjTwXyr4BsezdI1AVTmud2fU4",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ0YW5neXVhbiJ9.4pcPyMD09olPSyXnrXCjTwXyr4BsezdI1AVTmud2fU4",
    ),
    (
        "api_key",
        CHAT,
        "my github token ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    ),
    (
        "api_key",
        CHAT,
        "AWS key AKIAIOSFODNN7EXAMPLE secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    (
        "api_key",
        CTX,
        "apiKey=sk-or-v1-3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e",
        "sk-or-v1-3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e",
    ),
    # real_name_address_health
    ("real_name_address_health", CHAT, "其实我真名叫王建国，别叫我网名了", "王建国"),
    (
        "real_name_address_health",
        CHAT,
        "我住在上海市浦东新区张杨路1234弄5号602室",
        "上海市浦东新区张杨路1234弄5号602室",
    ),
    (
        "real_name_address_health",
        CHAT,
        "最近确诊了抑郁症，一直在吃舍曲林",
        "确诊了抑郁症，一直在吃舍曲林",
    ),
    (
        "real_name_address_health",
        CHAT,
        "My real name is Emily Carter, the nickname is just for games",
        "Emily Carter",
    ),
    (
        "real_name_address_health",
        CHAT,
        "I live at 42 Elm Street, Apt 3B, Springfield",
        "42 Elm Street, Apt 3B, Springfield",
    ),
    (
        "real_name_address_health",
        CHAT,
        "I was diagnosed with type 1 diabetes last year so I check my sugar a lot",
        "diagnosed with type 1 diabetes",
    ),
    ("real_name_address_health", CHAT, "身份证上的名字是李秀英，游戏里别这么叫我哈", "李秀英"),
    (
        "real_name_address_health",
        CHAT,
        "我家在北京市海淀区中关村大街27号院3号楼",
        "北京市海淀区中关村大街27号院3号楼",
    ),
    ("real_name_address_health", CHAT, "我有癫痫，闪光太多会发作", "癫痫"),
    ("real_name_address_health", SAVE, "陈小红的农场（朝阳区望京西园三区）", "陈小红"),
]

SV, DST, ONI = "stardew-valley", "dont-starve-together", "oxygen-not-included"

# (game, text[, where]); where defaults to chat.
ALLOWED = [
    (SV, "种子号 847261930517，开个新档试试"),
    (SV, "我这档的随机种子是 2019384756"),
    (SV, "箱子放在坐标 (64, 15) 那里"),
    (SV, "农场 X:72 Y:31 有块大石头"),
    (SV, "杨桃种子卖 400g 一个"),
    (SV, "今天一共赚了 12,345g"),
    (SV, "总共攒了 1,250,000 金"),
    (SV, "春季28日之前要收完"),
    (SV, "秋季16日是展览会"),
    (SV, "游戏版本 1.6.14"),
    (SV, "SMAPI 4.1.10 装好了"),
    (SV, "分辨率 1920x1080 全屏"),
    (SV, "仓库里有 999 个木头"),
    (SV, "铱锭还有 48 个"),
    (SV, "物品ID 337 是铱锭"),
    (SV, "(O)74 是五彩碎片的代码"),
    (SV, "早上 6:00 起床去浇水"),
    (SV, "凌晨 2:00 前必须睡觉"),
    (SV, "刚买了一包QQ糖，顺便问下南瓜怎么卖"),
    (SV, "衣服想染成 #FFA500 那种橙色"),
    (SV, "颜色 RGB(255,128,0) 的衬衫"),
    (SV, "已经第 87 天了"),
    (SV, "鱼塘里养了 10 条鲟鱼"),
    (SV, "终于到矿井 120 层了"),
    (SV, "第三年冬季28日"),
    (SV, "Day 112, Winter 28, 2,450,000g in the bank"),
    (SV, "the seed for this farm is 2871650394", "modelContext"),
    (DST, "世界种子 1728394056 生成的地图很好"),
    (DST, "服务器种子：seed=3849201756", "modelContext"),
    (DST, "基地坐标 312, -88"),
    (DST, "第 365 天了还活着"),
    (DST, "游戏版本号 623455"),
    (DST, "周年活动 2026-11-20 开始"),
    (DST, "我有 40 个金块"),
    (DST, "猪王给了 12 个金子"),
    (DST, 'c_give("goldnugget", 20)'),
    (DST, "prefab 名是 deerclops_eyeball"),
    (DST, 'c_spawn("beefalo")'),
    (DST, "第 21 天冬天开始"),
    (DST, "温度 -20 度，冷死了"),
    (DST, "服务器人数 6/6"),
    (DST, "延迟 120ms 有点卡"),
    (DST, "1280x720 分辨率下字太小"),
    (DST, "理智 150/200"),
    (DST, "显示器 144Hz"),
    (DST, "颜色选了 #3A7BD5 的蓝色"),
    (DST, "红宝石攒了 8 颗"),
    (DST, "晚上 19:30 天就黑了"),
    (DST, "Steam 上买的 DST 打折才 24 元"),
    (DST, "Steam 创意工坊订阅了 15 个 mod"),
    (DST, "server tick rate 15, max players 6"),
    (ONI, "种子 SNDST-A-1879213456-0-0-0"),
    (ONI, "地图种子 OCAN-A-528374019-0-0-0"),
    (ONI, "V-SNDST-C-1092837465-0-0-0 这个图不错", "modelContext"),
    (ONI, "周期 512 了"),
    (ONI, "已经第 1024 周期"),
    (ONI, "电池里存了 20,000 J"),
    (ONI, "温度 24.5°C 刚好"),
    (ONI, "氧气有 1,800 g"),
    (ONI, "坐标 (128, 256)"),
    (ONI, "版本 U52-600112"),
    (ONI, "1,000 kg 的铁矿"),
    (ONI, "水箱里 40000 kg 的水"),
    (ONI, "一个米虱饼 1600 kcal"),
    (ONI, "现在有 12 个小人"),
    (ONI, "2560×1440 下UI很清楚"),
    (ONI, "管道颜色调成 #00FF7F"),
    (ONI, "游戏开 3 倍速"),
    (ONI, "普通电线上限 1 kW"),
    (ONI, "蒸汽涡轮最多 850 W"),
    (ONI, "基地在 y=85 那一层"),
    (ONI, "U51-596100 更新了"),
    (ONI, "2026年12月7日开的存档"),
    (ONI, "种子号 0428193756 的地图"),
    (ONI, "我边吃QQ糖边玩缺氧"),
    (ONI, "cycle 3 and everyone is already hungry"),
    (ONI, "seed FRST-A-1456723980-0-0-0, nice map", "modelContext"),
]


def main() -> None:
    forbidden = [
        {"id": f"f{i:03d}", "family": fam, "text": text, "where": where, "secret": secret}
        for i, (fam, where, text, secret) in enumerate(FORBIDDEN, 1)
    ]
    allowed = []
    for i, item in enumerate(ALLOWED, 1):
        entry = {"id": f"a{i:03d}", "text": item[1], "game": item[0]}
        if len(item) > 2:
            entry["where"] = item[2]
        allowed.append(entry)
    data = {"forbidden": forbidden, "allowed": allowed}
    OUT.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(forbidden)} forbidden and {len(allowed)} allowed to {OUT.name}")


if __name__ == "__main__":
    main()
