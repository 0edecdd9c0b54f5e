"""A node's wiring on its own: the store an actor writes through (a lost write raises
WriteLostError; a released task is taken over), and the event-log publisher (in order,
across a NATS restart)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import anyio
import pytest

from a2a_actors.cluster._entries import Holder
from a2a_actors.cluster._member import HeldTaskStore
from a2a_actors.cluster._publisher import EventLogPublisher
from a2a_actors.cluster._settling import settle_lost_node
from a2a_actors.cluster._task_store import NatsTaskStore
from a2a_actors.protocol import Task, TaskState, TaskStatus
from a2a_actors.protocol._models import StreamResponse
from a2a_actors.runtime._environment import WriteLostError
from a2a_actors.stores import StoredTask

from .helpers import connect, nats_server, one_node, update

pytestmark = pytest.mark.anyio

S = TaskState
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
NOW = T0 + dt.timedelta(hours=1)


def record(task_id: str, state: TaskState, version: int) -> StoredTask:
    status = TaskStatus(state=state, timestamp=T0)
    return StoredTask(Task(id=task_id, context_id="c", status=status), "alice", version)


async def test_a_write_that_loses_to_another_node_raises_with_the_winner(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as a,
            connect(server) as b,
            NatsTaskStore.open(a, holder=Holder("a", 1)) as store_a,
            NatsTaskStore.open(b, holder=Holder("b", 2)) as store_b,
        ):
            held = HeldTaskStore(store_a)
            await held.save(record("t", S.WORKING, 1))
            await held.save(record("t", S.WORKING, 2))  # its own task: written
            await settle_lost_node(store_b, "a", now=NOW, epoch=1)  # b settles a's task
            with pytest.raises(WriteLostError) as lost:
                await held.save(record("t", S.COMPLETED, 3))
            assert lost.value.stored.task.status.state is S.FAILED
            stored = await store_b.get("t")
            assert stored == lost.value.stored  # nothing of a's late write


async def test_a_released_task_is_taken_over_by_its_next_writer(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as a,
            connect(server) as b,
            NatsTaskStore.open(a, holder=Holder("a", 1)) as store_a,
            NatsTaskStore.open(b, holder=Holder("b", 2)) as store_b,
        ):
            await HeldTaskStore(store_a).save(record("t", S.INPUT_REQUIRED, 4))
            await settle_lost_node(store_b, "a", now=NOW, epoch=1)  # released, still waiting
            released = await store_b.get_entry("t")
            assert released is not None
            assert released.holder is None
            await HeldTaskStore(store_b).save(record("t", S.WORKING, 5))  # resumed on b
            taken = await store_a.get_entry("t")
            assert taken is not None
            assert taken.holder == Holder("b", 2)
            with pytest.raises(WriteLostError):  # a cannot write it back
                await HeldTaskStore(store_a).save(record("t", S.COMPLETED, 6))


async def test_the_publisher_logs_every_event_in_order_across_a_nats_restart(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(60):
        async with one_node(tmp_path, holder=Holder("a", 1)) as node:
            server, store, log = node.server, node.store, node.log
            publisher = EventLogPublisher(log, retry_s=0.05)
            async with anyio.create_task_group() as tg:
                await tg.start(publisher.run)
                for n in range(1, 4):
                    publisher.task_event("t", None, update("t", n), terminal=False, version=n)
                await publisher.wait_idle()
                await server.stop()
                for n in range(4, 7):  # queued while NATS is away
                    publisher.task_event("t", None, update("t", n), terminal=False, version=n)
                await server.start()
                await publisher.wait_idle()
                assert publisher.pending == 0
                tg.cancel_scope.cancel()
            await store.save(record("t", S.SUBMITTED, 0))
            async with log.follow("t", store) as feed:
                seen: list[int] = []
                async for logged in feed:
                    seen.append(logged.version)
                    if logged.version == 6:
                        break
            assert seen == [1, 2, 3, 4, 5, 6]


async def test_the_publisher_sends_a_round_as_one_message_per_task_in_order(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(60):
        async with one_node(tmp_path, holder=Holder("a", 1)) as node:
            conn, store, log = node.conn, node.store, node.log
            publisher = EventLogPublisher(log, max_round=30)
            tasks = [f"t{n}" for n in range(40)]
            for n in range(1, 4):  # interleaved, as concurrent tasks queue them
                for task_id in tasks:
                    event = update(task_id, n)
                    publisher.task_event(task_id, None, event, terminal=False, version=n)
            snapshot = StreamResponse(task=record("t0", S.SUBMITTED, 0).task)
            publisher.task_event("t0", None, snapshot, terminal=False, version=0)
            assert publisher.pending == 120  # a task's creation is its stored snapshot
            async with anyio.create_task_group() as tg:
                await tg.start(publisher.run)
                await publisher.wait_idle()
                assert publisher.pending == 0
                tg.cancel_scope.cancel()
            info = await conn.js.stream_info(conn.names.events_stream)
            assert info.state.messages == 40  # two rounds (30 tasks, then 10), one message each
            for task_id in tasks:
                await store.save(record(task_id, S.SUBMITTED, 0))
                async with log.follow(task_id, store) as feed:
                    seen = []
                    async for logged in feed:
                        seen.append(logged.version)
                        if logged.version == 3:
                            break
                assert seen == [1, 2, 3]
