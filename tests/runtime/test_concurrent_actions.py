"""Concurrent actions of one handler (a fan-out inside an agent) never publish backwards."""

from __future__ import annotations

import anyio
import pytest

from a2a_actors.protocol import (
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskState,
)
from a2a_actors.runtime import Supervisor, TaskContext, agent
from a2a_actors.stores import MemoryTaskStore, StoredTask

from .helpers import as_task, status_text

pytestmark = pytest.mark.anyio


class HoldFirstUpdate(MemoryTaskStore):
    """Holds the first WORKING save until a later version has been saved."""

    def __init__(self) -> None:
        super().__init__()
        self.held: int | None = None
        self.later_saved = anyio.Event()
        self.text_of: dict[int, str] = {}

    async def save(self, record: StoredTask) -> None:
        status = record.task.status
        self.text_of[record.version] = status.message.text if status.message else ""
        if status.state is TaskState.WORKING and self.held is None:
            self.held = record.version
            await self.later_saved.wait()
        elif self.held is not None and record.version > self.held:
            self.later_saved.set()
        await super().save(record)


async def test_a_slow_older_flush_does_not_republish_an_older_snapshot() -> None:
    both_done = anyio.Event()
    checked = anyio.Event()

    @agent(name="fan")
    async def fan(ctx: TaskContext) -> str:
        async with anyio.create_task_group() as tg:
            tg.start_soon(ctx.update, "first")
            tg.start_soon(ctx.update, "second")
        both_done.set()
        await checked.wait()
        return "done"

    store = HoldFirstUpdate()
    request = SendMessageRequest(
        message=Message(message_id="m", role=Role.USER, parts=(Part(text="go"),)),
        configuration=SendMessageConfiguration(return_immediately=True),
    )
    with anyio.fail_after(5):
        async with Supervisor(fan, store=store) as sup:
            task = as_task(await sup.send_message(request))
            await both_done.wait()
            published = await sup.get_task(task.id)
            checked.set()
    assert store.held is not None
    newest = max(v for v, text in store.text_of.items() if text in ("first", "second"))
    assert newest > store.held  # the held (older) flush finished after the newer one
    assert status_text(published) == store.text_of[newest]
