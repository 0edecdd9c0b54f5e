"""The task store's mirror follows the bucket only around reads and keeps followed writes
undecoded until a read needs them: every read still sees the latest record and holder
(deletions included, even those whose markers were compacted while the node did not
follow), a commit still starts from the newest revision followed, and a value that is
not a task is still reported and ignored."""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path

import anyio
import pytest

from a2a_actors.cluster import _task_store as task_store
from a2a_actors.cluster._entries import Entry, Holder
from a2a_actors.cluster._kv import stream_sequence
from a2a_actors.cluster._task_store import NatsTaskStore
from a2a_actors.protocol import Task, TaskState, TaskStatus
from a2a_actors.stores import StoredTask, TaskQuery

from .helpers import connect, nats_server
from .signals import Consumers

pytestmark = pytest.mark.anyio

S = TaskState
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def record(task_id: str, state: TaskState, version: int, *, seconds: float = 0) -> StoredTask:
    status = TaskStatus(state=state, timestamp=T0 + dt.timedelta(seconds=seconds))
    task = Task(id=task_id, context_id="c", status=status, metadata={"v": version})
    return StoredTask(task=task, owner="alice", version=version)


async def test_every_read_sees_the_latest_followed_record_and_holder(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as a,
            connect(server) as b,
            NatsTaskStore.open(a, holder=Holder("a", 1)) as writer,
            NatsTaskStore.open(b, holder=Holder("b", 2)) as reader,
        ):
            for version, state in enumerate((S.SUBMITTED, S.WORKING, S.WORKING), start=1):
                await writer.save(record("t1", state, version, seconds=version))
            await writer.save(record("t2", S.COMPLETED, 1, seconds=9))
            await writer.commit(record("t3", S.INPUT_REQUIRED, 1), holder=None)
            page = await reader.list(TaskQuery())
            assert [(r.task.id, r.version) for r in page.records] == [
                ("t2", 1),
                ("t1", 3),
                ("t3", 1),
            ]
            assert page.records[1] == record("t1", S.WORKING, 3, seconds=3)
            assert reader.statistics().mirrored == 3
            assert sorted(r.task.id for r in reader.mirrored()) == ["t1", "t2", "t3"]
            live = await reader.held_by("a")
            assert [(e.record.task.id, e.holder) for e in live] == [("t1", Holder("a", 1))]
            assert await reader.holders() == {Holder("a", 1)}
            seen = reader.seen_entry("t1")
            assert seen is not None
            assert (seen.record.version, seen.holder) == (3, Holder("a", 1))
            assert reader.seen_entry("t3") == Entry(record("t3", S.INPUT_REQUIRED, 1), None)
            await writer.delete("t1")
            page = await reader.list(TaskQuery())
            assert [r.task.id for r in page.records] == ["t2", "t3"]
            assert reader.seen_entry("t1") is None
            assert await reader.holders() == set()


async def test_a_commit_starts_from_the_newest_followed_revision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # b read version 1; a wrote version 2, which b followed but never decoded (no read
    # since). b's commit starts from version 2: written without a write conflict.
    monkeypatch.setattr(task_store, "FOLLOW_LINGER_S", 60.0)  # b follows throughout
    consumers = Consumers(monkeypatch)
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as a,
            connect(server) as b,
            NatsTaskStore.open(a, holder=Holder("a", 1)) as store_a,
            NatsTaskStore.open(b, holder=Holder("b", 2)) as store_b,
        ):
            await store_a.save(record("t", S.WORKING, 1))
            assert await store_b.get("t") == record("t", S.WORKING, 1)
            await store_a.save(record("t", S.WORKING, 2))
            info = await a.js.stream_info(f"KV_{a.names.tasks_bucket}")
            await consumers.followed(store_b, info.state.last_seq)
            seen = store_b.seen_entry("t")
            assert seen is not None
            assert seen.record.version == 2  # decoded when asked
            stored = await store_b.commit(record("t", S.COMPLETED, 3), take_over=True)
            assert stored == record("t", S.COMPLETED, 3)
            assert store_b.statistics().conflicts == 0
            assert await store_a.get("t") == record("t", S.COMPLETED, 3)


async def test_a_value_that_is_not_a_task_is_reported_and_ignored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as a,
            connect(server) as b,
            NatsTaskStore.open(a, holder=Holder("a", 1)) as writer,
            NatsTaskStore.open(b) as reader,
        ):
            await writer.save(record("good", S.COMPLETED, 1))
            await writer.save(record("spoiled", S.WORKING, 1))
            assert len((await reader.list(TaskQuery())).records) == 2  # both decoded
            kv = await a.js.key_value(a.names.tasks_bucket)
            await kv.put("spoiled", b"{not json")  # a task's key, not a task's value
            await kv.put("junk", b"[1, 2]")
            with caplog.at_level(logging.ERROR, logger="a2a_actors.cluster"):
                page = await reader.list(TaskQuery())
            assert [r.task.id for r in page.records] == ["good"]
            reported = sorted(r.getMessage() for r in caplog.records)
            assert reported == [
                "tasks bucket: key junk is not a task; ignored",
                "tasks bucket: key spoiled is not a task; ignored",
            ]
            async with connect(server) as c, NatsTaskStore.open(c) as late:
                assert await late.list(TaskQuery()) == page  # the same on a node joining now
            assert await writer.list(TaskQuery()) == page


def test_the_stream_sequence_comes_from_either_reply_subject_form() -> None:
    assert stream_sequence("$JS.ACK.KV_B.ZZDMV0k6.1.42.7.1796143466642147825.0") == 42
    v2 = "$JS.ACK.hub.ACCHASH.KV_B.ZZDMV0k6.1.42.7.1796143466642147825.0.rnd"
    assert stream_sequence(v2) == 42
    with pytest.raises(ValueError, match="not a JetStream reply subject"):
        stream_sequence("_INBOX.abc")


async def test_a_node_follows_only_around_reads_and_misses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(task_store, "FOLLOW_LINGER_S", 0.2)
    consumers = Consumers(monkeypatch)
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as a,
            connect(server) as b,
            NatsTaskStore.open(a, holder=Holder("a", 1)) as writer,
            NatsTaskStore.open(b) as reader,
        ):
            await consumers.stopped_following(reader)
            applied = reader.statistics().applied
            for i in range(10):
                await writer.save(record(f"t{i}", S.WORKING, 1, seconds=i))
                await writer.save(record(f"t{i}", S.COMPLETED, 2, seconds=i))
            await writer.delete("t3")
            assert reader.statistics().applied == applied  # handled none of these writes
            page = await reader.list(TaskQuery())
            expected = [(f"t{i}", 2) for i in (9, 8, 7, 6, 5, 4, 2, 1, 0)]
            assert [(r.task.id, r.version) for r in page.records] == expected
            assert reader.statistics().following
            assert page == await writer.list(TaskQuery())


async def test_deletions_compacted_while_a_node_did_not_follow_are_not_missed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # b saw t1..t3, then stopped following; a deleted t1 and compacted its marker away,
    # so nothing in the bucket says t1 was deleted: b's next read rebuilds its view.
    monkeypatch.setattr(task_store, "FOLLOW_LINGER_S", 0.2)
    consumers = Consumers(monkeypatch)
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as a,
            connect(server) as b,
            NatsTaskStore.open(a, holder=Holder("a", 1)) as writer,
            NatsTaskStore.open(b) as reader,
        ):
            for i in (1, 2, 3):
                await writer.save(record(f"t{i}", S.COMPLETED, 1, seconds=i))
            assert len((await reader.list(TaskQuery())).records) == 3
            await consumers.stopped_following(reader)
            await writer.delete("t1")
            assert await writer.compact(older_than=0) == 1
            await writer.save(record("t4", S.COMPLETED, 1, seconds=4))
            page = await reader.list(TaskQuery())
            assert [r.task.id for r in page.records] == ["t4", "t3", "t2"]
            assert reader.statistics().mirrored == 3
            await writer.delete("t2")  # and it follows on from there
            assert [r.task.id for r in (await reader.list(TaskQuery())).records] == ["t4", "t3"]


async def test_concurrent_listings_see_every_write_while_the_mirror_stops_and_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A linger of 30 ms: the consumer stops and starts again between rounds (every
    # eighth round waits until it has stopped), and some listings arrive while it stops.
    # Each listing still shows every write acknowledged before it began.
    monkeypatch.setattr(task_store, "FOLLOW_LINGER_S", 0.03)
    consumers = Consumers(monkeypatch)
    with anyio.fail_after(60):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as a,
            connect(server) as b,
            NatsTaskStore.open(a, holder=Holder("a", 1)) as writer,
            NatsTaskStore.open(b) as reader,
        ):

            async def lists(expected: int) -> None:
                page = await reader.list(TaskQuery(page_size=1))
                assert page.total_size >= expected

            for i in range(40):
                await writer.save(record(f"t{i:02d}", S.COMPLETED, 1, seconds=i))
                async with anyio.create_task_group() as tg:
                    for _ in range(4):
                        tg.start_soon(lists, i + 1)
                if i % 8 == 7:
                    await consumers.stopped_following(reader)
            page = await reader.list(TaskQuery(page_size=100))
            assert [r.task.id for r in page.records] == [f"t{i:02d}" for i in range(39, -1, -1)]
