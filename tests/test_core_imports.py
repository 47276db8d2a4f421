"""The sans-I/O core imports no I/O library, not even through another module."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

CORE = [
    "xtyserver.session",
    "xtyserver.session.machine",
    "xtyserver.session.saves",
    "xtyserver.session.turn",
    "xtyserver.session.effects",
    "xtyserver.session.events",
    "xtyserver.session.tools",
    "xtyserver.session.working",
    "xtyserver.session.fold",
    "xtyserver.session.layers",
    "xtyserver.session.tool_loop",
    "xtyserver.memory.manage",
    "xtyserver.session.requests",
    "xtyserver.protocol.frame_base",
    "xtyserver.protocol.memory_frames",
    "xtyserver.protocol.codec",
    "xtyserver.protocol.duplicates",
    "xtyserver.protocol.explain",
    "xtyserver.protocol.normal_frames",
    "xtyserver.protocol.prefilter",
    "xtyserver.protocol.frames",
    "xtyserver.protocol.budget",
    "xtyserver.protocol.forbidden",
    "xtyserver.protocol.replies",
    "xtyserver.protocol.images",
    "xtyserver.memory.retrieval",
    "xtyserver.memory.glossary",
    "xtyserver.memory.compaction",
    "xtyserver.upgrade",
    "xtyserver.ui_access",
    "xtyserver.model.prompt",
    "xtyserver.replay.recording",
    "xtyserver.replay.lint",
    "xtyserver.replay.check",
    "xtyserver.evaluation.evalset",
    "xtyserver.evaluation.scoring",
    "xtyserver.evaluation.table",
]
IO_LIBRARIES = {"openai", "anyio", "PIL", "apsw", "structlog", "websockets", "httpx", "sniffio"}


@pytest.mark.parametrize("module", CORE)
def test_core_module_imports_no_io_library_in_a_fresh_interpreter(module: str) -> None:
    probe = (
        "import importlib, importlib.util, json, sys\n"
        f"if importlib.util.find_spec({module!r}) is None: print('null'); raise SystemExit\n"
        f"importlib.import_module({module!r})\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    loaded = json.loads(out)
    if loaded is None:
        pytest.skip(f"{module} does not exist in this tree")
    assert IO_LIBRARIES.isdisjoint(loaded), sorted(IO_LIBRARIES.intersection(loaded))
