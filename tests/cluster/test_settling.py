"""Settling a lost node: running tasks FAILED once (subscribers elsewhere see it), waiting
ones released for resumption anywhere, other nodes' and final tasks untouched, the lost
owner fenced from writing afterwards."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import anyio
import pytest

from a2a_actors.cluster._entries import Entry, Holder
from a2a_actors.cluster._event_log import EventLog
from a2a_actors.cluster._settling import LOST_TEXT, settle_lost_node
from a2a_actors.cluster._task_store import NatsTaskStore
from a2a_actors.protocol import Task, TaskState, TaskStatus
from a2a_actors.protocol._models import Role, StreamResponse
from a2a_actors.stores import RecoveryReport, StoredTask

from .helpers import connect, nats_server

pytestmark = pytest.mark.anyio

S = TaskState
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
NOW = T0 + dt.timedelta(hours=1)
LOST, OTHER, SETTLER = Holder("n1", 5), Holder("n2", 6), Holder("n3", 7)


def record(task_id: str, state: TaskState, version: int = 3) -> StoredTask:
    status = TaskStatus(state=state, timestamp=T0)
    return StoredTask(Task(id=task_id, context_id="c", status=status), "alice", version)


async def test_a_lost_nodes_tasks_are_settled_once(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as a,
            connect(server) as b,
            connect(server) as c,
            NatsTaskStore.open(a, holder=LOST) as lost,
            NatsTaskStore.open(b, holder=OTHER) as other,
            NatsTaskStore.open(c, holder=SETTLER) as settler,
        ):
            for task_id, state in [
                ("work", S.WORKING),
                ("sub", S.SUBMITTED),
                ("ask", S.INPUT_REQUIRED),
                ("auth", S.AUTH_REQUIRED),
                ("done", S.COMPLETED),
            ]:
                await lost.save(record(task_id, state))
            await other.save(record("theirs", S.WORKING))
            log_b, log_c = await EventLog.open(b), await EventLog.open(c)
            async with log_b.follow("work", other) as feed:
                # two survivors settle n1 at the same time
                reports: list[RecoveryReport] = []

                async def settle(store: NatsTaskStore, log: EventLog) -> None:
                    reports.append(await settle_lost_node(store, "n1", now=NOW, log=log))

                async with anyio.create_task_group() as tg:
                    tg.start_soon(settle, settler, log_c)
                    tg.start_soon(settle, other, log_b)
                events = [logged async for logged in feed]
            failed = sorted(r.task.id for report in reports for r in report.failed)
            assert failed == ["sub", "work"]  # once each, by whichever settler won
            assert {i for report in reports for i in report.resumable} == {"ask", "auth"}
            assert [(e.version, e.event.status_update is not None) for e in events] == [(4, True)]
            for task_id in ("work", "sub"):
                entry = await settler.get_entry(task_id)
                assert entry is not None
                assert entry.holder is None
                task = entry.record.task
                assert (entry.record.version, task.status.state) == (4, S.FAILED)
                assert task.status.timestamp == NOW
                note = task.status.message
                assert note is not None
                assert note.role is Role.AGENT
                assert (
                    note.parts[0].text
                    == LOST_TEXT.format(node="n1")
                    == ("node n1 was lost; the task was interrupted")
                )
                assert task.history[-1] == note
            for task_id, state in [("ask", S.INPUT_REQUIRED), ("auth", S.AUTH_REQUIRED)]:
                assert await settler.get_entry(task_id) == Entry(record(task_id, state))
            assert await settler.get_entry("done") == Entry(record("done", S.COMPLETED), LOST)
            assert await settler.get_entry("theirs") == Entry(record("theirs", S.WORKING), OTHER)
            # the lost owner wakes up: everything it writes is refused
            for task_id in ("work", "ask"):
                late = record(task_id, S.WORKING, version=9)
                assert await lost.commit(late) != late
            # a node resuming the released task takes it over
            resumed = record("ask", S.WORKING, version=4)
            assert await settler.commit(resumed, take_over=True) is resumed
            assert await settle_lost_node(settler, "n1", now=NOW) == RecoveryReport((), ())


async def test_a_node_back_with_the_same_id_settles_only_its_old_epoch(tmp_path: Path) -> None:
    again = Holder("n1", 9)
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as a,
            connect(server) as b,
            NatsTaskStore.open(a, holder=LOST) as before,
            NatsTaskStore.open(b, holder=again) as after,
        ):
            await before.save(record("old", S.WORKING))
            await after.save(record("new", S.WORKING))
            report = await settle_lost_node(after, "n1", now=NOW, keep_epoch=again.epoch)
            assert [r.task.id for r in report.failed] == ["old"]
            assert await after.get_entry("new") == Entry(record("new", S.WORKING), again)


async def test_an_owner_lost_between_store_and_log_leaves_no_gap(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as a,
            connect(server) as b,
            NatsTaskStore.open(a, holder=LOST) as lost,
            NatsTaskStore.open(b, holder=SETTLER) as settler,
        ):
            log_a, log_b = await EventLog.open(a), await EventLog.open(b)
            first = record("t", S.WORKING, version=1)
            await lost.save(first)
            await log_a.publish("t", [(1, StreamResponse(task=first.task))])
            async with log_b.follow("t", settler) as feed:
                assert feed.snapshot == first
                second = record("t", S.INPUT_REQUIRED, version=2)
                third = record("t", S.WORKING, version=3)
                await lost.save(second)
                await lost.save(third)  # ... and dies before logging versions 2 and 3
                report = await settle_lost_node(settler, "n1", now=NOW, log=log_b)
                got = [(e.version, e.event) async for e in feed]
            assert [r.version for r in report.failed] == [4]
            assert [version for version, _ in got] == [3, 4]
            assert got[0][1] == StreamResponse(task=third.task)
            final = got[1][1].status_update
            assert final is not None
            assert final.status.state is S.FAILED
            assert await log_b.last_version("t") == 4
            assert not await log_b.catch_up(report.failed[0])
