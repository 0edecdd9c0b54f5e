"""The events stream: a subscriber on another node gets the snapshot, then every later
event in order, no gap, no duplicate, across a restart of NATS."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import anyio
import pytest

from a2a_actors.cluster._event_log import EventLog, LoggedEvent, TaskFeed
from a2a_actors.cluster._offload import ObjectLimits, Offloader
from a2a_actors.cluster._task_store import NatsTaskStore
from a2a_actors.protocol import Task, TaskState, TaskStatus
from a2a_actors.protocol._models import Message, Part, Role, StreamResponse, TaskStatusUpdateEvent
from a2a_actors.stores import StoredTask

from .helpers import connect, nats_server, one_node, update

pytestmark = pytest.mark.anyio

S = TaskState
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def snapshot(task_id: str, version: int, state: TaskState = S.WORKING) -> StoredTask:
    status = TaskStatus(state=state, timestamp=T0 + dt.timedelta(seconds=version))
    return StoredTask(Task(id=task_id, context_id="c", status=status), None, version)


class Owner:
    """A task's owner as the runtime behaves: store the snapshot, then publish its event."""

    def __init__(self, store: NatsTaskStore, log: EventLog, task_id: str) -> None:
        self.store, self.log, self.task_id = store, log, task_id

    async def change(self, version: int, state: TaskState = S.WORKING) -> None:
        await self.store.save(snapshot(self.task_id, version, state))
        await self.log.publish(self.task_id, [(version, update(self.task_id, version, state))])


async def collect(feed: TaskFeed) -> list[int]:
    return [logged.version async for logged in feed]


async def test_a_late_subscriber_gets_the_snapshot_then_only_later_events(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as a,
            connect(server) as b,
            NatsTaskStore.open(a) as store_a,
            NatsTaskStore.open(b) as store_b,
        ):
            owner = Owner(store_a, await EventLog.open(a), "t1")
            for version in range(1, 4):
                await owner.change(version)
            log_b = await EventLog.open(b)
            async with log_b.follow("t1", store_b) as feed:
                assert feed.snapshot == snapshot("t1", 3)
                await owner.change(4)
                await owner.change(5, S.COMPLETED)
                got: list[LoggedEvent] = [logged async for logged in feed]
            assert [g.version for g in got] == [4, 5]
            assert got[-1].event == update("t1", 5, S.COMPLETED)
            async with log_b.follow("t1", store_b) as feed:  # final already: nothing follows
                assert feed.snapshot == snapshot("t1", 5, S.COMPLETED)
                assert await collect(feed) == []


async def test_subscribers_racing_a_busy_owner_see_no_gap_and_no_duplicate(
    tmp_path: Path,
) -> None:
    last = 150
    with anyio.fail_after(60):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as a,
            connect(server) as b,
            NatsTaskStore.open(a) as store_a,
            NatsTaskStore.open(b) as store_b,
        ):
            owner = Owner(store_a, await EventLog.open(a), "busy")
            log_b = await EventLog.open(b)
            await owner.change(1)
            seen: list[tuple[int, list[int]]] = []

            async def subscriber() -> None:
                async with log_b.follow("busy", store_b, buffer=4) as feed:
                    assert feed.snapshot is not None
                    seen.append((feed.snapshot.version, await collect(feed)))

            async with anyio.create_task_group() as tg:
                for version in range(2, last + 1):
                    if version % 15 == 0:
                        tg.start_soon(subscriber)
                    await owner.change(version, S.COMPLETED if version == last else S.WORKING)
            assert len(seen) == 10
            for start, versions in seen:
                assert versions == list(range(start + 1, last + 1))


async def test_a_retried_publish_is_stored_once(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with one_node(tmp_path) as node:
            await node.store.save(snapshot("t", 1))
            events = [(2, update("t", 2)), (3, update("t", 3)), (5, update("t", 5, S.FAILED))]
            await node.log.publish("t", events)
            await node.log.publish("t", events)  # the acknowledgement was lost: sent again
            info = await node.conn.js.stream_info(node.conn.names.events_stream)
            assert info.state.messages == 1  # the three events are one message, stored once
            assert await node.log.first_version("t") == 2
            assert await node.log.last_version("t") == 5
            async with node.log.follow("t", node.store) as feed:
                assert await collect(feed) == [2, 3, 5]  # each once, in order
            await node.log.forget("t")
            info = await node.conn.js.stream_info(node.conn.names.events_stream)
            assert info.state.messages == 0


async def test_a_feed_goes_on_across_a_nats_restart(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as a,
            connect(server) as b,
            NatsTaskStore.open(a) as store_a,
            NatsTaskStore.open(b) as store_b,
        ):
            owner = Owner(store_a, await EventLog.open(a), "t")
            await owner.change(1)
            log_b = await EventLog.open(b)
            async with log_b.follow("t", store_b) as feed:
                await owner.change(2)
                first = await feed.__anext__()
                assert first.version == 2
                await server.stop()
                await server.start()
                await a.wait_connected()
                await b.wait_connected()
                await owner.change(3)
                await owner.change(4, S.CANCELED)
                assert await collect(feed) == [3, 4]


async def test_publish_many_logs_each_task_as_one_message_and_says_what_failed(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(60):
        async with one_node(tmp_path, timeout=1.0) as node:
            tasks = [f"t{n}" for n in range(20)]
            for task_id in tasks:
                await node.store.save(snapshot(task_id, 1))
            batches = {
                task_id: [(2, update(task_id, 2)), (3, update(task_id, 3, S.COMPLETED))]
                for task_id in tasks
            }
            assert await node.log.publish_many(batches) == set()
            info = await node.conn.js.stream_info(node.conn.names.events_stream)
            assert info.state.messages == 20
            for task_id in tasks:
                async with node.log.follow(task_id, node.store) as feed:
                    assert await collect(feed) == [2, 3]
            # NATS away: nothing raises, every task is named for a retry, within the bound
            await node.server.stop()
            more = {task_id: [(4, update(task_id, 4))] for task_id in tasks[:3]}
            with anyio.fail_after(5):
                assert await node.log.publish_many(more) == set(more)
            await node.server.start()
            await node.conn.wait_connected()
            assert await node.log.publish_many(more) == set()
            assert await node.log.publish_many(more) == set()  # a retry after all: stored once
            info = await node.conn.js.stream_info(node.conn.names.events_stream)
            assert info.state.messages == 23


async def test_a_message_that_is_not_ours_is_skipped(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with one_node(tmp_path) as node:
            await node.store.save(snapshot("t", 1))
            async with node.log.follow("t", node.store) as feed:
                subject = node.conn.names.events_subject("t")
                for junk in (b"not json", b'{"version": 2}', b'[[2, {"nope": 1}]]'):
                    await node.conn.js.publish(subject, junk)
                await node.log.publish("t", [(2, update("t", 2, S.COMPLETED))])
                assert await collect(feed) == [2]


def big_update(task_id: str, version: int, size: int) -> StreamResponse:
    text = Message(message_id=f"m{version}", role=Role.AGENT, parts=(Part(text="x" * size),))
    status = TaskStatus(state=S.WORKING, timestamp=T0, message=text)
    return StreamResponse(
        status_update=TaskStatusUpdateEvent(task_id=task_id, context_id="c", status=status)
    )


async def test_events_larger_than_one_message_are_split_in_order_and_stored_once(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(60):
        async with one_node(tmp_path) as node:
            await node.store.save(snapshot("t", 1))
            events = [(v, big_update("t", v, 100_000)) for v in range(2, 27)]  # ~2.5 MB
            events.append((27, update("t", 27, S.COMPLETED)))
            assert await node.log.publish_many({"t": events}) == set()
            info = await node.conn.js.stream_info(node.conn.names.events_stream)
            assert info.state.messages == 3  # three messages of at most 1 MB
            assert await node.log.publish_many({"t": events}) == set()  # retried: stored once
            info = await node.conn.js.stream_info(node.conn.names.events_stream)
            assert info.state.messages == 3
            async with node.log.follow("t", node.store) as feed:
                assert await collect(feed) == list(range(2, 28))


async def test_an_event_larger_than_any_message_is_logged_with_its_part_in_the_object_store(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(60):
        async with one_node(tmp_path) as node:
            await node.store.save(snapshot("t", 1))
            big = big_update("t", 3, 2_000_000)
            events = [(2, update("t", 2)), (3, big), (4, update("t", 4, S.COMPLETED))]
            assert await node.log.publish_many({"t": events}) == set()
            objects = await node.store.objects.entries()
            assert [(o.name.split("/")[0], o.size) for o in objects] == [("t", 2_000_000)]
            async with node.log.follow("t", node.store) as feed:
                logged = [item async for item in feed]
            assert [item.version for item in logged] == [2, 3, 4]
            assert logged[1].event == big  # whole again, byte for byte
            assert logged[1].objects == ()


async def test_an_event_past_the_object_limit_is_left_out_and_the_rest_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    limits = ObjectLimits(max_object_bytes=1_000_000)
    with anyio.fail_after(60):
        async with one_node(tmp_path) as node:
            log = await EventLog.open(
                node.conn, objects=await Offloader.open(node.conn, limits=limits)
            )
            await node.store.save(snapshot("t", 1))
            events = [
                (2, update("t", 2)),
                (3, big_update("t", 3, 2_000_000)),
                (4, update("t", 4, S.COMPLETED)),
            ]
            assert await log.publish_many({"t": events}) == set()  # not retried forever
            assert "limit of 1000000 bytes per object (max_object_bytes)" in caplog.text
            assert await node.store.objects.entries() == []  # nothing half-stored
            async with log.follow("t", node.store) as feed:
                assert await collect(feed) == [2, 4]
