"""``ctx.waiting()``: no running slot is held while a handler waits on other work."""

from __future__ import annotations

import anyio
import pytest

from a2a_actors.protocol import (
    Message,
    Part,
    Role,
    SendMessageRequest,
    Task,
    TaskState,
)
from a2a_actors.runtime import Supervisor, TaskContext, agent

from .helpers import as_task, status_text

pytestmark = pytest.mark.anyio


def request(text: str, *, task_id: str = "") -> SendMessageRequest:
    return SendMessageRequest(
        message=Message(
            message_id=f"m-{text}", role=Role.USER, parts=(Part(text=text),), task_id=task_id
        )
    )


async def test_waiting_frees_the_slot_and_takes_it_back() -> None:
    inside = anyio.Event()
    release = anyio.Event()
    slots_inside: list[int] = []

    @agent(name="waiter")
    async def waiter(ctx: TaskContext) -> str:
        if ctx.text == "wait":
            async with ctx.waiting():
                slots_inside.append(ctx.supervisor.statistics().running_handlers)
                inside.set()
                await release.wait()
            slots_after = ctx.supervisor.statistics().running_handlers
            return f"slots {slots_after}"
        return "quick"

    results: dict[str, Task] = {}

    async def wait_blocking(sup: Supervisor) -> None:
        results["wait"] = as_task(await sup.send_message(request("wait")))

    with anyio.fail_after(5):
        async with Supervisor(waiter, max_running=1) as sup, anyio.create_task_group() as tg:
            tg.start_soon(wait_blocking, sup)
            await inside.wait()
            # The only slot is free: another task runs to completion meanwhile.
            quick = as_task(await sup.send_message(request("quick")))
            assert quick.status.state is TaskState.COMPLETED
            release.set()
    assert slots_inside == [0]
    assert status_text(results["wait"]) == "slots 1"


async def test_a_question_inside_waiting_does_not_take_the_slot_early() -> None:
    @agent(name="asker")
    async def asker(ctx: TaskContext) -> str:
        async with ctx.waiting():
            answer = await ctx.ask("which?")
            held = ctx.supervisor.statistics().running_handlers
        after = ctx.supervisor.statistics().running_handlers
        return f"{answer.text}: {held} held inside, {after} after"

    with anyio.fail_after(5):
        async with Supervisor(asker, max_running=1) as sup:
            asked = as_task(await sup.send_message(request("go")))
            assert asked.status.state is TaskState.INPUT_REQUIRED
            done = as_task(await sup.send_message(request("this", task_id=asked.id)))
    assert status_text(done) == "this: 0 held inside, 1 after"
