"""Cluster retention: the SQLite store's rules on the whole cluster; events and delete
markers go too, and listings still work after the markers are compacted."""

from __future__ import annotations

import datetime as dt
import functools
from pathlib import Path
from typing import Any

import anyio
import pytest

from a2a_actors.client import A2AClient
from a2a_actors.cluster import _retention as retention
from a2a_actors.cluster._event_log import EventLog
from a2a_actors.cluster._push_configs import NatsPushConfigStore
from a2a_actors.cluster._retention import evict, select_evictions
from a2a_actors.cluster._task_store import NatsTaskStore
from a2a_actors.protocol import Task, TaskState, TaskStatus
from a2a_actors.protocol._errors import TaskNotFoundError
from a2a_actors.protocol._models import StreamResponse, TaskStatusUpdateEvent
from a2a_actors.protocol._requests import TaskPushNotificationConfig
from a2a_actors.server import ClusterOptions, ServerConfig, serve
from a2a_actors.stores import StoredTask, TaskQuery
from a2a_actors.stores._sqlite import SQLiteTaskStore

from .agents import agent as served
from .helpers import connect, nats_server

pytestmark = pytest.mark.anyio

S = TaskState
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
LIVE = (S.SUBMITTED, S.WORKING, S.INPUT_REQUIRED, S.AUTH_REQUIRED)
FINAL = (S.COMPLETED, S.FAILED, S.CANCELED, S.REJECTED)


def record(task_id: str, seconds: int, state: TaskState) -> StoredTask:
    status = TaskStatus(state=state, timestamp=T0 + dt.timedelta(seconds=seconds))
    return StoredTask(Task(id=task_id, context_id="c", status=status), None, 1)


def mixed() -> list[StoredTask]:
    states = LIVE + FINAL
    return [record(f"t{i:02d}", i % 7, states[i % len(states)]) for i in range(40)]


@pytest.mark.parametrize(
    ("ttl", "max_terminal"), [(None, None), (3.0, None), (None, 5), (2.0, 4), (0.0, 0), (1e12, 2)]
)
async def test_the_rules_are_the_sqlite_stores(
    ttl: float | None, max_terminal: int | None, tmp_path: Path
) -> None:
    now = T0 + dt.timedelta(seconds=6)
    with anyio.fail_after(20):
        async with SQLiteTaskStore.open(tmp_path / "t.db") as sqlite:
            for r in mixed():
                await sqlite.save(r)
            expected = await sqlite.evict(now=now, ttl=ttl, max_terminal=max_terminal)
    assert tuple(select_evictions(mixed(), now=now, ttl=ttl, max_terminal=max_terminal)) == (
        expected
    )
    with pytest.raises(ValueError, match="negative"):
        select_evictions(mixed(), now=now, ttl=-1)


async def test_a_pass_deletes_final_tasks_their_events_and_then_their_markers(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as a,
            connect(server) as b,
            NatsTaskStore.open(a) as store,
            NatsTaskStore.open(b) as other,
            NatsPushConfigStore.open(b) as push,
        ):
            log = await EventLog.open(a)
            for r in mixed():
                url = f"https://hooks.example.com/{r.task.id}"
                await push.put(
                    TaskPushNotificationConfig(url=url, id="p", task_id=r.task.id), limit=1
                )
                await store.save(r)
                update = TaskStatusUpdateEvent(
                    task_id=r.task.id, context_id="c", status=r.task.status
                )
                await log.publish(r.task.id, [(1, StreamResponse(status_update=update))])
            gone = await evict(other, now=T0 + dt.timedelta(days=1), ttl=60, log=log, push=push)
            assert len(gone) == 20
            for r in mixed():
                assert (len(await push.list(r.task.id)) == 1) is (r.task.id not in gone)
            page = await store.list(TaskQuery(page_size=100))
            assert {r.task.status.state for r in page.records} == set(LIVE)
            assert page.total_size == 20
            events = await a.js.stream_info(a.names.events_stream)
            assert events.state.messages == 20
            assert store.statistics().deleted == 20
            assert await other.compact(older_than=0) == 20
            assert other.statistics().deleted == 0
            bucket = await a.js.stream_info(f"KV_{a.names.tasks_bucket}")
            assert bucket.state.messages == 21  # the live tasks and the bookkeeping key
            page = await other.list(TaskQuery(page_size=100))  # the read barrier still works
            assert page.total_size == 20
            again = record("t07", 1, S.WORKING)  # an evicted id written again is a new task
            await store.save(again)
            assert await other.get("t07") == again
            assert (await other.list(TaskQuery(page_size=100))).total_size == 21


TTL_S = 5.0  # long enough for node a to stop first, even on a loaded machine


async def test_a_served_cluster_evicts_finished_tasks_on_a_schedule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Retention covers the cluster: a task finished on a node that then stopped is
    evicted by the node left (a Supervisor's own retention would keep it forever)."""
    # Each node's scheduled pass tells what it deleted, once deleted.
    evicted: list[str] = []
    changed = anyio.Event()
    evict = retention.evict

    async def evict_and_tell(store: NatsTaskStore, **options: Any) -> tuple[str, ...]:
        nonlocal changed
        gone = await evict(store, **options)
        evicted.extend(gone)
        changed.set()
        changed = anyio.Event()
        return gone

    monkeypatch.setattr(retention, "evict", evict_and_tell)
    with anyio.fail_after(30):
        async with nats_server(tmp_path) as server, anyio.create_task_group() as tg:

            def config(node_id: str) -> ServerConfig:
                options = ClusterOptions(urls=(server.url,), node_id=node_id, lease_s=3.0)
                return ServerConfig(cluster=options, supervisor_options={"retention_ttl": TTL_S})

            url_b = await tg.start(functools.partial(serve, served, config=config("b")))
            async with anyio.create_task_group() as node_a:
                url_a = await node_a.start(functools.partial(serve, served, config=config("a")))
                async with await A2AClient.connect(url_a, card_cache=None) as a:
                    done = await a.send_message("count")
                    asked = await a.send_message("hi")  # waiting: never evicted
                node_a.cancel_scope.cancel()  # a stops before the TTL is over
            assert isinstance(done, Task)
            assert isinstance(asked, Task)
            assert done.status.state is TaskState.COMPLETED
            async with await A2AClient.connect(url_b, card_cache=None) as b:
                assert (await b.get_task(done.id)) == done  # a stopped well within the TTL
                while done.id not in evicted:  # b's first pass after the TTL deletes it
                    await changed.wait()
                with pytest.raises(TaskNotFoundError):
                    await b.get_task(done.id)
                assert [t.id for t in (await b.list_tasks()).tasks] == [asked.id]
            tg.cancel_scope.cancel()
