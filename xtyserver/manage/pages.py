"""The small HTML pages around the memory page: the browser hand-off and the error pages. Pure.

A player may see these in a browser tab, so each says, Chinese first with the
English beside, what happened and what to do. No script, no style, no data.
"""

from __future__ import annotations

import html

from xtyserver.manage.access import OPEN_PATH

# What to do, whatever went wrong: a fresh page (a new single-use key).
REOPEN = (
    "在电脑上再运行一次 xtyserver（已在运行时只会重新打开本页），或运行 xtyserver ui。",
    "Run xtyserver again on this PC (if it is running, that only opens this page again), "
    "or run xtyserver ui.",
)

# reason (as refused by manage/access.py or the shell) -> (what happened, in Chinese, in English)
PROBLEMS: dict[str, tuple[str, str]] = {
    "wrong, used or expired launch key": (
        "这个打开记忆页的链接已经用过或已过期：每个链接只能打开一次，10 分钟内有效。",
        "This link to the memory page was already used or has expired: "
        "each opens the page once, within 10 minutes.",
    ),
    "host not allowed": (
        "地址里的主机名不对：记忆页只在 127.0.0.1（本机）上打开。",
        "The address names the wrong host: the memory page opens only on 127.0.0.1 (this PC).",
    ),
    "not found": ("没有这个页面。", "There is no such page."),
}
UNKNOWN = ("记忆页打不开。", "The memory page cannot be opened here.")


def problem_page(reason: str) -> bytes:
    """A readable error page for a request a browser navigated to (``reason`` shown as a detail)."""
    zh, en = PROBLEMS.get(reason, UNKNOWN)
    detail = html.escape(reason)
    return (
        '<!doctype html><html lang="zh-CN"><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>小汤圆的记忆页 · The memory page</title>"
        f"<h1>{html.escape(zh)}</h1><p>{html.escape(REOPEN[0])}</p>"
        f'<div lang="en"><h2>{html.escape(en)}</h2><p>{html.escape(REOPEN[1])}</p></div>'
        f'<p><small lang="en">({detail})</small></p></html>\n'
    ).encode()


def handoff_page(origin: str, key: str) -> bytes:
    """The owner-only file a command hands the browser: its form posts ``key`` to ``/ui/open``.

    A form's body is in no URL, so the key stays out of the browser's history
    (a ``#token=`` link is recorded there as visited). The key's field is a
    password field: a browser keeps a form's body with the page's entry for
    session restore unless the form held a password (Chromium writes it into
    its ``Sessions`` log otherwise). The form is sent while the file loads,
    which replaces its history entry instead of adding one.
    """
    action = html.escape(origin + OPEN_PATH)
    return (
        '<!doctype html><html lang="zh-CN"><meta charset="utf-8">'
        "<title>小汤圆的记忆页 · The memory page</title>"
        f'<form id="open" method="post" action="{action}">'
        f'<input type="password" name="key" value="{html.escape(key)}" hidden>'
        "<button>打开小汤圆的记忆页 / Open the memory page</button></form>"
        # Not again on going back to it: its key is used by then.
        '<script>if (performance.getEntriesByType("navigation")[0]?.type !== "back_forward")'
        ' document.getElementById("open").submit()</script></html>\n'
    ).encode()
