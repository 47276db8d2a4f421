"""What the console says to a player, in the player's language (docs/players.md "玩家指南").

A player runs ``xtyserver`` from a shortcut or a PowerShell window and reads a
few short lines: that the companion runs, where its page is, what to do next
(the first run names the 设置 tab), how to stop it. Structured logs are for
``serve``, ``-v`` and ``--log-json``. The language is ``XTY_LANG`` when set,
else ``[console] language``, else the OS's display language (Chinese unless the
OS says another language); every line can be replaced under
``[console.texts.zh]`` / ``[console.texts.en]``.
"""

from __future__ import annotations

import os
import sys
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Literal

from xtyserver.config import ConsoleSettings
from xtyserver.errors import UsageError

Language = Literal["zh", "en"]

CATALOG: dict[Language, dict[str, str]] = {
    "zh": {
        "started": "小汤圆已启动，正在等游戏里的 mod 连接（{url}）。",
        "page": "记忆页：{link}",
        "opened": "已在浏览器中打开记忆页。",
        "no_browser": "没能打开浏览器：请把上面「记忆页」后面的链接复制到浏览器地址栏。",
        "not_configured": (
            "还没有设置模型：请在记忆页的「设置」标签里选择模型服务、填入 API Key，"
            "按「保存」，再按「测试连接」。"
        ),
        "how_to_stop": "要停止小汤圆，在这个窗口按 Ctrl+C，或直接关闭窗口。",
        "stopping": "正在停止小汤圆……",
        "stopped": "小汤圆已停止。",
        "already_running": "小汤圆已经在运行了（进程 {pid}），正在为你打开它的记忆页。",
        "starting_already": "小汤圆正在启动，等它打开记忆页……",
        "stats_game": "游戏",
        "stats_save": "游戏 / 存档",
        "stats_days": "天数",
        "stats_sessions": "次数",
        "stats_active": "时长",
        "stats_last": "上次游玩",
        "stats_date": "日期",
        "stats_purpose": "用途",
        "stats_calls": "调用",
        "stats_tokens": "token 数",
        "stats_none": "还没有游戏记录。",
        "ui_no_answer": (
            "记忆页（端口 {port}）没有回应：小汤圆没在运行吗？"
            "运行 xtyserver 启动它，它会打开记忆页。"
        ),
        "backed_up": "已把记忆备份到 {file}（游玩统计也在里面）。",
        "imported": "已导入 {count} 条记忆。",
        "unnamed_save": "未命名存档 · {short}",
        "purpose_chat": "聊天",
        "purpose_extraction": "整理记忆",
        "purpose_summary": "总结对话",
        "stats_cost": "约合（元）",
        "autostart_is_on": "开机自动启动：已开启（{path}）",
        "autostart_is_off": "开机自动启动：没有开启（{path}）",
        "autostart_removed": "已关闭开机自动启动：删除了 {path}",
        "autostart_was_off": "开机自动启动本来就没有开启（{path} 不存在）",
        "autostart_written": (
            "已开启开机自动启动：{path}\n以后登录电脑时小汤圆会在一个最小化的窗口里启动；"
            "要关掉，运行 xtyserver autostart off。"
        ),
        "key_forgotten": "已删除保存的 API 密钥（{where}）。",
        "key_none": "没有保存的 API 密钥。",
        "key_file": "数据文件夹里的密钥文件",
        "port_busy": (
            "端口 {port} 已经被这台电脑上的另一个程序占用了，小汤圆没有启动。"
            "换一个端口再启动：xtyserver --port {other}（饥荒联机版的 mod 要在它的"
            "「配置模组」里把 Port 也选成 {other}；星露谷物语和缺氧的 mod 会自己找到）。"
        ),
        "page_port_busy": (
            "记忆页要用的端口 {port} 已经被这台电脑上的另一个程序占用了，小汤圆没有启动。"
            "换一个端口再启动：xtyserver --port {other}（记忆页就用 {other} 的下一个端口；"
            "饥荒联机版的 mod 要在它的「配置模组」里把 Port 也选成 {other}）。"
        ),
        "data_dir_unusable": (
            "小汤圆用不了它的数据文件夹 {path}：{reason}。请换一个文件夹"
            "（xtyserver --data-dir 另一个文件夹，或设置 XTY_DATA_DIR），或修好这个文件夹。"
        ),
        "reason_file": "这个位置（或它上面的某一级）是一个文件，不是文件夹",
        "reason_denied": "没有权限在这里写文件",
        "reason_full": "磁盘已满",
        "reason_readonly": "这个磁盘是只读的",
        "reason_other": "系统说：{detail}",
    },
    "en": {
        "started": "XiaoTangYuan is running and waiting for the game's mod ({url}).",
        "page": "Memory page: {link}",
        "opened": "Opened the memory page in your browser.",
        "no_browser": "No browser could be opened: copy the memory page link above into one.",
        "not_configured": (
            "No model is set up yet: on the memory page's Settings tab choose a provider, "
            "paste its API key, press Save, then Test connection."
        ),
        "how_to_stop": "To stop XiaoTangYuan, press Ctrl+C in this window or close it.",
        "stopping": "Stopping XiaoTangYuan...",
        "stopped": "XiaoTangYuan has stopped.",
        "already_running": "XiaoTangYuan is already running (pid {pid}); opening its memory page.",
        "starting_already": "XiaoTangYuan is starting already: waiting for its memory page...",
        "stats_game": "game",
        "stats_save": "game / save",
        "stats_days": "days",
        "stats_sessions": "sessions",
        "stats_active": "active",
        "stats_last": "last played",
        "stats_date": "date",
        "stats_purpose": "purpose",
        "stats_calls": "calls",
        "stats_tokens": "tokens",
        "stats_none": "Nothing played yet.",
        "ui_no_answer": (
            "The memory page (port {port}) did not answer: is XiaoTangYuan running? Run"
            " xtyserver to start it; it opens the page."
        ),
        "backed_up": "Memory backed up to {file} (play statistics included).",
        "imported": "Imported {count} memories.",
        "unnamed_save": "Unnamed save · {short}",
        "purpose_chat": "chat",
        "purpose_extraction": "sorting memories",
        "purpose_summary": "summarising",
        "stats_cost": "about (CNY)",
        "autostart_is_on": "Start at login: on ({path})",
        "autostart_is_off": "Start at login: off ({path})",
        "autostart_removed": "Start at login is off: removed {path}",
        "autostart_was_off": "Start at login was already off ({path} does not exist)",
        "autostart_written": (
            "Start at login is on: {path}\nXiaoTangYuan starts in a minimized window when you"
            " log in; xtyserver autostart off undoes it."
        ),
        "key_forgotten": "The saved API key is deleted ({where}).",
        "key_none": "No API key is saved.",
        "key_file": "the key file in the data folder",
        "port_busy": (
            "Port {port} is taken by another program on this PC, so XiaoTangYuan did not start."
            " Start it on another port: xtyserver --port {other} (in Don't Starve Together,"
            " choose Port {other} in the mod's configuration too; the Stardew Valley and Oxygen"
            " Not Included mods find it by themselves)."
        ),
        "page_port_busy": (
            "Port {port}, the memory page's, is taken by another program on this PC, so"
            " XiaoTangYuan did not start. Start it on another port: xtyserver --port {other}"
            " (the page takes the next one; in Don't Starve Together, choose Port {other} in"
            " the mod's configuration too)."
        ),
        "data_dir_unusable": (
            "XiaoTangYuan cannot use its data folder {path}: {reason}. Choose another folder"
            " (xtyserver --data-dir OTHER-FOLDER, or set XTY_DATA_DIR), or repair this one."
        ),
        "reason_file": "that place (or a folder above it) is a file, not a folder",
        "reason_denied": "no permission to write there",
        "reason_full": "the disk is full",
        "reason_readonly": "the disk is read-only",
        "reason_other": "the system says: {detail}",
    },
}

# The Windows primary language id of Chinese (LANGID & 0x3FF), any region.
_LANG_CHINESE = 0x04


def os_language(environ: Mapping[str, str] = os.environ, platform: str = sys.platform) -> Language:
    """The OS's display language: ``zh`` unless the OS names another language."""
    if platform == "win32":  # pragma: no cover - Windows only
        import ctypes

        langid = int(ctypes.windll.kernel32.GetUserDefaultUILanguage())  # type: ignore[attr-defined]
        return "zh" if langid & 0x3FF == _LANG_CHINESE else "en"
    for name in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        value = environ.get(name, "").split(":")[0].strip()
        if not value:
            continue
        if value in ("C", "POSIX") or value.startswith(("C.", "POSIX.")):
            return "zh"  # no language chosen: the product's own
        return "zh" if value.lower().startswith("zh") else "en"
    return "zh"


def console_language(
    settings: ConsoleSettings,
    environ: Mapping[str, str] = os.environ,
    platform: str = sys.platform,
) -> Language:
    """``XTY_LANG`` (zh…/en…), else ``[console] language``, else :func:`os_language`."""
    forced = environ.get("XTY_LANG", "").strip().lower()
    if forced:
        return "zh" if forced.startswith("zh") else "en"
    if settings.language != "auto":
        return settings.language
    return os_language(environ, platform)


class Say:
    """The console's lines in one language, with the player's replacements."""

    def __init__(self, settings: ConsoleSettings, language: Language | None = None) -> None:
        self.language: Language = language or console_language(settings)
        lines = dict(CATALOG[self.language])
        for key, text in settings.texts.get(self.language, {}).items():
            if key not in lines:
                raise UsageError(f"console.texts.{self.language}.{key}: no such console line")
            lines[key] = text
        self._lines = lines

    def __call__(self, key: str, **values: object) -> str:
        return self._lines[key].format(**values)


def cells(text: str) -> int:
    """Terminal columns of ``text``: wide and full-width characters take two."""
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


def table(header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]) -> str:
    """Rows aligned by display width (CJK counts two cells); ``right`` per column."""
    widths = [max(cells(r[i]) for r in (header, *rows)) for i in range(len(header))]

    def line(row: Sequence[str]) -> str:
        out = []
        for text, width, to_right in zip(row, widths, right, strict=True):
            pad = " " * (width - cells(text))
            out.append(pad + text if to_right else text + pad)
        return "  ".join(out).rstrip()

    return "\n".join(line(r) for r in (header, *rows))
