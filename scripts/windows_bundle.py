#!/usr/bin/env python3
"""Build the Windows download: one zip a player unpacks and double-clicks, no Python or pipx.

Usage (from the repository root)::

    python scripts/windows_bundle.py --python-embed python-3.11.9-embed-amd64.zip
        [--wheel dist/xtyserver-X-py3-none-any.whl] [--out dist] [--sha256 HEX]

``--python-embed`` is the official "Windows embeddable package (64-bit)" of
CPython 3.11 or later: this machine cannot fetch it (only package indexes are
reached here), so the builder brings it and may pin its SHA-256 (``--sha256``).
Every dependency comes as a Windows wheel (win_amd64 or pure Python) from the
package index, resolved for Windows by ``uv pip install --python-platform
x86_64-pc-windows-msvc`` (pip's ``--platform`` still judges environment markers
by the building machine, so it would take Linux's dependencies); ``--only-binary``
means nothing is compiled. Without ``--wheel`` the project's wheel is built first.

The zip holds one folder (docs/players.md "Windows 下载包")::

    xiaotangyuan-VERSION-windows-x64/
      小汤圆.cmd        double-click: start XiaoTangYuan and open its memory page
      xtyserver.cmd     the same command line as a pipx install: xtyserver.cmd doctor
      使用说明.txt       what to do, in Chinese then English
      python/           the embeddable Python; its ._pth turns on ``import site``,
                        so python/Lib/site-packages (every dependency) is on the path
                        and its .pth files (pywin32's) run

Nothing of the building machine goes in: no absolute path (``direct_url.json``,
which names the wheel's path, is dropped), no compiled ``__pycache__``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = "x86_64-pc-windows-msvc"
EPOCH = (2020, 1, 1, 0, 0, 0)  # every zip entry's time: the same inputs give the same zip

START_CMD = (
    "@echo off\r\n"
    "rem XiaoTangYuan (xtyserver): double-click to start it and open its memory page.\r\n"
    "rem The console speaks UTF-8 (Chinese names in paths and saves).\r\n"
    "chcp 65001 >nul\r\n"
    "title XiaoTangYuan\r\n"
    '"%~dp0python\\python.exe" -m xtyserver %*\r\n'
    "rem An error stays on screen until a key is pressed (the window would close).\r\n"
    "if errorlevel 1 pause\r\n"
)
COMMAND_CMD = (
    "@echo off\r\n"
    "rem xtyserver's command line from this folder, e.g.  xtyserver.cmd doctor\r\n"
    '"%~dp0python\\python.exe" -m xtyserver %*\r\n'
)
README = """\
小汤圆（XiaoTangYuan）Windows 下载包 · 版本 {version}

1. 把这个压缩包解压到一个你找得到的文件夹（例如 D:\\小汤圆），不要在压缩包里直接运行。
2. 双击「小汤圆.cmd」：会出现一个黑色窗口，说小汤圆已经启动，浏览器会打开小汤圆的记忆页。
   第一次请在记忆页的「设置」里选模型服务、粘贴 API 密钥，按「保存」和「测试连接」。
3. 进入游戏（装好小汤圆的 mod），mod 会自己连上；第一次连接时记忆页会问你是否允许。
4. 停止：在黑色窗口里按 Ctrl+C，或直接关掉窗口。

命令行：在这个文件夹里打开 PowerShell，运行 .\\xtyserver.cmd doctor（检查模型设置）、
.\\xtyserver.cmd autostart on（开机自动启动；移动了文件夹要重新运行一次）等，
和玩家指南里的 xtyserver 命令一样。
桌面快捷方式：右键「小汤圆.cmd」→「发送到」→「桌面快捷方式」。
更新：解压新版本到新文件夹，删掉旧文件夹即可；记忆、设置和密钥不在这个文件夹里，不会丢。
卸载：先运行 .\\xtyserver.cmd autostart off 和 .\\xtyserver.cmd key forget（删除 Windows
凭据管理器里保存的密钥），再删掉这个文件夹；想连记忆一起删，再删 %LOCALAPPDATA%\\XiaoTangYuan。
Windows 可能提示「已保护你的电脑」：点「更多信息」→「仍要运行」。

XiaoTangYuan for Windows, version {version}. Unzip it into a folder, double-click 小汤圆.cmd:
a console window says it runs and the browser opens its memory page (choose a model provider
and paste its key on 设置 the first time). Stop it with Ctrl+C or by closing the window.
Commands: .\\xtyserver.cmd doctor, .\\xtyserver.cmd autostart on, as in the players' guide.
Shortcut: right-click 小汤圆.cmd, Send to, Desktop. Update: unzip the new one into a new folder
and delete the old one (memories, settings and the key live elsewhere). Uninstall:
.\\xtyserver.cmd autostart off, .\\xtyserver.cmd key forget, then delete this folder
(and %LOCALAPPDATA%\\XiaoTangYuan to delete the memories too).
"""


class BundleError(Exception):
    """A clear reason the bundle cannot be built (printed, exit 1)."""


def python_version(embed: zipfile.ZipFile) -> tuple[int, int]:
    """The embeddable package's Python version, from its ``pythonXY.dll``; checked whole."""
    names = set(embed.namelist())
    found = [m for n in names if (m := re.fullmatch(r"python3(\d+)\.dll", n))]
    if not found or "python.exe" not in names:
        raise BundleError("--python-embed is not a Windows embeddable Python (no python.exe)")
    minor = int(found[0].group(1))
    for needed in (f"python3{minor}._pth", f"python3{minor}.zip"):
        if needed not in names:
            raise BundleError(f"--python-embed lacks {needed}: not the embeddable package")
    if minor < 11:
        raise BundleError(f"--python-embed is Python 3.{minor}; xtyserver needs 3.11 or later")
    return 3, minor


def enable_site(pth: str) -> str:
    """The ``._pth`` with ``import site`` on (the package ships it commented out)."""
    lines = [line.rstrip("\r") for line in pth.splitlines()]
    lines = [line for line in lines if line.strip().lstrip("#").strip() != "import site"]
    return "\r\n".join([*lines, "import site", ""])


def build_wheel(out: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(ROOT)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    wheels = sorted(out.glob("xtyserver-*.whl"))
    if not wheels:
        raise BundleError("building the wheel made no xtyserver-*.whl")
    return wheels[-1]


def install_dependencies(wheel: Path, site: Path, version: tuple[int, int]) -> None:
    """Every dependency of ``wheel`` for Windows x64 into ``site``: wheels only."""
    uv = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    if not Path(uv).exists() and shutil.which(uv) is None:
        raise BundleError("uv is needed to resolve Windows' dependencies: pip install uv")
    subprocess.run(
        [
            uv,
            "pip",
            "install",
            "--quiet",
            "--target",
            str(site),
            "--python-platform",
            PLATFORM,
            "--python-version",
            f"{version[0]}.{version[1]}",
            "--only-binary",
            ":all:",
            "--no-compile",
            str(wheel),
        ],
        check=True,
    )
    for found in site.glob("*.dist-info/direct_url.json"):
        found.unlink()  # names the wheel's path on this machine
    for cache in list(site.rglob("__pycache__")):
        shutil.rmtree(cache)
    if not list(site.glob("xtyserver-*.dist-info")):
        raise BundleError("xtyserver did not install into the bundle")


def wheel_version(wheel: Path) -> str:
    return wheel.name.split("-")[1]


def assemble(embed_path: Path, wheel: Path, folder: Path) -> None:
    """The bundle's folder: launchers, the read-me, the Python with its site-packages."""
    with zipfile.ZipFile(embed_path) as embed:
        version = python_version(embed)
        python = folder / "python"
        embed.extractall(python)
    pth = python / f"python3{version[1]}._pth"
    pth.write_text(enable_site(pth.read_text(encoding="utf-8")), encoding="utf-8", newline="")
    install_dependencies(wheel, python / "Lib" / "site-packages", version)
    (folder / "小汤圆.cmd").write_bytes(START_CMD.encode("ascii"))
    (folder / "xtyserver.cmd").write_bytes(COMMAND_CMD.encode("ascii"))
    text = README.format(version=wheel_version(wheel)).replace("\n", "\r\n")
    # UTF-8 with a BOM: every Notepad shows the Chinese right.
    (folder / "使用说明.txt").write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))


def write_zip(folder: Path, target: Path) -> None:
    """``folder`` as one top-level folder in ``target``, entries sorted, times fixed."""
    tmp = target.with_name(target.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as z:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            name = f"{folder.name}/{path.relative_to(folder).as_posix()}"
            info = zipfile.ZipInfo(name, EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            info.flag_bits |= 0x800  # UTF-8 names (小汤圆.cmd)
            with path.open("rb") as f:
                z.writestr(info, f.read())
    os.replace(tmp, target)


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def build(embed: Path, out: Path, wheel: Path | None = None, expected: str = "") -> Path:
    """Build the zip into ``out``; its path."""
    if expected and sha256(embed) != expected.lower():
        raise BundleError(f"--python-embed's SHA-256 is not {expected}: a different file")
    with zipfile.ZipFile(embed) as z:
        python_version(z)  # refused before anything is built
    if wheel is not None and not re.fullmatch(r"xtyserver-[^-]+-.+\.whl", wheel.name):
        raise BundleError(f"--wheel {wheel.name} is not an xtyserver wheel")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="xty-bundle-") as tmp:
        wheel = wheel or build_wheel(Path(tmp) / "wheel")
        name = f"xiaotangyuan-{wheel_version(wheel)}-windows-x64"
        folder = Path(tmp) / name
        folder.mkdir()
        assemble(embed, wheel, folder)
        target = out / f"{name}.zip"
        write_zip(folder, target)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--python-embed", type=Path, required=True, help="the embeddable zip")
    parser.add_argument("--wheel", type=Path, help="xtyserver's wheel (default: build it)")
    parser.add_argument("--out", type=Path, default=ROOT / "dist", help="where the zip goes")
    parser.add_argument("--sha256", default="", help="the embeddable zip's expected SHA-256")
    args = parser.parse_args(argv)
    try:
        target = build(args.python_embed, args.out, args.wheel, args.sha256)
    except (BundleError, OSError, zipfile.BadZipFile, subprocess.CalledProcessError) as exc:
        print(f"windows_bundle: {exc}", file=sys.stderr)
        return 1
    size = target.stat().st_size / 1e6
    print(f"{target} ({size:.1f} MB, sha256 {sha256(target)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
