"""The environment seam for cluster mode: observers get each event's task version, and a
store whose write lost to another writer (WriteLostError) stops the actor, which then
publishes what the store holds and writes nothing more."""

from __future__ import annotations

import anyio
import msgspec

from a2a_actors.protocol import Task, TaskState
from a2a_actors.protocol._models import TaskStatus, utc_now
from a2a_actors.runtime import InProcessClient, Supervisor, TaskContext
from a2a_actors.runtime._environment import WriteLostError
from a2a_actors.stores._base import StoredTask, TaskPage, TaskQuery
from a2a_actors.stores._memory import MemoryTaskStore

from .helpers import Recorder, as_task


async def test_observers_get_the_version_each_event_produced() -> None:
    async def agent(ctx: TaskContext) -> str:
        await ctx.update("one")
        await ctx.update("two")
        return "done"

    recorder = Recorder()
    async with Supervisor(agent, observers=[recorder]) as sup:
        task = as_task(await InProcessClient(sup).send_message("x"))
        stored = await sup.store.get(task.id)
    versions = [v for tid, v in recorder.versions if tid == task.id]
    assert versions == sorted(set(versions))
    assert versions[0] >= 1
    assert stored is not None
    assert versions[-1] == stored.version


class LosingStore:
    """A memory store where, after ``keep`` saves, another node's CANCELED record wins."""

    def __init__(self, keep: int) -> None:
        self.inner = MemoryTaskStore()
        self.keep = keep
        self.saved: list[int] = []
        self.refused: list[int] = []

    async def save(self, record: StoredTask) -> None:
        if len(self.saved) >= self.keep:
            self.refused.append(record.version)
            stored = await self.inner.get(record.task.id)
            assert stored is not None
            if stored.task.status.state is not TaskState.CANCELED:
                status = TaskStatus(state=TaskState.CANCELED, timestamp=utc_now())
                winner = msgspec.structs.replace(stored.task, status=status)
                stored = StoredTask(winner, stored.owner, record.version + 5)
                await self.inner.save(stored)
            raise WriteLostError(stored)
        self.saved.append(record.version)
        await self.inner.save(record)

    async def get(self, task_id: str) -> StoredTask | None:
        return await self.inner.get(task_id)

    async def list(self, query: TaskQuery) -> TaskPage:
        return await self.inner.list(query)

    async def delete(self, task_id: str) -> None:
        await self.inner.delete(task_id)


async def test_a_lost_write_stops_the_actor_with_the_record_that_won() -> None:

    async def agent(ctx: TaskContext) -> str:
        await ctx.update("working")  # stored
        await ctx.update("more")  # loses
        return "never stored"

    store = LosingStore(keep=1)
    recorder = Recorder()
    with anyio.fail_after(5):
        async with Supervisor(agent, store=store, observers=[recorder]) as sup:
            result = await InProcessClient(sup).send_message("x")
            task = as_task(result)
            assert task.status.state is TaskState.CANCELED  # what the store holds
            await anyio.wait_all_tasks_blocked()
            assert sup.statistics().live_tasks == 0
            assert (await sup.get_task(task.id)).status.state is TaskState.CANCELED
    assert store.refused == [
        store.saved[0] + 1
    ]  # nothing written after the lost write, not even FAILED
    observed = [e for tid, _, e, _ in recorder.events if tid == task.id]
    assert all(
        e.status_update is None or e.status_update.status.state is TaskState.WORKING
        for e in observed
    )  # the unstored change was never published


async def test_a_lost_write_ends_a_local_subscription_with_the_winner() -> None:
    async def agent(ctx: TaskContext) -> None:
        await ctx.update("working")
        await ctx.update("more")

    store = LosingStore(keep=1)
    with anyio.fail_after(5):
        async with (
            Supervisor(agent, store=store) as sup,
            InProcessClient(sup).stream("x") as events,
        ):
            seen = [event async for event in events]
    assert isinstance(seen[-1].task, Task)
    assert seen[-1].task.status.state is TaskState.CANCELED
