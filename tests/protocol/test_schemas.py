"""schemas/ must be exactly what ``protocol.schemas.generate()`` produces from the frame types."""

from __future__ import annotations

import json
from pathlib import Path

from xtyserver.protocol.schemas import check_schemas, generate

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


def test_schemas_folder_equals_generated_schemas() -> None:
    wanted = generate()
    present = {p.name: p.read_text(encoding="utf-8") for p in SCHEMAS.glob("*.json")}
    assert sorted(present) == sorted(wanted), "run: python -m xtyserver schemas"
    stale = [name for name, text in wanted.items() if present[name] != text]
    assert not stale, f"stale schemas {stale}; run: python -m xtyserver schemas"
    assert check_schemas(SCHEMAS) == []


def test_schemas_cover_every_frame_type_and_model_context() -> None:
    names = set(generate())
    for frame in (
        "adapter.hello",
        "heartbeat",
        "state.update",
        "chat.send",
        "chat.typing",
        "chat.cancel",
        "stats.get",
        "memory.get",
        "memory.forget",
        "memory.pin",
        "profile.update",
        "server.hello",
        "chat.delta",
        "chat.done",
        "chat.error",
        "error",
        "stats.result",
        "memory.result",
        "memory.preview",
        "memory.forgotten",
        "modelContext",
    ):
        assert f"{frame}.json" in names


def test_check_schemas_reports_a_stale_file(tmp_path: Path) -> None:
    for name, text in generate().items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert check_schemas(tmp_path) == []
    schema = json.loads((tmp_path / "chat.send.json").read_text(encoding="utf-8"))
    schema["title"] = "edited by hand"
    (tmp_path / "chat.send.json").write_text(json.dumps(schema), encoding="utf-8")
    (tmp_path / "extra.json").write_text("{}", encoding="utf-8")
    assert check_schemas(tmp_path) == ["chat.send.json", "extra.json"]


def test_model_context_schema_carries_the_budget_numbers() -> None:
    schema = json.loads(generate()["modelContext.json"])
    text = json.dumps(schema)
    assert '"maxLength": 200' in text
    defs = schema["$defs"]
    context = defs["ModelContext"]["properties"]
    nearby = context["nearby"]["anyOf"][0]
    assert nearby["maxItems"] == 5
    assert context["relevantItems"]["anyOf"][0]["maxItems"] == 8
    assert defs["ModelContext"]["additionalProperties"] is False
