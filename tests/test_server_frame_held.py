"""A screenshot frame is not kept once it is decoded (issue 22, memory).

The reader waits seconds for the next frame (a heartbeat every 5 s, a turn
whenever the player asks); what it holds meanwhile stays resident. A chat.send
with a 1920x1080 screenshot and one Chinese character arrives as a str of two
bytes per character: 3.2 MiB kept until the next frame, measured by
``scripts/bench/rss.py`` as "growth" after a screenshot turn.
"""

from __future__ import annotations

import base64
import io
import os
import tracemalloc
from typing import Any

import pytest
from PIL import Image

from tests.conftest import chat, running
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio


def noisy_jpeg_b64() -> str:
    """A 1024x768 noise JPEG: about 1 MiB of base64, a screenshot's size."""
    image = Image.frombytes("RGB", (1024, 768), os.urandom(1024 * 768 * 3))
    buf = io.BytesIO()
    image.save(buf, format="JPEG", quality=90)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def held_by_websockets_decode(snapshot: tracemalloc.Snapshot) -> int:
    """Bytes still allocated where websockets turns a text frame into a str."""
    only = tracemalloc.Filter(True, "*websockets/asyncio/messages.py")
    return sum(s.size for s in snapshot.filter_traces([only]).statistics("filename"))


async def test_the_decoded_screenshot_frame_is_not_kept_after_the_turn(tmp_path: Any) -> None:
    data = noisy_jpeg_b64()
    assert len(data) > 900_000
    async with running(tmp_path, overrides={"memory.extraction": False}) as h:
        h.fake.enqueue(Reply(text="好的"))
        async with h.adapter() as ws:
            tracemalloc.start()
            try:
                _, done = await chat(ws, "看看我的农场", image={"mime": "image/jpeg", "data": data})
                assert done["type"] == "chat.done", done
                # Nothing else is sent: the reader is waiting for the next frame.
                held = held_by_websockets_decode(tracemalloc.take_snapshot())
            finally:
                tracemalloc.stop()
    # The str was 2 bytes per character (the frame has Chinese text): ~2 MB if kept.
    assert held < 64 * 1024, held
