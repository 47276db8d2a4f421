"""``xtyserver doctor``, the guide's next step, checks what the page saved, in Chinese.

The player saves a provider and its key on the page (the page API, as its script
calls it, over the real server); then runs ``xtyserver doctor`` in a console
(a real ``python -m xtyserver`` process on the same data folder, a GBK pipe):
it checks that provider with that key (the scripted model server sees the key)
and says so in Chinese, English only when asked for.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from tests.cli.test_main import ROOT, env_for
from tests.conftest import running
from tests.manage.test_http import Page

pytestmark = pytest.mark.anyio
KEY = "sk-doctor-reads-the-page-0123456789"


def doctor(data: Path, *command: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``xtyserver doctor`` (or ``COMMAND``) on ``data`` in a Chinese console."""
    return subprocess.run(
        [sys.executable, "-m", "xtyserver", *(command or ["doctor"]), "--data-dir", str(data)],
        capture_output=True,
        encoding="gbk",
        timeout=120,
        cwd=ROOT,
        env=env_for(data, **{"XTY_LANG": "zh", **env}),
    )


async def test_doctor_checks_the_provider_and_key_the_page_saved_in_chinese(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    async with running(data, model=False) as h:
        page = Page(h)
        await page.open()
        await page.post("settings", changes={"model.base_url": h.fake.base_url, "model.model": "m"})
        await page.post("key", apiKey=KEY)
        before = len(h.fake.requests)

        done = await anyio.to_thread.run_sync(lambda: doctor(data, XTY_LANG="zh"))
        assert done.returncode == 0, (done.stdout, done.stderr)
        out = done.stdout
        assert "聊天模型可以回答。" in out, out
        assert "能连上  通过" in out and h.fake.base_url in out, out
        assert "no model is configured" not in out and "chat route" not in out
        assert KEY not in out + done.stderr
        asked = h.fake.requests[before:]
        assert asked and all(KEY in json.dumps(r.headers) for r in asked)

        english = await anyio.to_thread.run_sync(lambda: doctor(data, XTY_LANG="en"))
        assert "chat route can answer: yes" in english.stdout, english.stdout

        # Uninstalling: `xtyserver key forget` takes the key out of its store.
        forget = await anyio.to_thread.run_sync(lambda: doctor(data, "key", "forget"))
        assert forget.returncode == 0 and forget.stdout.startswith("已删除保存的 API 密钥")
        assert (await page.get("settings"))["key"]["source"] == "none"
        again = await anyio.to_thread.run_sync(lambda: doctor(data, "key", "forget"))
        assert again.stdout.strip() == "没有保存的 API 密钥。"


async def test_doctor_without_a_model_says_where_to_set_one_in_chinese(tmp_path: Path) -> None:
    done = await anyio.to_thread.run_sync(lambda: doctor(tmp_path / "data", XTY_LANG="zh"))
    assert done.returncode == 1
    assert "还没有设置模型" in done.stdout and "聊天模型还不能回答" in done.stdout, done.stdout
    assert "记忆页「设置」里的「接口地址」" in done.stdout, done.stdout
