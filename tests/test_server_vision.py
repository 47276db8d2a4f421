"""Issue 18 section 4: vision follows the model.

A scripted provider without vision refuses an image part with HTTP 400 naming
the image: the turn is asked again once without it, chat.done carries a notice
in the player's language, and the route sends no image for the rest of the process.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import chat, png_b64, running
from xtyserver.session.settings import Texts
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio

IMAGE = {"mime": "image/png", "data": png_b64()}


def has_image(request: Any) -> bool:
    return any(
        isinstance(m.get("content"), list)
        and any(p.get("type") == "image_url" for p in m["content"])
        for m in request.json["messages"]
    )


async def test_a_refused_image_turns_vision_off_and_the_turn_is_answered_without_it(
    tmp_path: Any,
) -> None:
    overrides = {"memory.extraction": False}
    async with running(tmp_path, overrides=overrides, fake_options={"vision": False}) as h:
        h.fake.enqueue(Reply(text="我看不到图，不过可以聊聊。"), Reply(text="好的"))
        async with h.adapter() as ws:
            _deltas, done = await chat(ws, "看看我的农场", image=IMAGE)
            assert done["type"] == "chat.done", done
            assert done["text"] == "我看不到图，不过可以聊聊。"
            assert done["notice"] == Texts().image_refused
            assert "imageSent" not in done
            first, second = h.fake.chat_requests
            assert has_image(first) and not has_image(second)
            assert second.json["messages"][-1]["content"] is not None
            # The rest of the process: no image goes to this route, no notice again.
            _, again = await chat(ws, "再看看", chat_id="c2", image=IMAGE)
        assert again["type"] == "chat.done" and "notice" not in again and "imageSent" not in again
        assert len(h.fake.chat_requests) == 3 and not has_image(h.fake.chat_requests[2])


async def test_the_notice_follows_the_players_language(tmp_path: Any) -> None:
    overrides = {"memory.extraction": False}
    async with running(tmp_path, overrides=overrides, fake_options={"vision": False}) as h:
        h.store.set_profile_field("language", "English")
        h.fake.enqueue(Reply(text="I cannot see it."))
        async with h.adapter() as ws:
            _, done = await chat(ws, "look at my farm", image=IMAGE)
        assert done["notice"] == Texts().image_refused_en


async def test_a_400_that_does_not_name_the_image_is_not_retried(tmp_path: Any) -> None:
    async with running(tmp_path) as h:
        h.fake.enqueue(Reply(status=400, text="model fake-vl does not exist"))
        async with h.adapter() as ws:
            _, done = await chat(ws, "看看", image=IMAGE)
        assert done["type"] == "chat.error" and done["code"] == "model_bad_request"
        assert len(h.fake.chat_requests) == 1


async def test_a_vision_model_keeps_its_image(tmp_path: Any) -> None:
    async with running(tmp_path, overrides={"memory.extraction": False}) as h:
        h.fake.enqueue(Reply(text="绿色的农场！"))
        async with h.adapter() as ws:
            _, done = await chat(ws, "看看", image=IMAGE)
        assert done["imageSent"] is True and "notice" not in done
        assert has_image(h.fake.chat_requests[0])
