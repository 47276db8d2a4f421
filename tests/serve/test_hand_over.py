"""The connection's hand-over between its tasks (a reply's first piece goes out first).

``_hand_over`` puts an item on a task queue and then yields, so the woken
receiver runs before the sender goes on: the model call that hands on the
first piece of a reply no longer reads the provider's next chunks before the
driver (then the writer) has sent it. Cancellation and a full queue behave as
``send``.
"""

from __future__ import annotations

import anyio
import pytest

from xtyserver.serve.connection import _hand_over

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_the_receiver_runs_before_the_sender_goes_on() -> None:
    send, receive = anyio.create_memory_object_stream[int](4)
    seen: list[str] = []

    async def receiver() -> None:
        async for item in receive:
            seen.append(f"received {item}")

    async with anyio.create_task_group() as tg:
        tg.start_soon(receiver)
        await anyio.wait_all_tasks_blocked()
        for item in (1, 2):
            await _hand_over(send, item)
            seen.append(f"sender after {item}")
        send.close()
    assert seen == ["received 1", "sender after 1", "received 2", "sender after 2"]


async def test_a_cancelled_sender_puts_nothing_and_a_full_queue_waits() -> None:
    send, receive = anyio.create_memory_object_stream[int](1)
    with anyio.CancelScope() as scope:
        scope.cancel()
        await _hand_over(send, 1)
    assert receive.statistics().current_buffer_used == 0  # cancelled before the put
    await _hand_over(send, 2)
    with anyio.move_on_after(0.05) as waited:
        await _hand_over(send, 3)  # the queue is full: waits, as send does
    assert waited.cancelled_caught
    assert receive.receive_nowait() == 2
    with pytest.raises(anyio.WouldBlock):
        receive.receive_nowait()
