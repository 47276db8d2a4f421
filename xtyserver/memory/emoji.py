"""Emoji said as words (pure): 🐔 is 鸡 to a memory written in words.

A player types 「我的🐔下蛋了吗」 or "did the 🐟 bite": the memory says 鸡 and 鱼. The
tokenizer drops emoji and the embedder reads them loosely, so before a question is
searched (its words, and its vector) each emoji of :data:`WORDS` is replaced by its
word (Chinese, the language the memories are mostly written in; the glossary and the
vectors carry it over to English ones). Others are left as they are.
"""

from __future__ import annotations

WORDS: dict[str, str] = {
    # animals
    "🐔": "鸡", "🐓": "鸡", "🐣": "小鸡", "🐤": "小鸡", "🐥": "小鸡", "🥚": "蛋",
    "🐄": "牛", "🐮": "牛", "🐂": "牛", "🐖": "猪", "🐷": "猪", "🐑": "羊", "🐐": "山羊",
    "🐴": "马", "🐎": "马", "🐟": "鱼", "🐠": "鱼", "🐡": "河豚", "🎣": "钓鱼", "🦀": "螃蟹",
    "🦐": "虾", "🦑": "鱿鱼", "🐙": "章鱼", "🐝": "蜜蜂", "🍯": "蜂蜜", "🕷": "蜘蛛",
    "🦇": "蝙蝠", "🐺": "狼", "🐶": "狗", "🐕": "狗", "🐱": "猫", "🐈": "猫", "🐰": "兔子",
    "🐇": "兔子", "🦌": "鹿", "🐻": "熊", "🐸": "青蛙", "🐍": "蛇", "🦆": "鸭子",
    "🦃": "火鸡", "🐛": "虫子", "🦋": "蝴蝶", "🐌": "蜗牛", "🦖": "恐龙", "🐉": "龙",
    "🐦": "鸟", "🐧": "企鹅", "🐭": "老鼠", "🐀": "老鼠", "🦂": "蝎子",
    # crops, food and drink
    "🌾": "小麦", "🌽": "玉米", "🍓": "草莓", "🍅": "番茄", "🥔": "土豆", "🥕": "胡萝卜",
    "🎃": "南瓜", "🍇": "葡萄", "🍎": "苹果", "🍒": "樱桃", "🍑": "桃子", "🍉": "西瓜",
    "🫐": "蓝莓", "🥦": "西兰花", "🍄": "蘑菇", "🌰": "栗子", "🥜": "花生", "🍌": "香蕉",
    "🍍": "菠萝", "🥥": "椰子", "🌶": "辣椒", "🍆": "茄子", "🥬": "白菜", "🧅": "洋葱",
    "🍞": "面包", "🍲": "汤", "🍳": "煎蛋", "🧀": "奶酪", "🥛": "牛奶", "🍺": "啤酒",
    "🍷": "酒", "☕": "咖啡", "🍵": "茶", "🎂": "蛋糕", "🍰": "蛋糕", "🍖": "肉", "🥩": "肉",
    "🍚": "米饭", "🍜": "面条", "🍣": "寿司",
    # plants and the land
    "🌻": "向日葵", "🌷": "花", "🌸": "花", "🌹": "玫瑰", "💐": "花束", "🌲": "树",
    "🌳": "树", "🌴": "棕榈树", "🌵": "仙人掌", "🪵": "木头", "🪨": "石头", "🌱": "幼苗",
    "🍂": "落叶", "🍁": "枫叶", "🏔": "山", "⛰": "山", "🌋": "火山", "🏝": "岛",
    # tools, weapons, things
    "⛏": "镐", "🪓": "斧头", "🔨": "锤子", "🗡": "剑", "⚔": "剑", "🛡": "盾", "🏹": "弓",
    "🔱": "三叉戟", "🪣": "桶", "🧺": "篮子", "🎒": "背包", "🗝": "钥匙", "🔑": "钥匙",
    "💎": "钻石", "💰": "钱", "🪙": "金币", "⚙": "齿轮", "🔋": "电池", "💡": "灯",
    "🕯": "蜡烛", "🧪": "药水", "💊": "药", "🎁": "礼物", "💍": "戒指", "📦": "箱子",
    "🧰": "工具箱", "🪜": "梯子", "🧱": "砖", "🛏": "床", "🚽": "厕所", "🚿": "淋浴",
    # weather and sky
    "🔥": "火", "💧": "水", "🌊": "海", "❄": "冰", "☃": "雪人", "⛄": "雪人", "🌧": "雨",
    "☔": "雨", "⛈": "雷雨", "⚡": "闪电", "🌪": "龙卷风", "☀": "太阳", "🌞": "太阳",
    "🌙": "月亮", "🌕": "满月", "⭐": "星星", "🌈": "彩虹", "☁": "云", "🌫": "雾",
    # places, vehicles, creatures
    "🏠": "房子", "🏡": "房子", "🏚": "破房子", "🏰": "城堡", "⛪": "教堂", "🏥": "医院",
    "🏪": "商店", "🏭": "工厂", "🚜": "拖拉机", "🚀": "火箭", "🛸": "飞船", "⛵": "船",
    "🚤": "船", "🚂": "火车", "🚃": "矿车", "🗺": "地图", "💀": "骷髅", "☠": "骷髅",
    "👻": "鬼", "🧟": "僵尸", "🕸": "蜘蛛网", "👑": "王冠", "🤖": "机器人",
}  # fmt: skip
"""Emoji a player may use for a thing of a farm, a wild or a colony, and their word."""

_SELECTORS = str.maketrans("", "", "\ufe0f\ufe0e")


def spell_emoji(text: str) -> str:
    """``text`` with each emoji of :data:`WORDS` as its word (unchanged without one)."""
    if text.isascii():
        return text
    plain = text.translate(_SELECTORS)
    if not any(ch in WORDS for ch in plain):
        return text
    return "".join(f" {WORDS[ch]} " if ch in WORDS else ch for ch in plain)
