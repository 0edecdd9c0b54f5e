"""``ctx.start()``: the task is visible (stream, GetTask) before the agent does anything."""

from __future__ import annotations

import anyio
import pytest

from a2a_actors.protocol import Message, StreamResponse, TaskState
from a2a_actors.runtime import InProcessClient, Supervisor, TaskContext
from a2a_actors.stores import MemoryTaskStore

from .helpers import Recorder, as_task, state_of, status_text

pytestmark = pytest.mark.anyio


async def test_the_first_stream_event_comes_before_the_agent_does_anything_else() -> None:
    with anyio.fail_after(5):
        go = anyio.Event()
        steps: list[str] = []

        async def blocked(ctx: TaskContext) -> str:
            await ctx.start()
            steps.append("started")
            await go.wait()  # blocked until the test saw the stream's first events
            steps.append("went on")
            return "done"

        async with Supervisor(blocked) as sup:
            client = InProcessClient(sup)
            seen: list[StreamResponse] = []
            async with client.stream("hi") as events:
                async for event in events:
                    seen.append(event)
                    if len(seen) == 1:
                        # The Task snapshot, while the agent waits: its id is known now.
                        assert event.task is not None
                        assert event.task.status.state is TaskState.SUBMITTED
                        found = await client.get_task(event.task.id)
                        assert found.status.state is TaskState.WORKING
                        assert found.status.message is None
                    elif len(seen) == 2:
                        assert event.status_update is not None
                        assert event.status_update.status.state is TaskState.WORKING
                        assert event.status_update.status.message is None
                        assert "went on" not in steps
                        go.set()
            assert [state_of(e) for e in seen] == [
                TaskState.SUBMITTED,
                TaskState.WORKING,
                TaskState.COMPLETED,
            ]
            assert steps == ["started", "went on"]


async def test_a_started_task_can_be_cancelled_before_it_emits() -> None:
    with anyio.fail_after(5):

        async def stuck(ctx: TaskContext) -> None:
            await ctx.start()
            await anyio.sleep_forever()

        async with Supervisor(stuck) as sup:
            client = InProcessClient(sup)
            async with client.stream("hi") as events:
                first = await events.__anext__()
                assert first.task is not None
                canceled = await client.cancel_task(first.task.id)
                assert canceled.status.state is TaskState.CANCELED
                rest = [state_of(e) async for e in events]
            assert rest[-1] is TaskState.CANCELED


async def test_start_is_idempotent_and_never_an_illegal_transition() -> None:
    with anyio.fail_after(5):
        store = MemoryTaskStore()
        recorder = Recorder()

        async def careful(ctx: TaskContext) -> str:
            await ctx.start()
            await ctx.start()  # already WORKING: nothing happens
            await ctx.update("working")
            await ctx.start()
            answer = await ctx.ask("which?")
            await ctx.start()  # WORKING again after the answer: nothing happens
            return f"got {answer.text}"

        async with Supervisor(careful, store=store, observers=[recorder]) as sup:
            client = InProcessClient(sup)
            asked = as_task(await client.send_message("go"))
            assert asked.status.state is TaskState.INPUT_REQUIRED
            done = as_task(await client.send_message("this one", task_id=asked.id))
            assert (done.status.state, status_text(done)) == (TaskState.COMPLETED, "got this one")
            states = [state_of(e) for e in recorder.for_task(asked.id)]
            assert states == [
                TaskState.SUBMITTED,  # the snapshot committed by start()
                TaskState.WORKING,  # start(), once
                TaskState.WORKING,  # update("working")
                TaskState.INPUT_REQUIRED,
                TaskState.WORKING,  # resumed by the answer
                TaskState.COMPLETED,
            ]


async def test_start_after_the_end_or_on_a_committed_task_does_nothing_wrong() -> None:
    with anyio.fail_after(5):
        outcome: list[str] = []

        async def finisher(ctx: TaskContext) -> None:
            await ctx.start()  # SUBMITTED (committed by returnImmediately) -> WORKING
            await ctx.complete("finished")
            await ctx.start()  # terminal: a no-op, not an IllegalTransitionError
            outcome.append(ctx.task.status.state.value)

        async with Supervisor(finisher) as sup:
            client = InProcessClient(sup)
            submitted = as_task(await client.send_message("x", return_immediately=True))
            assert submitted.status.state is TaskState.SUBMITTED
            await anyio.wait_all_tasks_blocked()
            task = await client.get_task(submitted.id)
            assert (task.status.state, status_text(task)) == (TaskState.COMPLETED, "finished")
            assert outcome == [TaskState.COMPLETED.value]


async def test_a_reply_after_start_completes_the_task_instead_of_replacing_it() -> None:
    with anyio.fail_after(5):

        async def chat(ctx: TaskContext) -> None:
            await ctx.start()
            await ctx.reply(f"answer to {ctx.text}")

        async with Supervisor(chat) as sup:
            reply = await InProcessClient(sup).send_message("hello")
            assert not isinstance(reply, Message)
            task = as_task(reply)
            assert (task.status.state, status_text(task)) == (
                TaskState.COMPLETED,
                "answer to hello",
            )
