"""A correction's value must be said as a value, table-tested (xtyserver/session/said.py).

Both languages: the value is the whole message or an item after a cue of the
field; any other piece of the text is not a value ("叫我小明吧" gives 小明, not 我;
"这个NPC说话好奇怪" gives no language).
"""

from __future__ import annotations

import pytest

from xtyserver.session.said import said_as_value

# (field, value, the player's words, said as the value)
VALUES = [
    ("nickname", "小明", "叫我小明吧", True),
    ("nickname", "我", "叫我小明吧", False),
    ("nickname", "小", "叫我小明吧", False),
    ("nickname", "明吧", "叫我小明吧", False),
    ("nickname", "阿明", "以后叫我阿明", True),
    ("nickname", "小明", "我叫小明。", True),
    ("nickname", "小明", "小明", True),  # the whole message answers "what should I call you?"
    ("nickname", "小明", "小明吧！", True),
    ("nickname", "小明", "小明今天去钓鱼了", False),
    ("nickname", "大魔王", "我其实更喜欢自动化，把共同爱好改一下", False),
    ("nickname", "Bob", "call me Bob please", True),
    ("nickname", "me", "call me Bob please", False),
    ("nickname", "Tom", "My name is Tom.", True),
    ("nickname", "name", "My name is Tom.", False),
    ("nickname", "Ｔｏｍ", "my name is tom", True),  # the normal form
    ("nickname", "小明", "叫我小\u200b明", True),  # an invisible character inside
    ("language", "NPC", "这个NPC说话好奇怪", False),
    ("language", "英文", "用英文回复我", True),
    ("language", "英", "用英文回复我", False),
    ("language", "中文", "说中文就行", True),
    ("language", "日语", "语言改成日语", True),
    ("language", "English", "reply in English please", True),
    ("language", "please", "reply in English please", False),
    ("language", "Japanese", "this NPC speaks Japanese oddly", False),
    ("replyStyle", "简短一点", "回复简短一点", True),
    ("replyStyle", "脾气暴躁", "回复风格改成脾气暴躁", True),
    ("replyStyle", "short", "keep it short", True),
    ("replyStyle", "NPC", "这个NPC说话好奇怪", False),
    ("hobbies", "自动化", "我其实更喜欢自动化，把共同爱好改一下", True),
    ("hobbies", "钓鱼", "我喜欢钓鱼", True),
    ("hobbies", "鱼", "我喜欢钓鱼", False),
    ("hobbies", "社区中心", "我的爱好是阿比盖尔和社区中心", True),
    ("hobbies", "挖矿", "我喜欢钓鱼、挖矿", True),
    ("hobbies", "fishing", "I like fishing and mining", True),
    ("hobbies", "mining", "I like fishing and mining", True),
    ("hobbies", "like", "I like fishing and mining", False),
    ("hobbies", "farm", "I like my farm", False),
    ("hobbies", "", "我喜欢钓鱼", False),
]


@pytest.mark.parametrize(("field", "value", "text", "said"), VALUES)
def test_a_value_is_said_only_in_a_value_position(
    field: str, value: str, text: str, said: bool
) -> None:
    assert said_as_value(field, value, text) is said
