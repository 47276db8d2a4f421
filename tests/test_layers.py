"""The layout is the architecture (docs/architecture.md "Layers").

Two checks, both derived from the folders, so a new or renamed module is checked
without editing this file:

* every module of the sans-I/O core (everything under ``protocol/``, ``session/``
  and ``memory/`` outside ``memory/sqlite/``) imports no I/O library, not even
  through another module, in a fresh interpreter;
* no module imports from a higher layer than its own (a static read of every
  ``import`` in the package, including imports inside functions).

The memory evaluation (``xtyeval/``) is a developers' package outside the layers:
it drives the real server from a checkout, and no ``xtyserver`` module imports it
(it is not in the wheel). Its pure parts are checked like the core.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "xtyserver"
# Developers' packages beside xtyserver/ in the checkout, never in the wheel.
DEVELOPER_PACKAGES = ("xtyeval",)
IO_LIBRARIES = {
    "openai",
    "anyio",
    "PIL",
    "apsw",
    "structlog",
    "websockets",
    "httpx",
    "httpx2",
    "sniffio",
    "tzlocal",
    "platformdirs",
    "keyring",
}

# Lowest first. A module may import its own layer and any layer below it.
# Keep in step with docs/architecture.md.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("xtyserver", "xtyserver.__version__", "xtyserver.errors", "xtyserver.clock"),
    ("xtyserver.log", "xtyserver.token", "xtyserver.files"),
    ("xtyserver.protocol",),
    ("xtyserver.memory",),
    ("xtyserver.session",),
    ("xtyserver.memory.sqlite", "xtyserver.model"),
    ("xtyserver.config",),
    (
        "xtyserver.serve",
        "xtyserver.replay",
        "xtyserver.testing",
        "xtyserver.adapter",
        "xtyserver.voice",
    ),
    ("xtyserver.manage",),
    ("xtyserver.server", "xtyserver.ports"),
    ("xtyserver.cli", "xtyserver.__main__"),
)
CORE_FOLDERS = ("protocol", "session", "memory")
NOT_CORE = ("memory/sqlite",)
# Pure helpers that live beside their shells; checked like the core.
PURE_OUTSIDE_CORE = (
    "xtyserver.manage.access",
    "xtyserver.model.bounds",
    "xtyserver.replay.recording",
    "xtyserver.replay.lint",
    "xtyserver.replay.check",
    # The evaluation's, in its developers' package.
    "xtyeval.evalset",
    "xtyeval.scoring",
    "xtyeval.table",
)


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _all_modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def core_modules() -> list[str]:
    """Every module under the core folders, read from the tree."""
    found = []
    for path in _all_modules():
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(CORE_FOLDERS) and not rel.startswith(NOT_CORE):
            found.append(_module_name(path))
    return found


def layer_of(module: str) -> int:
    """The index in LAYERS of the longest prefix that owns ``module``."""
    best, best_len = -1, -1
    for index, owners in enumerate(LAYERS):
        for owner in owners:
            owns = module == owner or (owner != "xtyserver" and module.startswith(owner + "."))
            if owns and len(owner) > best_len:
                best, best_len = index, len(owner)
    if best < 0 and module.startswith("xtyserver."):
        raise AssertionError(f"{module} is in no layer: add its folder to LAYERS")
    return max(best, 0)


def _imports(path: Path, module: str) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            if base == "xtyserver" or (node.level and not node.module):
                # ``from xtyserver import log`` names modules: check each one.
                found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, base))
    return [(line, name) for line, name in found if name.split(".")[0] == "xtyserver"]


def test_the_core_list_is_read_from_the_folders() -> None:
    core = core_modules()
    assert "xtyserver.session.machine" in core
    assert "xtyserver.memory.retrieval" in core
    assert not any(name.startswith("xtyserver.memory.sqlite") for name in core)
    assert len(core) >= 40


@pytest.mark.parametrize("module", [*core_modules(), *PURE_OUTSIDE_CORE])
def test_core_module_imports_no_io_library_in_a_fresh_interpreter(module: str) -> None:
    probe = (
        "import importlib, json, sys\n"
        f"importlib.import_module({module!r})\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    loaded = json.loads(out)
    assert IO_LIBRARIES.isdisjoint(loaded), sorted(IO_LIBRARIES.intersection(loaded))


def test_no_import_runs_up_a_layer() -> None:
    wrong = []
    for path in _all_modules():
        module = _module_name(path)
        mine = layer_of(module)
        for line, target in _imports(path, module):
            if layer_of(target) > mine:
                rel = path.relative_to(PACKAGE.parent)
                wrong.append(f"{rel}:{line} {module} -> {target}")
    assert not wrong, "imports from a higher layer:\n" + "\n".join(wrong)


def _developer_imports(path: Path) -> list[tuple[int, str]]:
    """Every import of a developers' package in one file (relative ones stay inside xtyserver)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.append((node.lineno, node.module))
    return [(line, name) for line, name in found if name.split(".")[0] in DEVELOPER_PACKAGES]


def test_no_xtyserver_module_imports_a_developers_package() -> None:
    wrong = [
        f"{path.relative_to(ROOT)}:{line} -> {target}"
        for path in _all_modules()
        for line, target in _developer_imports(path)
    ]
    assert not wrong, "the wheel would not hold these:\n" + "\n".join(wrong)


def test_the_developers_packages_are_outside_the_layers() -> None:
    for name in DEVELOPER_PACKAGES:
        assert (ROOT / name / "__init__.py").exists(), name
        assert not (PACKAGE / name).exists(), name
        owners = [owner for layer in LAYERS for owner in layer]
        assert not [o for o in owners if o.split(".")[0] == name], name


def test_the_developers_package_check_sees_an_import(tmp_path: Path) -> None:
    fake = tmp_path / "xtyserver" / "cli" / "bad.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("def f():\n    from xtyeval import command\n    import xtyeval.runner\n")
    assert _developer_imports(fake) == [(2, "xtyeval"), (3, "xtyeval.runner")]


def test_the_layer_check_sees_an_upward_import(tmp_path: Path) -> None:
    """The checker itself can fail: a core module importing the store is caught."""
    fake = tmp_path / "xtyserver" / "session" / "bad.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("from xtyserver.memory.sqlite.store import MemoryStore\n")
    (target,) = _imports(fake, "xtyserver.session.bad")
    assert layer_of(target[1]) > layer_of("xtyserver.session.bad")
