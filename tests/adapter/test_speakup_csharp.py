"""The C# client's game.event in the SMAPI example's 60 Hz loop on Mono (docs/speakup.md).

`test/SmapiHost.cs` plays an evening: the player is tired, the Luau is tomorrow, the day ends
and the next has Alex's birthday tomorrow. The example mod (examples/smapi/ModEntry.cs) checks
once a second inside UpdateTicked and reports each event once; a real `xtyserver serve` takes
them. Speaking up off (the default): four events reach the server, nobody speaks. Turned on for
Stardew on the page (its settings.json) at one line an hour: the first event is spoken about,
once, with why, on the game's main thread.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.adapter.mono import CSHARP, NO_MONO, NO_MONO_REASON, compile_cs
from tests.adapter.test_csharp_examples import play_smapi, smapi_build
from tests.conftest import TOKEN, ServerProcess
from xtyserver.session.settings import Texts
from xtyserver.testing import FakeModelServer, Reply

pytestmark = [pytest.mark.skipif(NO_MONO, reason=NO_MONO_REASON), pytest.mark.anyio]
STARDEW = "stardew-valley"
LINE = "体力快见底了，今晚早点睡，明天还有夏威夷宴会！"


async def evening(
    tmp_path: Path, scenario: str, stored: dict[str, object]
) -> tuple[str, list[str], FakeModelServer]:
    """The evening in the SMAPI host against a real server; the game's output, the server's log
    events and the scripted model."""
    host, mod = smapi_build(tmp_path)
    folder = tmp_path / "Mods" / "XiaoTangYuan"
    folder.mkdir(parents=True)
    (folder / "xiaotangyuan-key.txt").write_text(TOKEN)
    data = tmp_path / "data"
    data.mkdir()
    (data / "settings.json").write_text(json.dumps(stored), encoding="utf-8")
    async with FakeModelServer() as fake:
        fake.enqueue(Reply(text=LINE, match="游戏里刚发生"))
        server = ServerProcess(data, XTY_MODEL_BASE_URL=fake.base_url, XTY_MODEL="fake-vl")
        (folder / "xiaotangyuan-url.txt").write_text(server.url)
        try:
            out = await play_smapi(host, mod, folder, tmp_path / "StardewValley", "", scenario)
        finally:
            server.stop()
        return out, list(server._events), fake


def lines_asked(fake: FakeModelServer) -> list[str]:
    cue = Texts().speakup_cue
    return [r.text for r in fake.chat_requests if r.json["messages"][-1]["content"].endswith(cue)]


async def test_the_smapi_mod_reports_its_events_and_nobody_speaks_when_off(tmp_path: Path) -> None:
    out, events, fake = await evening(tmp_path, "evening", {})
    reported = [line.split("event ", 1)[1] for line in out.splitlines() if "[Debug] event " in line]
    assert reported == ["stamina_low", "festival_tomorrow", "day_ended", "birthday_tomorrow"]
    # Each reached the server and was judged (speaking up off): none refused, none spoken.
    assert events.count("speakup.event") == 4 and "frame.refused" not in events
    assert lines_asked(fake) == [] and "XiaoTangYuan: " not in out
    assert "back at the title" in out


async def test_turned_on_the_companion_speaks_once_about_the_first_and_says_why(
    tmp_path: Path,
) -> None:
    on = {f"speakup.games.{STARDEW}.enabled": True, f"speakup.games.{STARDEW}.lines_per_hour": 1}
    out, events, fake = await evening(tmp_path, "evening-on", on)
    assert f"[Info] XiaoTangYuan: {LINE}" in out
    assert "[Info] (小汤圆主动说话，因为你的体力快用完了。" in out
    assert out.count("XiaoTangYuan: ") == 1  # one line an hour: the others kept quiet
    [asked] = lines_asked(fake)
    assert "玩家体力快用完了" in asked and "数值：20/270" in asked
    assert events.count("speakup.event") == 4 and "frame.refused" not in events


def test_edges_report_once_per_start_and_bad_events_are_refused_before_sending(
    tmp_path: Path,
) -> None:
    probe = compile_cs(tmp_path / "EventsProbe.exe", CSHARP / "test" / "EventsProbe.cs")
    out = subprocess.run(["mono", str(probe)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.splitlines() == [
        "edges .R...R.",
        "kind invalid_frame kind local",
        "subject budget_exceeded facts.subject local",
        "facts budget_exceeded facts local",
    ]
