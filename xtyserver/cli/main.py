"""Command line: ``xtyserver [COMMAND]`` (serve, doctor, ui, mcp, demo, replay, stats, ...).

``xtyserver`` alone starts the server with the player's settings and opens the
memory page once (``--no-browser`` or ``XTY_NO_BROWSER=1`` leave the browser
alone); its console speaks to the player (``cli/say.py``) and its log goes to
``logs/`` in the data folder unless ``-v``. See docs/commands.md "Commands".
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import anyio
import msgspec

from xtyserver import __version__, errors, log
from xtyserver.cli.console import console_json, stdout_is_utf8
from xtyserver.clock import SystemClock
from xtyserver.config import Settings, load_settings
from xtyserver.files import private_dir, write_private
from xtyserver.serve.instance import NotStarted, PortBusy, remove_server_file

WINNER_WAIT = 20.0  # seconds a start that lost the race waits for the winner's server.json

if TYPE_CHECKING:
    from xtyserver.cli.say import Say
    from xtyserver.serve.player_settings import PlayerSettings


HELP_TOP = """\
小汤圆（XiaoTangYuan）的本机服务：陪你玩星露谷物语、饥荒联机版、缺氧的 AI 伙伴的记忆和模型。
The local server of XiaoTangYuan, the AI companion for Stardew Valley, Don't Starve Together
and Oxygen Not Included: its memory and its model calls."""

HELP_END = """\
玩家常用 · for players:
  xtyserver                    启动小汤圆并打开记忆页 · start and open the memory page
  xtyserver --port 18765       换一个端口启动 · start on another port (the page: 18766)
  xtyserver ui                 再打开记忆页 · open the memory page again
  xtyserver doctor             检查模型设置 · check the model settings
  xtyserver stats              游玩统计和 token 用量 · play statistics and tokens
  xtyserver memory backup 文件  备份记忆 · back up the memory to a file
  xtyserver autostart on|off   开机自动启动 · start at login, or not
  xtyserver key forget         删除保存的 API 密钥 · delete the saved API key
玩家指南 · players' guide: docs/players.md"""


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", type=Path, help="TOML configuration file")
    p.add_argument("--data-dir", help="data folder (default: the OS's per-user data folder)")
    p.add_argument("--profile", help="memory profile id (default: default)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="xtyserver",
        description=HELP_TOP,
        epilog=HELP_END,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"xtyserver {__version__}")
    parser.add_argument(
        "--no-browser",
        action="store_true",
        help="with no command: start the server without opening the memory page",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="with no command: log lines on the console too (else in logs/ in the data folder)",
    )
    parser.add_argument(
        "--config",
        dest="start_config",
        type=Path,
        metavar="FILE",
        help="with no command: a TOML configuration file",
    )
    parser.add_argument(
        "--port",
        dest="start_port",
        type=int,
        metavar="N",
        help="with no command: the port mods connect to (default 8765; the page takes N + 1)",
    )
    parser.add_argument(
        "--data-dir",
        dest="start_data_dir",
        metavar="FOLDER",
        help="with no command: the data folder (default: the OS's per-user data folder)",
    )
    parser.add_argument(
        "--profile", dest="start_profile", metavar="ID", help="with no command: memory profile id"
    )
    sub = parser.add_subparsers(dest="command")

    serve = sub.add_parser("serve", help="run the protocol/v1 WebSocket server")
    _common(serve)
    serve.add_argument("--host", help="bind address (default 127.0.0.1, which adds [::1])")
    serve.add_argument("--port", type=int, help="port (default 8765; 0 picks a free one)")
    serve.add_argument(
        "--ui-port", type=int, help="the memory page's port (default: --port + 1; 0: a free one)"
    )
    serve.add_argument("--log-json", action="store_true", help="JSON log lines even on a tty")
    serve.add_argument("--record", type=Path, metavar="DIR", help="record each connection here")
    serve.add_argument(
        "--record-images", action="store_true", help="keep screenshots in recordings"
    )
    serve.add_argument("--open", action="store_true", help="open the memory page once listening")

    auto = sub.add_parser("autostart", help="start xtyserver at login (this user), or stop that")
    auto.add_argument("state", choices=("on", "off", "status"))
    _common(auto)
    auto.add_argument("--port", type=int, metavar="N", help="the port to start on (--port N)")

    key = sub.add_parser("key", help="the provider's API key the page saved")
    ksub = key.add_subparsers(dest="key_command", required=True)
    _common(ksub.add_parser("forget", help="delete it from the credential store (or its file)"))

    replay = sub.add_parser("replay", help="replay recorded sessions, or lint them")
    replay.add_argument("files", nargs="+", metavar="FILE")
    replay.add_argument("--lint", action="store_true", help="report what the adapter does wrong")
    replay.add_argument("--url", default="ws://127.0.0.1:8765/v1")
    replay.add_argument("--token", help="adapter token (default: XTY_TOKEN or the token file)")
    replay.add_argument("--data-dir", help="where the token file is (default: the OS's)")
    pace = replay.add_mutually_exclusive_group()
    pace.add_argument("--speed", type=float, default=1.0, help="timing scale (2 = twice as fast)")
    pace.add_argument("--fast", action="store_true", help="send without waiting")
    replay.add_argument("--check", action="store_true", help="compare the answers; 1 on a diff")
    replay.add_argument(
        "--any-model", action="store_true", help="do not compare reply texts (a real model)"
    )
    replay.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for answers")
    replay.add_argument("--json", action="store_true", help="one JSON object per file")

    ui = sub.add_parser("ui", help="open the memory page of a running server in the browser")
    _common(ui)
    ui.add_argument("--host", help="the server's address (default: from the configuration)")
    ui.add_argument("--port", type=int, help="the server's port (default: from the configuration)")
    ui.add_argument("--ui-port", type=int, help="the page's port (default: the server's + 1)")
    ui.add_argument("--print", action="store_true", help="print the link instead of opening it")

    mcp = sub.add_parser("mcp", help="the memory tools for an assistant, as an MCP server on stdio")
    _common(mcp)

    demo = sub.add_parser("demo", help="server + scripted model + a simulated Stardew adapter")
    demo.add_argument("--data-dir", help="data folder (default: a temporary folder)")

    doctor = sub.add_parser("doctor", help="check each configured model once (exit 1: no chat)")
    _common(doctor)
    doctor.add_argument("--json", action="store_true", help="one JSON document")

    fake = sub.add_parser("fake-model", help="run the scripted OpenAI-compatible model server")
    fake.add_argument("--host", default="127.0.0.1")
    fake.add_argument("--port", type=int, default=0)

    schemas = sub.add_parser("schemas", help="write schemas/ from the frame types")
    schemas.add_argument("--out", type=Path, default=Path("schemas"))
    schemas.add_argument("--check", action="store_true", help="fail if schemas/ is out of date")

    stats = sub.add_parser(
        "stats", help="play statistics per save and per game, and the token bill per day"
    )
    _common(stats)
    stats.add_argument("--json", action="store_true")

    why = sub.add_parser("why", help="what the last turns' prompts held: the injection log")
    _common(why)
    why.add_argument("--last", type=int, default=10, help="how many turns (default 10)")
    why.add_argument("--json", action="store_true")

    memory = sub.add_parser("memory", help="view, correct, pin, forget, export, import, back up")
    msub = memory.add_subparsers(dest="memory_command", required=True)
    export = msub.add_parser("export", help="write the whole store as one JSON document")
    _common(export)
    export.add_argument("--json", action="store_true", help="compact JSON (default: indented)")
    export.add_argument("--out", type=Path, help="file to write (default: stdout)")
    imp = msub.add_parser("import", help="load an export document (all or nothing)")
    _common(imp)
    imp.add_argument("file", type=Path)
    backup = msub.add_parser("backup", help="online backup of the store to FILE")
    _common(backup)
    backup.add_argument("file", type=Path)
    from xtyserver.cli.memory import add_commands

    add_commands(msub, _common)

    token = sub.add_parser("token", help="show or rotate the adapter token")
    tsub = token.add_subparsers(dest="token_command", required=True)
    for name in ("show", "rotate"):
        _common(tsub.add_parser(name))
    return parser


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "data_dir": getattr(args, "data_dir", None),
        "profile": getattr(args, "profile", None),
        "server.host": getattr(args, "host", None),
        "server.port": getattr(args, "port", None),
        "server.ui_port": getattr(args, "ui_port", None),
    }


def _settings(args: argparse.Namespace) -> Settings:
    return _usable(load_settings(getattr(args, "config", None), overrides=_overrides(args)))


def _player(config: Path | None, overrides: dict[str, Any] | None = None) -> PlayerSettings:
    """The data folder's stored choices and key (the page's settings view), under the rest."""
    from xtyserver.serve.player_settings import PlayerSettings

    first = _usable(load_settings(config, overrides=overrides))
    return PlayerSettings(first.data_path, config=config, overrides=overrides)


def _usable(settings: Settings) -> Settings:
    """``settings`` once its data folder exists (owner-only) and takes a file.

    Raises:
        NotStarted: the folder cannot be made or written: a line in Chinese and one
            in English naming it and why (no traceback).
    """
    from xtyserver.cli.say import Say

    path = settings.data_path
    try:
        private_dir(path)
        probe = path / f".write-test-{os.getpid()}"
        write_private(probe, b"")
        probe.unlink()
    except OSError as exc:
        lines = []
        for language in ("zh", "en"):  # before any setting is sure: Chinese, then English
            say = Say(settings.console, language)
            reason = say(_why(exc), detail=exc.strerror or type(exc).__name__)
            lines.append(say("data_dir_unusable", path=path, reason=reason))
        raise NotStarted("\n".join(lines)) from None
    return settings


def _why(exc: OSError) -> str:
    """The console line's key for why a folder cannot be used."""
    import errno

    if isinstance(exc, (NotADirectoryError, FileExistsError)):
        return "reason_file"
    if isinstance(exc, PermissionError):
        return "reason_denied"
    if exc.errno == errno.ENOSPC:
        return "reason_full"
    if exc.errno == errno.EROFS:
        return "reason_readonly"
    return "reason_other"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    from xtyserver.cli.console import make_console_safe

    make_console_safe()
    args = build_parser().parse_args(argv)
    try:
        return _dispatch(args)
    except NotStarted as exc:
        print(exc.message, file=sys.stderr, flush=True)
        return 1
    except errors.XtyError as exc:
        print(f"xtyserver: {exc.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _dispatch(args: argparse.Namespace) -> int:
    match args.command:
        case None:
            # A desktop program: the player's settings, the page opened once, and a
            # console that speaks to the player; the log goes to a file unless -v.
            opening = not (args.no_browser or os.environ.get("XTY_NO_BROWSER"))
            given = {
                "server.port": args.start_port,
                "data_dir": args.start_data_dir,
                "profile": args.start_profile,
            }
            player = _player(args.start_config, {k: v for k, v in given.items() if v is not None})
            effective = player.effective()
            if args.verbose:
                log.configure()
            else:
                log.configure(stream=_log_file(effective.data_path), json=True)
            return anyio.run(_start, effective, opening, player)
        case "serve":
            log.configure(json=True if args.log_json else None)
            player = _player(args.config, _overrides(args))
            return anyio.run(
                _serve, player.effective(), args.record, args.record_images, args.open, player
            )
        case "autostart":
            from xtyserver.cli.autostart import autostart
            from xtyserver.cli.say import Say

            say = Say(load_settings(args.config).console)
            return autostart(args.state, _forwarded(args), say=say)
        case "key":
            log.configure(json=True, level="error")
            return _forget_key(_player(args.config, _overrides(args)))
        case "replay":
            from xtyserver.replay.command import main as replay_main

            return replay_main(args)
        case "ui":
            given = args.port if args.ui_port is None else args.ui_port
            settings = _running_port(_settings(args), given=given)
            return _ui(settings, print_only=args.print, say=_say(settings))
        case "mcp":
            from xtyserver.manage.mcp import run_mcp

            return anyio.run(run_mcp, _settings(args))
        case "demo":
            from xtyserver.cli.demo import run_demo

            log.configure(json=True, level="warning")
            return anyio.run(run_demo, args.data_dir)
        case "doctor":
            from xtyserver.cli.doctor import doctor

            log.configure(json=True, level="error")
            return anyio.run(doctor, _player(args.config, _overrides(args)).effective(), args.json)
        case "fake-model":
            return anyio.run(_fake_model, args.host, args.port)
        case "schemas":
            from xtyserver.protocol.schemas import check_schemas, write_schemas

            if args.check:
                stale = check_schemas(args.out)
                for name in stale:
                    print(f"out of date: {args.out / name}", file=sys.stderr)
                return 1 if stale else 0
            for path in write_schemas(args.out):
                print(path)
            return 0
        case "stats":
            return _stats(_settings(args), as_json=args.json)
        case "why":
            from xtyserver.cli.why import why

            return why(_settings(args), last=args.last, as_json=args.json)
        case "memory":
            return _memory(args)
        case "token":
            return _token(args)
    return 2


def _open_store(settings: Settings) -> Any:
    from xtyserver.memory.sqlite.store import MemoryStore

    return MemoryStore.open_profile(
        settings.data_path,
        settings.profile,
        clock=SystemClock(),
        trash_window=settings.memory.trash_hours * 3600,
    )


async def _start(settings: Settings, opening: bool, player: PlayerSettings | None = None) -> int:
    """``xtyserver`` alone: serve; when one already runs on this folder, open its page.

    Started twice at once (a double-click), the one that lost the folder's lock
    may find no ``server.json`` yet: it waits up to :data:`WINNER_WAIT` seconds
    for the winner's and opens the winner's page.
    """
    from xtyserver.cli.say import Say
    from xtyserver.serve.instance import InstanceLock, read_server_file

    say = Say(settings.console)
    try:
        return await _serve(settings, None, False, opening, player, say=say)
    except PortBusy as busy:  # this folder's lock was ours: another program has the port
        line = "page_port_busy" if busy.what == "page" else "port_busy"
        print(say(line, port=busy.port, other=_free_port(settings, busy.port)), flush=True)
        return 1
    except NotStarted:
        lock = InstanceLock(settings.data_path)
        if not opening or lock.acquire():  # nobody holds the folder: the port was busy
            lock.release()
            raise
    # Started twice: show the running one's page and leave it be.
    if read_server_file(settings.data_path) is None:
        print(say("starting_already"), flush=True)
    deadline = anyio.current_time() + WINNER_WAIT
    while True:
        running = read_server_file(settings.data_path)
        found = _running_port(settings, given=None)
        if running is not None:
            try:
                key = _launch_key(found)
            except OSError:  # a stale server.json, or the winner not answering yet
                pass
            else:
                print(say("already_running", pid=running.pid), flush=True)
                return _open_page(found, key, print_only=False, say=say)
        if anyio.current_time() > deadline:
            return _ui(found, print_only=False, say=say)  # says what did not answer
        await anyio.sleep(0.1)


DST_PORTS = (18765, 8767, 8766, 8765)
"""The ports the DST mod's configuration offers (adapters/dst/modinfo.lua), best first."""


def _free_port(settings: Settings, busy: int) -> int:
    """A port to suggest: one the DST mod offers whose next one (the page's) is free too."""
    from xtyserver.serve.instance import port_free

    host = settings.server.host
    for port in DST_PORTS:
        if busy not in (port, port + 1) and port_free(host, port) and port_free(host, port + 1):
            return port
    return DST_PORTS[0]


async def _serve(
    settings: Settings,
    record: Path | None,
    record_images: bool,
    opening: bool = False,
    player: PlayerSettings | None = None,
    *,
    say: Say | None = None,
) -> int:
    """Serve until a stop request; ``say`` set: the player's console (``xtyserver``).

    Without ``say`` (``xtyserver serve``) stdout carries the three lines tools
    read: ``listening URL``, where the token is, ``memory page: LINK``.
    """
    # The server runs on asyncio only. httpcore imports trio whenever it is
    # installed (selenium, a test tool, brings it): memory and start-up time for nothing.
    sys.modules.setdefault("trio", None)  # type: ignore[arg-type]
    from xtyserver import token as tokens
    from xtyserver.cli.shutdown import BACKSTOP_S, hard_exit_after, stop_requests
    from xtyserver.serve.folder import make_owner_only
    from xtyserver.serve.heap import settle_heap
    from xtyserver.server import serving

    data = private_dir(settings.data_path)
    make_owner_only(str(data))
    secret, where = tokens.load_or_create(data, env_token=settings.token)
    with stop_requests() as stop, contextlib.ExitStack() as backstop:
        async with serving(
            settings,
            token=secret,
            clock=SystemClock(),
            record=record,
            record_images=record_images,
            token_file=where,
            tighten=True,  # once this server holds the folder's lock and the port
            player=player,
        ) as server:
            if not settings.model.configured:
                log.get("xtyserver.cli.main").warning(
                    "model.not_configured",
                    hint="the page's 设置 (Settings) tab, or XTY_MODEL_BASE_URL and XTY_MODEL",
                )
            settle_heap()
            if say is None:
                print(f"listening {server.url}", flush=True)
                print(
                    f"token: {'from XTY_TOKEN' if where is None else f'in {where}'}"
                    " (xtyserver token show prints it)",
                    flush=True,
                )
                print(f"memory page: {server.ui_link}", flush=True)
            else:
                print(say("started", url=server.url), flush=True)
                print(say("page", link=server.ui_link), flush=True)
            if opening:
                _open_browser(data, server.ui_link, say)
            if say is not None:
                if not settings.model.configured:
                    print(say("not_configured"), flush=True)
                print(say("how_to_stop"), flush=True)
            # Ctrl+C, SIGTERM; on Windows also Ctrl+Break and closing the window.
            await stop.wait()
            if say is not None:
                print(say("stopping"), flush=True)
            # From here on the stop is bounded; should it not end, the backstop ends the process.
            pid = os.getpid()
            backstop.enter_context(
                hard_exit_after(
                    settings.server.stop_timeout + BACKSTOP_S,
                    lambda: remove_server_file(settings.data_path, pid),
                )
            )
    if say is not None:
        print(say("stopped"), flush=True)
    return 0


def _log_file(data_dir: Path) -> TextIO:
    """The player's log, ``logs/xtyserver.log`` in the data folder (owner-only, 1 MB kept)."""
    folder = private_dir(data_dir / "logs")  # it and any missing parent owner-only
    path = folder / "xtyserver.log"
    with contextlib.suppress(OSError):
        if path.stat().st_size > 1_000_000:
            os.replace(path, folder / "xtyserver.1.log")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    return open(fd, "a", encoding="utf-8", buffering=1)


def _running_port(settings: Settings, *, given: int | None) -> Settings:
    """The running server's ports from its ``server.json``, unless a port was given."""
    from xtyserver.serve.instance import read_server_file

    running = None if given is not None else read_server_file(settings.data_path)
    if running is None:
        return settings
    server = msgspec.structs.replace(settings.server, port=running.port, ui_port=running.ui_port)
    return msgspec.structs.replace(settings, server=server)


def _open_browser(data_dir: Path, link: str, say: Say | None) -> None:
    opened = _hand_to_browser(data_dir, link)
    if say is not None:
        print(say("opened" if opened else "no_browser"), flush=True)
    elif opened:
        print("opened the memory page in the default browser", flush=True)
    else:
        print("no browser could be opened; open the link above", flush=True)


def _forwarded(args: argparse.Namespace) -> list[str]:
    """The settings flags a login start must repeat (absolute paths)."""
    out: list[str] = []
    if args.config:
        out += ["--config", str(Path(args.config).resolve())]
    if args.data_dir:
        out += ["--data-dir", str(Path(args.data_dir).resolve())]
    if args.profile:
        out += ["--profile", args.profile]
    if args.port is not None:
        out += ["--port", str(args.port)]
    return out


def _forget_key(player: PlayerSettings) -> int:
    """``xtyserver key forget``: the stored key out of the credential store (uninstalling)."""
    from xtyserver.cli.say import Say
    from xtyserver.serve.key_store import backend_name

    say = Say(player.effective().console)
    where = player.keys.where()
    if where == "none":
        print(say("key_none"))
        return 0
    shown = backend_name(player.keys.backend) if where == "keyring" else say("key_file")
    player.clear_api_key()
    print(say("key_forgotten", where=shown))
    return 0


def _say(settings: Settings) -> Say:
    from xtyserver.cli.say import Say

    return Say(settings.console)


def _ui(settings: Settings, *, print_only: bool, say: Say | None = None) -> int:
    """Ask the running server for a fresh launch key and open (or print) the page."""
    port = settings.server.page_port
    try:
        key = _launch_key(settings)
    except OSError:
        print((say or _say(settings))("ui_no_answer", port=port), file=sys.stderr)
        return 1
    return _open_page(settings, key, print_only=print_only, say=say)


def _launch_key(settings: Settings) -> str:
    """A fresh launch key from the running server's page (OSError: none answered with one)."""
    import urllib.request

    from xtyserver.manage.access import LAUNCH_KEY_PATH, SECRET_HEADER
    from xtyserver.manage.page_secret import read_page_secret

    # The running server's page secret, in its owner-only data folder (not the adapter token).
    secret = read_page_secret(settings.data_path) or ""
    host, port = settings.server.host, settings.server.page_port
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "localhost") else host
    shown = f"[{shown}]" if ":" in shown else shown
    request = urllib.request.Request(
        f"http://{shown}:{port}{LAUNCH_KEY_PATH}", method="POST", headers={SECRET_HEADER: secret}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        try:
            return str(msgspec.json.decode(answer.read())["key"])
        except (KeyError, msgspec.DecodeError) as exc:
            raise OSError(f"no key in the answer ({type(exc).__name__})") from exc


def _open_page(settings: Settings, key: str, *, print_only: bool, say: Say | None = None) -> int:
    from xtyserver.manage.access import open_link

    link = open_link(settings.server.host, settings.server.page_port, key)
    if print_only:
        print(link, flush=True)
        return 0
    if not _hand_to_browser(settings.data_path, link):
        print(link, flush=True)
        return 1
    print(say("opened") if say else "opened the memory page in the default browser", flush=True)
    return 0


def _hand_to_browser(data_dir: Path, link: str) -> bool:
    """Open ``link``'s page through a 0600 ``open-page.html`` whose form posts its key.

    The key is never on a command line (another local user reads those with
    ``ps``) nor in a URL (the browser's history keeps those).
    """
    import webbrowser

    from xtyserver.manage.access import PREFIX
    from xtyserver.manage.pages import handoff_page

    origin, _, key = link.partition(PREFIX + "#token=")
    handoff = private_dir(data_dir) / "open-page.html"
    write_private(handoff, handoff_page(origin, key))
    return bool(webbrowser.open(handoff.as_uri()))


async def _fake_model(host: str, port: int) -> int:
    from xtyserver.testing import run_fake_model

    await run_fake_model(host, port, on_ready=lambda url: print(f"listening {url}", flush=True))
    return 0


def _stats(settings: Settings, *, as_json: bool) -> int:
    from xtyserver.cli.say import Say, table
    from xtyserver.memory.game_names import game_name
    from xtyserver.protocol.frames import GameStats, SaveStats
    from xtyserver.session.replies import stats_result

    store = _open_store(settings)
    try:
        frame = stats_result(store.stats(), None)
    finally:
        store.close()
    if as_json:
        print(console_json(msgspec.to_builtins(frame)))
        return 0
    say = Say(settings.console)
    if not frame.saves:
        print(say("stats_none"))
        return 0
    names = {(s.game_id, s.save_id): s.save_name for s in frame.saves if s.save_name}

    def save_label(game_id: str, save_id: str) -> str:
        # as the page shows it: the name, or "未命名存档 · 5e7196" (a short id)
        return names.get((game_id, save_id)) or say("unnamed_save", short=save_id[:6])

    def where(game_id: str, save_id: str) -> str:
        return f"{game_name(game_id, say.language)} / {save_label(game_id, save_id)}"

    counts = [say(k) for k in ("stats_days", "stats_sessions", "stats_active", "stats_last")]
    right = (False, True, True, True, False)

    def row(name: str, s: GameStats | SaveStats) -> list[str]:
        return [name, str(s.days), str(s.sessions), _hm(s.active_ms), _local(s.last_played)]

    games = [row(game_name(g.game_id, say.language), g) for g in frame.games]
    print(table([say("stats_game"), *counts], games, right))
    print()
    saves = [row(where(s.game_id, s.save_id), s) for s in frame.saves]
    print(table([say("stats_save"), *counts], saves, right))
    if frame.tokens:
        print()
        header = [say(k) for k in ("stats_date", "stats_save", "stats_purpose")]
        header += [say("stats_calls"), say("stats_tokens")]
        bill = [
            [
                t.date,
                where(t.game_id, t.save_id),
                say(f"purpose_{t.purpose}"),
                str(t.calls),
                str(t.total_tokens),
            ]
            for t in frame.tokens
        ]
        print(table(header, bill, (False, False, False, True, True)))
    return 0


def _local(stamp: str | None) -> str:
    """An RFC 3339 time as this PC's local ``YYYY-MM-DD HH:MM``, or ``-``."""
    if not stamp:
        return "-"
    from datetime import datetime

    return datetime.fromisoformat(stamp).astimezone().strftime("%Y-%m-%d %H:%M")


def _hm(ms: int) -> str:
    minutes = ms // 60_000
    return f"{minutes // 60}h{minutes % 60:02d}m"


def _memory(args: argparse.Namespace) -> int:
    from xtyserver.memory.export import decode_document, encode_document

    settings = _settings(args)
    store = _open_store(settings)
    try:
        match args.memory_command:
            case "export":
                data = encode_document(store.export())
                if not args.json:
                    data = msgspec.json.format(data, indent=2)
                if args.out:
                    write_private(args.out, data)
                elif stdout_is_utf8():
                    sys.stdout.buffer.write(data + b"\n")
                else:  # a GBK console: the same document, non-ASCII as \u escapes
                    print(console_json(json.loads(data), indent=None if args.json else 2))
            case "import":
                doc = decode_document(args.file.read_bytes())
                store.import_document(doc)
                print(_say(settings)("imported", count=len(doc.events)))
            case "backup":
                store.backup(args.file)
                print(_say(settings)("backed_up", file=args.file))
            case _:
                from xtyserver.cli.memory import run

                return run(store, args)
    finally:
        store.close()
    return 0


def _token(args: argparse.Namespace) -> int:
    from xtyserver import token as tokens

    settings = _settings(args)
    if args.token_command == "rotate":
        tokens.rotate(settings.data_path)
        print("token rotated; restart adapters with the new token")
        return 0
    secret, _ = tokens.load_or_create(settings.data_path, env_token=settings.token)
    print(secret)
    return 0
