"""Values of any size in the cluster's stores: large parts go to the JetStream Object Store,
every reader gets them back byte for byte, small tasks never touch it, limits are refused at
once with the limit named, and objects go with their tasks."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import anyio
import msgspec
import pytest
from nats.js.api import ObjectStoreConfig, StorageType

from a2a_actors.cluster import _retention as retention
from a2a_actors.cluster._offload import ObjectLimits, Offloader
from a2a_actors.cluster._task_store import NatsTaskStore
from a2a_actors.protocol import Task, TaskState, TaskStatus
from a2a_actors.protocol._errors import PayloadTooLargeError
from a2a_actors.protocol._models import Artifact, Message, Part, Role
from a2a_actors.stores import StoredTask, TaskQuery

from .helpers import connect, nats_server, one_node, update
from .payload_agents import data, text

pytestmark = pytest.mark.anyio

S = TaskState
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def record(
    task_id: str,
    *,
    version: int = 1,
    artifacts: tuple[Artifact, ...] = (),
    history: tuple[Message, ...] = (),
    private: dict[str, object] | None = None,
    state: TaskState = S.WORKING,
    seconds: int = 0,
) -> StoredTask:
    status = TaskStatus(state=state, timestamp=T0 + dt.timedelta(seconds=seconds))
    task = Task(id=task_id, context_id="c", status=status, artifacts=artifacts, history=history)
    return StoredTask(task, "alice", version, private)


def large(task_id: str, **kwargs: object) -> StoredTask:
    """A task with a 3 MB text part, a 2 MB raw part, a 300 KB data part, a 1.5 MB user
    message and 1.2 MB of private data, and small parts beside them."""
    artifact = Artifact(
        artifact_id="a1",
        name="big",
        parts=(
            Part(text=text(3_000_000), metadata={"k": "v"}, filename="big.txt"),
            Part(text="small"),
            Part(raw=data(2_000_000), media_type="application/octet-stream"),
            Part(data={"rows": [text(1000, i) for i in range(300)]}),
        ),
    )
    message = Message(message_id="m1", role=Role.USER, parts=(Part(text=text(1_500_000, 7)),))
    private = {"conversation": [text(400_000, i) for i in range(3)]}
    return record(task_id, artifacts=(artifact,), history=(message,), private=private, **kwargs)  # type: ignore[arg-type]


async def test_small_tasks_and_events_never_create_an_object(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with one_node(tmp_path) as node:
            for i in range(20):
                small = record(
                    f"t{i}", artifacts=(Artifact(artifact_id="a", parts=(Part(text="x" * 900),)),)
                )
                await node.store.save(small)
                await node.log.publish(f"t{i}", [(2, update(f"t{i}", 2))])
            assert await node.store.objects.entries() == []
            stats = node.store.objects.statistics()
            assert (stats.stored, stats.reused, stats.fetched) == (0, 0, 0)


async def test_a_large_task_is_read_whole_by_another_node(tmp_path: Path) -> None:
    original = large("t")
    with anyio.fail_after(60):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as conn_a,
            connect(server) as conn_b,
            NatsTaskStore.open(conn_a) as a,
            NatsTaskStore.open(conn_b) as b,
        ):
            await a.save(original)
            stored = await conn_b.js.key_value(conn_b.names.tasks_bucket)
            raw = await stored.get("t")
            assert raw.value is not None
            assert len(raw.value) < 20_000  # placeholders and references only
            assert await b.get("t") == original
            assert (await b.list(TaskQuery())).records == (original,)
            objects = await b.objects.entries()
            part_data = original.task.artifacts[0].parts[3].data
            sizes = [
                len(text(3_000_000).encode()),
                2_000_000,
                len(text(1_500_000, 7).encode()),
                len(msgspec.json.encode(original.private)),
                len(msgspec.json.encode(part_data)),
            ]
            assert sorted(o.size for o in objects) == sorted(sizes)
            # The writer's next snapshots (same parts, a new state) upload nothing again.
            done = msgspec.structs.replace(
                original.task, status=TaskStatus(state=S.COMPLETED, timestamp=T0)
            )
            await a.save(StoredTask(done, "alice", 2, original.private))
            assert a.objects.statistics().stored == 5
            assert (await b.get("t")) == StoredTask(done, "alice", 2, original.private)


async def test_a_part_over_the_object_limit_is_refused_at_once_and_nothing_stored(
    tmp_path: Path,
) -> None:
    limits = ObjectLimits(max_object_bytes=1_000_000)
    with anyio.fail_after(30):
        async with nats_server(tmp_path) as server, connect(server) as conn:
            offloader = await Offloader.open(conn, limits=limits)
            async with NatsTaskStore.open(conn, objects=offloader) as store:
                started = time.monotonic()
                with pytest.raises(PayloadTooLargeError) as refused:
                    await store.save(large("t"))
                assert time.monotonic() - started < 1.0
                assert refused.value.code == -32052
                assert "limit of 1000000 bytes per object (max_object_bytes)" in str(refused.value)
                assert await store.get("t") is None
                assert await offloader.entries() == []  # sizes checked before uploads
                assert conn.statistics().unavailable == 0


async def test_a_full_object_store_refuses_with_its_limit_and_keeps_no_chunk(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(30):
        async with nats_server(tmp_path) as server, connect(server) as conn:
            config = ObjectStoreConfig(storage=StorageType.FILE, max_bytes=1_000_000)
            await conn.js.create_object_store(conn.names.objects_bucket, config=config)
            async with NatsTaskStore.open(conn) as store:
                started = time.monotonic()
                with pytest.raises(PayloadTooLargeError) as refused:
                    await store.save(
                        record(
                            "t",
                            artifacts=(
                                Artifact(artifact_id="a", parts=(Part(text=text(3_000_000)),)),
                            ),
                        )
                    )
                assert time.monotonic() - started < 1.0
                assert "its max_bytes of 1000000 bytes" in str(refused.value)
                assert await store.get("t") is None
                info = await conn.js.stream_info(store.objects.bucket.stream)
                assert info.state.messages == 0  # the chunks sent before the refusal are gone


async def test_a_message_over_max_payload_is_a_size_error_naming_the_limit(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with nats_server(tmp_path) as server, connect(server) as conn:
            started = time.monotonic()
            with pytest.raises(PayloadTooLargeError) as refused, conn.bounded("publish"):
                await conn.client.publish("a2a.test.x", b"x" * 2_000_000)
            assert time.monotonic() - started < 1.0
            assert f"max_payload of {conn.max_payload} bytes" in str(refused.value)
            assert conn.statistics().unavailable == 0  # not counted as NATS unavailable


async def test_list_pages_are_bounded_in_object_bytes(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with one_node(tmp_path) as node:
            tasks = []
            for i in range(3):
                part = Part(text=text(3_000_000, i))
                tasks.append(
                    record(
                        f"t{i}", artifacts=(Artifact(artifact_id="a", parts=(part,)),), seconds=i
                    )
                )
                await node.store.save(tasks[-1])
            seen: list[StoredTask] = []
            token = ""
            while True:
                page = await node.store.list(TaskQuery(page_size=10, page_token=token))
                assert len(page.records) == 1  # 3 MB each, 4 MiB a page at most
                assert page.total_size == 3
                seen.extend(page.records)
                token = page.next_page_token
                if not token:
                    break
            assert seen == tasks[::-1]


async def test_objects_go_with_their_task(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with one_node(tmp_path) as node:
            store, objects = node.store, node.store.objects
            await store.save(large("gone", state=S.COMPLETED))
            await store.save(large("kept", state=S.WORKING))
            await node.log.publish("gone", [(2, update("gone", 2, S.COMPLETED))])
            before = {o.name.split("/")[0] for o in await objects.entries()}
            assert before == {"gone", "kept"}
            # An object stored for a task whose write never happened (an orphan).
            orphan = (await objects.strip("never", large("never"), 10_000_000))[1]
            assert orphan
            evicted = await retention.evict(
                store, now=T0, max_terminal=0, log=node.log, object_grace=0
            )
            assert evicted == ("gone",)
            left = {o.name.split("/")[0] for o in await objects.entries()}
            assert left == {"kept"}
            assert await store.get("kept") == large("kept", state=S.WORKING)
            await store.delete("kept")
            assert await objects.entries() == []
            info = await node.conn.js.stream_info(objects.bucket.stream)
            assert info.state.messages == 0  # no chunk, no meta message, no marker left
