"""Per-request hooks of send_message / stream_message: agent override, headers, on_create."""

from __future__ import annotations

import anyio
import pytest

from a2a_actors.protocol import Message, Part, Role, SendMessageRequest, Task, TaskState
from a2a_actors.runtime import Supervisor, TaskContext, agent
from a2a_actors.stores._base import TaskQuery

from .helpers import Recorder, as_task

pytestmark = pytest.mark.anyio


def request(text: str) -> SendMessageRequest:
    return SendMessageRequest(
        message=Message(message_id="m1", role=Role.USER, parts=(Part(text=text),))
    )


@agent(name="default")
async def default_agent(ctx: TaskContext) -> str:
    return f"default:{ctx.text}"


@agent(name="child")
async def child_agent(ctx: TaskContext) -> str:
    return f"{ctx.agent.name}:{ctx.text}:{ctx.headers.get('traceparent', '-')}"


async def test_agent_override_runs_that_agent_with_headers() -> None:
    with anyio.fail_after(5):
        async with Supervisor(default_agent) as sup:
            plain = as_task(await sup.send_message(request("a")))
            child = as_task(
                await sup.send_message(
                    request("b"), agent=child_agent, headers={"traceparent": "00-x"}
                )
            )
    assert plain.status.message is not None
    assert plain.status.message.text == "default:a"
    assert child.status.message is not None
    assert child.status.message.text == "child:b:00-x"


async def test_on_create_runs_before_any_observer_or_store_sees_the_task() -> None:
    recorder = Recorder()
    seen: list[tuple[str, TaskState, int, bool]] = []

    async def on_create(task: Task) -> None:
        stored = await sup.store.get(task.id)
        seen.append((task.id, task.status.state, len(recorder.events), stored is not None))

    with anyio.fail_after(5):
        async with Supervisor(default_agent, observers=[recorder]) as sup:
            task = as_task(await sup.send_message(request("x"), on_create=on_create))
            async with sup.stream_message(request("y"), on_create=on_create) as events:
                streamed = [event async for event in events]
    first = streamed[0].task
    assert first is not None
    assert seen == [
        (task.id, TaskState.SUBMITTED, 0, False),
        (first.id, TaskState.SUBMITTED, len(recorder.for_task(task.id)), False),
    ]
    assert task.status.state is TaskState.COMPLETED


async def test_on_create_failure_creates_nothing() -> None:
    async def on_create(task: Task) -> None:
        raise RuntimeError("registration failed")

    with anyio.fail_after(5):
        async with Supervisor(default_agent) as sup:
            with pytest.raises(RuntimeError, match="registration failed"):
                await sup.send_message(request("x"), on_create=on_create)
            stats = sup.statistics()
            page = await sup.store.list(TaskQuery())
            ok = as_task(await sup.send_message(request("y")))
    assert stats.live_tasks == 0
    assert page.total_size == 0
    assert ok.status.state is TaskState.COMPLETED
