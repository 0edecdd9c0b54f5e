"""Streams and subscriptions: snapshot first, no gap, no duplicate, slow consumers dropped."""

from __future__ import annotations

import random

import anyio
import anyio.lowlevel
import pytest

from a2a_actors.protocol import (
    StreamResponse,
    TaskNotFoundError,
    TaskState,
    UnsupportedOperationError,
)
from a2a_actors.runtime import InProcessClient, SubscriberDropped, Supervisor, TaskContext

from .helpers import Recorder, as_task, state_of, texts

pytestmark = pytest.mark.anyio

STEPS = 120


async def chatty(ctx: TaskContext) -> str:
    """Emits STEPS updates and chunks, yielding to the scheduler between them."""
    artifact_id = await ctx.artifact("0", name="log")
    for i in range(1, STEPS):
        if i % 3:
            await ctx.update(f"step {i}")
        else:
            await ctx.artifact(str(i), artifact_id=artifact_id, append=True)
        await anyio.lowlevel.checkpoint()
    return "done"


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_racing_subscribers_see_snapshot_then_an_identical_gap_free_suffix(
    seed: int,
) -> None:
    with anyio.fail_after(5):
        rng = random.Random(seed)
        async with Supervisor(chatty) as sup:
            client = InProcessClient(sup)
            reference: list[tuple[int, StreamResponse]] = []
            seen: list[list[tuple[int, StreamResponse]]] = []

            async def subscriber(delay: int) -> None:
                for _ in range(delay):
                    await anyio.lowlevel.checkpoint()
                got: list[tuple[int, StreamResponse]] = []
                try:
                    async with client.subscribe(task_id) as events:
                        async for event in events:
                            got.append((events.version, event))
                except UnsupportedOperationError:
                    return  # joined after the end: allowed
                seen.append(got)

            async with client.stream("go") as stream:
                first = await stream.__anext__()
                assert first.task is not None
                task_id = first.task.id
                reference.append((stream.version, first))
                async with anyio.create_task_group() as tg:
                    for _ in range(40):
                        tg.start_soon(subscriber, rng.randrange(0, STEPS * 2))
                    async for event in stream:
                        reference.append((stream.version, event))

        versions = [v for v, _ in reference]
        assert versions == sorted(set(versions))  # strictly increasing
        assert state_of(reference[-1][1]) is TaskState.COMPLETED
        assert len({got[0][0] for got in seen}) > 5  # they really joined at different points
        for got in seen:
            snap_version, snap = got[0]
            assert snap.task is not None
            # no gap, no duplicate: exactly the reference events newer than the snapshot
            assert got[1:] == [(v, e) for v, e in reference if v > snap_version]
            # and the snapshot holds exactly what the reference had produced by then
            before = [e for v, e in reference if v <= snap_version]
            statuses = [e.status_update.status for e in before if e.status_update]
            if statuses:
                assert snap.task.status == statuses[-1]
            chunks = sum(len(e.artifact_update.artifact.parts) for e in before if e.artifact_update)
            assert sum(len(a.parts) for a in snap.task.artifacts) == chunks


async def test_several_subscribers_get_identical_sequences_and_leaving_affects_no_other() -> None:
    with anyio.fail_after(5):
        go = anyio.Event()

        async def stepwise(ctx: TaskContext) -> str:
            await ctx.update("ready")
            await go.wait()
            for i in range(5):
                await ctx.update(f"step {i}")
            return "done"

        async with Supervisor(stepwise) as sup:
            client = InProcessClient(sup)
            task = as_task(await client.send_message("x", return_immediately=True))
            await anyio.wait_all_tasks_blocked()
            results: list[list[StreamResponse]] = []

            async def full() -> None:
                async with client.subscribe(task.id) as events:
                    results.append([e async for e in events])

            async def leaver() -> None:
                async with client.subscribe(task.id) as events:
                    await events.__anext__()
                    await events.__anext__()

            async with anyio.create_task_group() as tg:
                for _ in range(3):
                    tg.start_soon(full)
                tg.start_soon(leaver)
                await anyio.wait_all_tasks_blocked()
                assert sup.statistics().subscribers == 4
                go.set()
            assert results[0] == results[1] == results[2]
            assert results[0][0].task is not None
            assert results[0][0].task.status.state is TaskState.WORKING
            assert [state_of(e) for e in results[0][1:]] == [TaskState.WORKING] * 5 + [
                TaskState.COMPLETED
            ]


async def test_a_stalled_subscriber_is_dropped_without_delaying_anyone() -> None:
    with anyio.fail_after(5):

        async def burst(ctx: TaskContext) -> str:
            for i in range(20):
                await ctx.update(f"step {i}")
            return "done"

        gate = anyio.Event()

        async def gated_burst(ctx: TaskContext) -> str:
            await ctx.update("ready")
            await gate.wait()
            return await burst(ctx)

        async with Supervisor(gated_burst, subscriber_buffer=4) as sup:
            client = InProcessClient(sup)
            task = as_task(await client.send_message("x", return_immediately=True))
            await anyio.wait_all_tasks_blocked()
            fast_events: list[StreamResponse] = []
            async with client.subscribe(task.id) as stalled:
                async with anyio.create_task_group() as tg:

                    async def fast() -> None:
                        async with client.subscribe(task.id) as events:
                            async for event in events:
                                fast_events.append(event)
                                await anyio.lowlevel.checkpoint()

                    tg.start_soon(fast)
                    await anyio.wait_all_tasks_blocked()
                    gate.set()
                # the task finished while the stalled subscriber never read
                assert (await client.get_task(task.id)).status.state is TaskState.COMPLETED
                assert state_of(fast_events[-1]) is TaskState.COMPLETED
                assert len(fast_events) == 1 + 20 + 1
                buffered = [await stalled.__anext__() for _ in range(4)]
                assert buffered[0].task is not None
                with pytest.raises(SubscriberDropped) as info:
                    await stalled.__anext__()
                assert info.value.task_id == task.id
            assert sup.statistics().dropped_subscribers == 1


async def test_subscribe_errors() -> None:
    with anyio.fail_after(5):

        async def quick(ctx: TaskContext) -> str:
            return "done"

        async with Supervisor(quick) as sup:
            client = InProcessClient(sup)
            task = as_task(await client.send_message("x"))
            with pytest.raises(UnsupportedOperationError, match="terminal state"):
                async with client.subscribe(task.id):
                    pass
            with pytest.raises(TaskNotFoundError):
                async with client.subscribe("unknown"):
                    pass


async def test_streams_end_at_an_interrupted_state_and_resume_streams_start_fresh() -> None:
    with anyio.fail_after(5):

        async def asker(ctx: TaskContext) -> str:
            await ctx.update("thinking")
            city = await ctx.ask("Which city?")
            await ctx.artifact(f"sunny in {city.text}", name="forecast")
            return "done"

        recorder = Recorder()
        async with Supervisor(asker, observers=[recorder]) as sup:
            client = InProcessClient(sup)
            async with client.stream("weather") as events:
                first = [e async for e in events]
            assert [state_of(e) for e in first] == [
                TaskState.SUBMITTED,
                TaskState.WORKING,
                TaskState.INPUT_REQUIRED,
            ]
            assert first[0].task is not None
            task_id = first[0].task.id

            watcher: list[StreamResponse] = []
            async with anyio.create_task_group() as tg:

                async def watch() -> None:
                    async with client.subscribe(task_id) as events:
                        watcher.extend([e async for e in events])

                tg.start_soon(watch)
                await anyio.wait_all_tasks_blocked()
                async with client.stream("Paris", task_id=task_id) as events:
                    second = [e async for e in events]
            assert second[0].task is not None
            assert second[0].task.status.state is TaskState.WORKING
            assert texts(second[0].task)[-1] == "Paris"  # the answer is in the snapshot
            assert [e.artifact_update is not None for e in second[1:]] == [True, False]
            assert state_of(second[-1]) is TaskState.COMPLETED
            # the subscriber that joined while INPUT_REQUIRED kept going until the end
            assert state_of(watcher[0]) is TaskState.INPUT_REQUIRED
            assert state_of(watcher[-1]) is TaskState.COMPLETED
            # observers saw the Task once, then every update, in order
            observed = recorder.for_task(task_id)
            assert observed[0].task is not None
            assert sum(e.task is not None for e in observed) == 1
            assert [state_of(e) for e in observed if e.status_update] == [
                TaskState.WORKING,
                TaskState.INPUT_REQUIRED,
                TaskState.WORKING,
                TaskState.COMPLETED,
            ]
