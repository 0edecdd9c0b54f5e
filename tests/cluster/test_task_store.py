"""The task store on JetStream KV: the memory store's answers, optimistic concurrency,
final states that never change, a read barrier across nodes, bounded failures."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import msgspec
import pytest

from a2a_actors.cluster import ClusterUnavailableError, _task_store as task_store
from a2a_actors.cluster._entries import Entry, Holder, replaces
from a2a_actors.cluster._task_store import NatsTaskStore
from a2a_actors.protocol import InvalidParamsError, Task, TaskState, TaskStatus
from a2a_actors.stores import MemoryTaskStore, StoredTask, TaskQuery, TaskStore
from a2a_actors.stores._base import encode_page_token

from .helpers import connect, nats_server
from .signals import Consumers

pytestmark = pytest.mark.anyio

S = TaskState
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def record(
    task_id: str,
    *,
    seconds: float = 0,
    state: TaskState = S.COMPLETED,
    context_id: str = "ctx",
    owner: str | None = None,
    version: int = 1,
) -> StoredTask:
    status = TaskStatus(state=state, timestamp=T0 + dt.timedelta(seconds=seconds))
    task = Task(id=task_id, context_id=context_id, status=status, metadata={"v": version})
    return StoredTask(task=task, owner=owner, version=version)


Scenario = Callable[[TaskStore], Awaitable[list[object]]]


async def pages(store: TaskStore, query: TaskQuery) -> list[object]:
    """Every page of ``query``: ids, total size, and whether a token followed."""
    seen: list[object] = []
    token = ""
    while True:
        page = await store.list(msgspec.structs.replace(query, page_token=token))
        seen.append(
            ([r.task.id for r in page.records], page.total_size, bool(page.next_page_token))
        )
        token = page.next_page_token
        if not token:
            return seen


async def save_get_delete(store: TaskStore) -> list[object]:
    out: list[object] = [await store.get("a")]
    await store.save(record("a", owner="alice"))
    out.append(await store.get("a"))
    await store.delete("a")
    await store.delete("a")
    out.append(await store.get("a"))
    await store.save(record("a", owner="bob", version=1))  # created again after a delete
    out.append(await store.get("a"))
    return out


async def highest_version(store: TaskStore) -> list[object]:
    out: list[object] = []
    for version, state in [(3, S.WORKING), (2, S.SUBMITTED), (3, S.INPUT_REQUIRED), (4, S.WORKING)]:
        await store.save(record("a", version=version, state=state))
        out.append(await store.get("a"))
    return out


async def filters(store: TaskStore) -> list[object]:
    await store.save(record("a", seconds=1, context_id="c1", owner="alice"))
    await store.save(record("b", seconds=2, context_id="c2", state=S.WORKING))
    await store.save(record("c", seconds=3, context_id="c1", owner="bob"))
    queries = [
        TaskQuery(),
        TaskQuery(context_id="c1"),
        TaskQuery(state=S.WORKING),
        TaskQuery(owner="alice"),
        TaskQuery(owner=None),
        TaskQuery(status_timestamp_after=T0 + dt.timedelta(seconds=2)),
        TaskQuery(context_id="none"),
        TaskQuery(context_id="c1", owner="bob", state=S.COMPLETED),
    ]
    return [await pages(store, q) for q in queries]


async def paging(store: TaskStore) -> list[object]:
    for i in range(7):
        await store.save(record(f"t{i}", seconds=i))
    for name in ("b", "a", "c"):
        await store.save(record(name))  # equal timestamps: by id
    bare = Task(id="bare", status=TaskStatus(state=S.WORKING))  # no timestamp: the epoch
    await store.save(StoredTask(bare, None, 1))
    return [await pages(store, TaskQuery(page_size=size)) for size in (1, 3, 50)]


async def random_ops(store: TaskStore) -> list[object]:
    rng = random.Random(7)
    out: list[object] = []
    for _ in range(120):
        task_id = f"t{rng.randrange(15):02d}"
        if rng.random() < 0.15:
            await store.delete(task_id)
            continue
        state = rng.choice([S.SUBMITTED, S.WORKING, S.INPUT_REQUIRED])
        await store.save(
            record(
                task_id,
                seconds=rng.randrange(6),
                state=state,
                context_id=rng.choice(["c1", "c2"]),
                owner=rng.choice([None, "alice", "bob"]),
                version=rng.randrange(1, 5),
            )
        )
    for query in [
        TaskQuery(page_size=4),
        TaskQuery(owner="alice", page_size=2),
        TaskQuery(owner=None, context_id="c2"),
        TaskQuery(state=S.WORKING, page_size=3),
    ]:
        out.append(await pages(store, query))
    return out


@pytest.mark.parametrize(
    "scenario", [save_get_delete, highest_version, filters, paging, random_ops]
)
async def test_answers_like_the_memory_store(scenario: Scenario, tmp_path: Path) -> None:
    expected = await scenario(MemoryTaskStore())
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as conn,
            NatsTaskStore.open(conn) as store,
        ):
            assert await scenario(store) == expected


async def test_a_bad_page_token_is_invalid_params(tmp_path: Path) -> None:
    with anyio.fail_after(20):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as conn,
            NatsTaskStore.open(conn) as store,
        ):
            for token in ("not-a-token", "e30", encode_page_token((T0, "x"))[:-3] + "!!"):
                with pytest.raises(InvalidParamsError) as info:
                    await store.list(TaskQuery(page_token=token))
                assert info.value.field == "pageToken"


async def test_task_ids_that_are_not_plain_tokens_are_stored_apart(tmp_path: Path) -> None:
    ids = ["a.b", "a b", "*", ">", "ü", "=YQ", "a"]  # "=YQ" is the key of "a"... as a plain id
    with anyio.fail_after(20):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as conn,
            NatsTaskStore.open(conn) as store,
        ):
            for i, task_id in enumerate(ids):
                await store.save(record(task_id, seconds=i))
            for task_id in ids:
                got = await store.get(task_id)
                assert got is not None
                assert got.task.id == task_id
            listed = await store.list(TaskQuery())
            assert sorted(r.task.id for r in listed.records) == sorted(ids)


def test_replaces_keeps_versions_final_states_and_holders() -> None:
    working = Entry(record("a", state=S.WORKING, version=2))
    assert replaces(working, Entry(record("a", state=S.WORKING, version=2)))  # a tie
    assert not replaces(working, Entry(record("a", state=S.WORKING, version=1)))
    canceled = Entry(record("a", state=S.CANCELED, version=3))
    assert not replaces(canceled, Entry(record("a", state=S.COMPLETED, version=3)))
    assert not replaces(canceled, Entry(record("a", state=S.WORKING, version=9)))
    assert not replaces(canceled, Entry(record("a", state=S.WORKING, version=9)), take_over=True)
    # nobody holds it: never again; its holder may still update its metadata
    assert not replaces(canceled, Entry(record("a", state=S.CANCELED, version=4)))
    old, new = Holder("n1", 1), Holder("n1", 2)
    final = Entry(record("a", state=S.CANCELED, version=3), old)
    assert replaces(final, Entry(record("a", state=S.CANCELED, version=4), old))
    assert not replaces(final, Entry(record("a", state=S.CANCELED, version=4), new))
    assert not replaces(final, Entry(record("a", state=S.FAILED, version=4), old))
    held = Entry(record("a", state=S.WORKING, version=2), old)
    assert replaces(held, Entry(record("a", state=S.WORKING, version=3), old))
    assert not replaces(held, Entry(record("a", state=S.WORKING, version=3), new))
    assert not replaces(held, Entry(record("a", state=S.WORKING, version=3), None))
    assert replaces(held, Entry(record("a", state=S.FAILED, version=3), None), take_over=True)
    free = Entry(record("a", state=S.INPUT_REQUIRED, version=2))  # released: resumable
    assert not replaces(free, Entry(record("a", state=S.WORKING, version=3), old))
    assert replaces(free, Entry(record("a", state=S.WORKING, version=3), new), take_over=True)


async def test_a_task_held_by_one_incarnation_is_fenced_from_another(tmp_path: Path) -> None:
    first, second = Holder("n1", 1), Holder("n1", 2)
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as a,
            connect(server) as b,
            NatsTaskStore.open(a, holder=first) as old,
            NatsTaskStore.open(b, holder=second) as new,
        ):
            await old.save(record("t", state=S.WORKING, version=2))
            assert await new.get_entry("t") == Entry(record("t", state=S.WORKING, version=2), first)
            stale = record("t", state=S.WORKING, version=3)
            assert await new.commit(stale) == record("t", state=S.WORKING, version=2)
            assert [e.record.task.id for e in await new.held_by("n1")] == ["t"]
            assert await new.held_by("n1", except_epoch=1) == []
            assert await new.held_by("n2") == []
            settled = record("t", state=S.FAILED, version=3)
            assert await new.commit(settled, holder=None, take_over=True) == settled
            assert await new.held_by("n1") == []
            late = record("t", state=S.WORKING, version=4)
            assert await old.commit(late) == settled  # the woken old owner is refused
            assert new.statistics().refused == 1
            assert old.statistics().refused == 1


async def commit(
    store: NatsTaskStore, new: StoredTask, results: dict[str, StoredTask], tag: str
) -> None:
    results[tag] = await store.commit(new)


async def test_a_cancel_racing_a_completion_gives_one_final_state(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as server,
            connect(server, name="n1") as one,
            connect(server, name="n2") as two,
            NatsTaskStore.open(one) as first,
            NatsTaskStore.open(two) as second,
        ):
            for round_ in range(20):
                task_id = f"race{round_}"
                await first.save(record(task_id, state=S.WORKING, version=2))
                await second.get(task_id)  # both know revision of version 2
                results: dict[str, StoredTask] = {}
                async with anyio.create_task_group() as tg:
                    tg.start_soon(
                        commit,
                        first,
                        record(task_id, state=S.COMPLETED, version=3),
                        results,
                        "owner",
                    )
                    tg.start_soon(
                        commit,
                        second,
                        record(task_id, state=S.CANCELED, version=3),
                        results,
                        "canceller",
                    )
                winner = await first.get(task_id)
                assert winner is not None
                assert results["owner"] == results["canceller"] == winner
                assert winner.task.status.state in (S.COMPLETED, S.CANCELED)
                # once final, nothing changes its state, not even a higher version
                later = record(task_id, state=S.WORKING, version=7)
                assert await second.commit(later) == winner
                assert await first.get(task_id) == winner
            stats = first.statistics().refused + second.statistics().refused
            assert stats >= 20


async def test_a_listing_sees_every_write_acknowledged_on_another_node(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as one,
            connect(server) as two,
            NatsTaskStore.open(one) as writer,
            NatsTaskStore.open(two) as reader,
        ):
            for i in range(50):
                await writer.save(record(f"t{i:02d}", seconds=i, owner="alice"))
                page = await reader.list(TaskQuery(owner="alice", page_size=1))
                assert page.total_size == i + 1
                assert page.records[0].task.id == f"t{i:02d}"
            await writer.delete("t49")
            page = await reader.list(TaskQuery(owner="alice", page_size=1))
            assert (page.total_size, page.records[0].task.id) == (49, "t48")


async def test_a_new_node_starts_with_every_task(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with nats_server(tmp_path) as server:
            async with connect(server) as conn, NatsTaskStore.open(conn) as store:
                for i in range(30):
                    await store.save(record(f"t{i:02d}", seconds=i, state=S.WORKING, version=1))
                    await store.save(record(f"t{i:02d}", seconds=i, version=2))
                await store.delete("t00")
            async with connect(server) as conn, NatsTaskStore.open(conn) as late:
                assert len(late.mirrored()) == 29
                assert {r.version for r in late.mirrored()} == {2}


async def test_clusters_on_one_nats_are_isolated(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as server,
            connect(server, cluster="Echo Agent") as a,
            connect(server, cluster="echo-agent") as b,
            NatsTaskStore.open(a) as store_a,
            NatsTaskStore.open(b) as store_b,
        ):
            await store_a.save(record("t1"))
            assert await store_b.get("t1") is None
            assert (await store_b.list(TaskQuery())).total_size == 0


async def test_nats_down_is_a_bounded_busy_error_and_the_store_recovers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The store's consumer follows throughout (no linger stopping it), so that what brings
    # its view back after the restart is nats-py re-creating it, which the test waits for.
    monkeypatch.setattr(task_store, "FOLLOW_LINGER_S", 60.0)
    consumers = Consumers(monkeypatch)
    with anyio.fail_after(60):
        async with (
            nats_server(tmp_path) as server,
            connect(server, timeout=0.5) as conn,
            NatsTaskStore.open(conn) as store,
        ):
            await store.save(record("a", state=S.WORKING, version=1))
            await server.stop()
            for call in (
                store.save(record("a", state=S.WORKING, version=2)),
                store.get("a"),
                store.list(TaskQuery()),
                store.delete("a"),
            ):
                with anyio.fail_after(3), pytest.raises(ClusterUnavailableError) as info:
                    await call
                assert info.value.code == -32050
                assert info.value.http_status == 429
            await server.start()  # same port, same store: acknowledged writes are back
            await conn.wait_connected()  # nats-py reconnected (its reconnected callback)
            got = await store.get("a")
            assert got is not None
            assert got.version == 1  # the writes that failed were not replayed later
            await store.save(record("a", state=S.COMPLETED, version=3))
            # The consumer the restart took away is re-created by nats-py (after two missed
            # heartbeats): once it has handed the store this write, the view is back.
            bucket = await conn.js.stream_info(f"KV_{conn.names.tasks_bucket}")
            await consumers.followed(store, bucket.state.last_seq)
            page = await store.list(TaskQuery())
            assert [(r.task.id, r.version) for r in page.records] == [("a", 3)]
