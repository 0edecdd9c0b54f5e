"""The SQLite store: the memory store's behaviour, durability, recovery, retention, errors.

The behavioural tests run against both stores (``kind``), so the SQLite store is checked
against the reference semantics; a hypothesis test compares their listings directly.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import msgspec
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from hypothesis import given, settings, strategies as st

from a2a_actors.protocol import InvalidParamsError, Task, TaskState, TaskStatus, codec
from a2a_actors.protocol._models import Artifact, Message, Part, Role
from a2a_actors.protocol._requests import AuthenticationInfo, TaskPushNotificationConfig
from a2a_actors.stores import MemoryTaskStore, StoredTask, TaskQuery, TaskStore
from a2a_actors.stores._base import encode_page_token
from a2a_actors.stores._sqlite import (
    RESTART_TEXT,
    SchemaTooNewError,
    SQLiteTaskStore,
    StoreClosedError,
    StoreCorruptError,
    StoreError,
)
from a2a_actors.stores._sqlite_schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION

pytestmark = pytest.mark.anyio

S = TaskState
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
ROOT = Path(__file__).resolve().parents[2]
KINDS = pytest.mark.parametrize("kind", ["memory", "sqlite"])
LIVE = (S.SUBMITTED, S.WORKING, S.INPUT_REQUIRED, S.AUTH_REQUIRED)


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


def config(task_id: str, config_id: str, *, secret: str = "s3cret") -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(
        url=f"https://hooks.example.com/{task_id}/{config_id}",
        id=config_id,
        task_id=task_id,
        token=f"token-{secret}",
        authentication=AuthenticationInfo(scheme="Bearer", credentials=f"cred-{secret}"),
    )


@asynccontextmanager
async def open_store(kind: str, path: Path) -> AsyncIterator[TaskStore]:
    if kind == "memory":
        yield MemoryTaskStore()
    else:
        async with SQLiteTaskStore.open(path / "tasks.db") as store:
            yield store


async def ids(store: TaskStore, query: TaskQuery) -> list[str]:
    page = await store.list(query)
    return [r.task.id for r in page.records]


# -- the memory store's behaviour, on both stores ---------------------------------------


@KINDS
async def test_save_get_delete(kind: str, tmp_path: Path) -> None:
    with anyio.fail_after(10):
        async with open_store(kind, tmp_path) as store:
            assert await store.get("a") is None
            await store.save(record("a", owner="alice"))
            got = await store.get("a")
            assert got == record("a", owner="alice")
            await store.delete("a")
            await store.delete("a")  # unknown ids are fine
            assert await store.get("a") is None


@KINDS
async def test_save_keeps_the_highest_version(kind: str, tmp_path: Path) -> None:
    with anyio.fail_after(10):
        async with open_store(kind, tmp_path) as store:
            await store.save(record("a", version=3, state=S.WORKING))
            await store.save(record("a", version=2, state=S.SUBMITTED))
            got = await store.get("a")
            assert got is not None
            assert (got.version, got.task.status.state) == (3, S.WORKING)
            await store.save(record("a", version=3, state=S.INPUT_REQUIRED))  # a tie: applied
            got = await store.get("a")
            assert got is not None
            assert (got.version, got.task.status.state) == (3, S.INPUT_REQUIRED)
            await store.save(record("a", version=4))
            got = await store.get("a")
            assert got is not None
            assert got.version == 4


@KINDS
async def test_filters(kind: str, tmp_path: Path) -> None:
    with anyio.fail_after(10):
        async with open_store(kind, tmp_path) as store:
            await store.save(record("a", seconds=1, context_id="c1", owner="alice"))
            await store.save(record("b", seconds=2, context_id="c2", state=S.WORKING))
            await store.save(record("c", seconds=3, context_id="c1", owner="bob"))
            assert await ids(store, TaskQuery()) == ["c", "b", "a"]
            assert await ids(store, TaskQuery(context_id="c1")) == ["c", "a"]
            assert await ids(store, TaskQuery(state=S.WORKING)) == ["b"]
            assert await ids(store, TaskQuery(owner="alice")) == ["a"]
            assert await ids(store, TaskQuery(owner=None)) == ["b"]
            after = T0 + dt.timedelta(seconds=2)
            assert await ids(store, TaskQuery(status_timestamp_after=after)) == ["c", "b"]
            assert await ids(store, TaskQuery(context_id="none")) == []
            query = TaskQuery(context_id="c1", owner="bob", state=S.COMPLETED)
            assert await ids(store, query) == ["c"]


@KINDS
async def test_pagination_newest_first_with_total_size(kind: str, tmp_path: Path) -> None:
    with anyio.fail_after(10):
        async with open_store(kind, tmp_path) as store:
            for i in range(7):
                await store.save(record(f"t{i}", seconds=i))
            first = await store.list(TaskQuery(page_size=3))
            assert [r.task.id for r in first.records] == ["t6", "t5", "t4"]
            assert first.total_size == 7
            assert first.next_page_token
            second = await store.list(TaskQuery(page_size=3, page_token=first.next_page_token))
            assert [r.task.id for r in second.records] == ["t3", "t2", "t1"]
            third = await store.list(TaskQuery(page_size=3, page_token=second.next_page_token))
            assert [r.task.id for r in third.records] == ["t0"]
            assert third.next_page_token == ""
            assert third.total_size == 7


@KINDS
async def test_equal_timestamps_are_ordered_by_id(kind: str, tmp_path: Path) -> None:
    with anyio.fail_after(10):
        async with open_store(kind, tmp_path) as store:
            for name in ("b", "a", "c"):
                await store.save(record(name))
            page = await store.list(TaskQuery(page_size=2))
            assert [r.task.id for r in page.records] == ["c", "b"]
            rest = await store.list(TaskQuery(page_size=2, page_token=page.next_page_token))
            assert [r.task.id for r in rest.records] == ["a"]


@KINDS
async def test_empty_listing_has_an_empty_token(kind: str, tmp_path: Path) -> None:
    with anyio.fail_after(10):
        async with open_store(kind, tmp_path) as store:
            page = await store.list(TaskQuery())
            assert (page.records, page.next_page_token, page.total_size) == ((), "", 0)


@KINDS
async def test_bad_page_token_is_invalid_params(kind: str, tmp_path: Path) -> None:
    with anyio.fail_after(10):
        async with open_store(kind, tmp_path) as store:
            for token in ("not-a-token", "e30", encode_page_token((T0, "x"))[:-3] + "!!"):
                with pytest.raises(InvalidParamsError) as info:
                    await store.list(TaskQuery(page_token=token))
                assert info.value.field == "pageToken"


@KINDS
async def test_a_task_without_a_status_timestamp_sorts_as_the_epoch(
    kind: str, tmp_path: Path
) -> None:
    with anyio.fail_after(10):
        async with open_store(kind, tmp_path) as store:
            bare = Task(id="bare", status=TaskStatus(state=S.WORKING))
            await store.save(StoredTask(bare, None, 1))
            await store.save(record("dated"))
            assert await ids(store, TaskQuery()) == ["dated", "bare"]
            epoch = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
            assert await ids(store, TaskQuery(status_timestamp_after=epoch)) == ["dated", "bare"]


_STATES = st.sampled_from([S.SUBMITTED, S.WORKING, S.COMPLETED, S.INPUT_REQUIRED])
_OWNERS = st.sampled_from([None, "alice", "bob"])
_RECORDS = st.lists(
    st.tuples(st.integers(0, 5), _STATES, st.sampled_from(["c1", "c2"]), _OWNERS),
    max_size=25,
)
_QUERIES = st.builds(
    TaskQuery,
    context_id=st.sampled_from([None, "c1", "c2"]),
    state=st.sampled_from([None, S.WORKING, S.COMPLETED]),
    owner=st.sampled_from([msgspec.UNSET, None, "alice"]),
    status_timestamp_after=st.sampled_from([None, T0 + dt.timedelta(seconds=3)]),
    page_size=st.integers(1, 6),
)


@settings(max_examples=40, deadline=None)
@given(rows=_RECORDS, query=_QUERIES, backend=st.sampled_from(["trio", "asyncio"]))
def test_listing_matches_the_memory_store(
    rows: list[tuple[int, TaskState, str, str | None]], query: TaskQuery, backend: str
) -> None:
    records = [
        record(f"t{i:02d}", seconds=s, state=state, context_id=ctx, owner=owner)
        for i, (s, state, ctx, owner) in enumerate(rows)
    ]

    async def walk(store: TaskStore) -> list[tuple[list[str], int, bool]]:
        for r in records:
            await store.save(r)
        pages: list[tuple[list[str], int, bool]] = []
        token = ""
        while True:
            page = await store.list(msgspec.structs.replace(query, page_token=token))
            pages.append(([r.task.id for r in page.records], page.total_size, bool(token)))
            token = page.next_page_token
            if not token:
                return pages

    async def scenario() -> None:
        with anyio.fail_after(20), tempfile.TemporaryDirectory() as tmp:
            expected = await walk(MemoryTaskStore())
            async with SQLiteTaskStore.open(Path(tmp) / "t.db") as store:
                assert await walk(store) == expected

    anyio.run(scenario, backend=backend)


# -- durability ----------------------------------------------------------------------


def rich_record(task_id: str) -> StoredTask:
    """A task using every kind of content, with metadata a ProtoJSON decoder might touch."""
    note = Message(message_id="m1", role=Role.USER, parts=(Part(text="hello"),))
    artifact = Artifact(
        artifact_id="a1",
        name="out",
        parts=(Part(raw=b"\x00\xffbytes"), Part(data={"snake_key": [1, None]}), Part(url="u")),
        metadata={"trace_id": "abc", "depth": 2},
    )
    status = TaskStatus(state=S.INPUT_REQUIRED, timestamp=T0, message=note)
    task = Task(
        id=task_id,
        context_id="ctx",
        status=status,
        history=(note,),
        artifacts=(artifact,),
        metadata={"parent_task": "p1", "nested": {"snake_case": True}},
    )
    return StoredTask(task, "alice", 7)


async def test_everything_survives_a_reopen(tmp_path: Path) -> None:
    with anyio.fail_after(10):
        path = tmp_path / "tasks.db"
        async with SQLiteTaskStore.open(path) as store:
            await store.save(rich_record("rich"))
            for name in ("c3", "c1", "c2"):
                assert await store.push_configs.put(config("rich", name, secret=name), limit=5)
            assert await store.push_configs.put(config("rich", "c1", secret="new"), limit=5)
        assert oct(path.stat().st_mode & 0o777) == "0o600"  # it holds credentials
        async with SQLiteTaskStore.open(path) as store:
            assert await store.get("rich") == rich_record("rich")
            configs = store.push_configs.configs_for("rich")
            assert [c.id for c in configs] == ["c3", "c1", "c2"]  # creation order
            assert configs[1] == config("rich", "c1", secret="new")  # credentials included


async def test_push_config_store_semantics(tmp_path: Path) -> None:
    with anyio.fail_after(10):
        async with SQLiteTaskStore.open(tmp_path / "tasks.db") as store:
            configs = store.push_configs
            assert await configs.put(config("t", "a"), limit=2)
            assert await configs.put(config("t", "b"), limit=2)
            assert not await configs.put(config("t", "c"), limit=2)  # over the limit
            assert await configs.put(config("t", "a", secret="x"), limit=2)  # replace is fine
            assert await configs.get("t", "a") == config("t", "a", secret="x")
            assert await configs.get("t", "c") is None
            assert await configs.get("other", "a") is None
            assert [c.id for c in await configs.list("t")] == ["a", "b"]
            await configs.delete("t", "a")
            await configs.delete("t", "a")  # idempotent
            await configs.delete("nobody", "a")
            assert [c.id for c in configs.configs_for("t")] == ["b"]
            await store.save(record("t"))
            await store.delete("t")  # a deleted task takes its configs along
            assert configs.configs_for("t") == ()
        async with SQLiteTaskStore.open(tmp_path / "tasks.db") as store:
            assert store.push_configs.configs_for("t") == ()


async def test_push_configs_fit_the_server_and_delivery_seams(tmp_path: Path) -> None:
    from a2a_actors.push._delivery import PushConfigSource
    from a2a_actors.server._push_configs import PushConfigs, PushConfigStore

    with anyio.fail_after(10):
        async with SQLiteTaskStore.open(tmp_path / "tasks.db") as store:
            crud_store: PushConfigStore = store.push_configs
            source: PushConfigSource = store.push_configs
            crud = PushConfigs(crud_store, max_per_task=2)
            created = await crud.create("t", config("t", ""))  # the server assigns an id
            assert created.id
            assert (created.token, created.authentication) == ("", AuthenticationInfo("Bearer"))
            listed = await crud.list("t")
            assert [c.token for c in listed.configs] == [""]  # credentials never go out
            assert (await crud.get("t", created.id)).token == ""
            (kept,) = source.configs_for("t")  # but delivery gets them
            assert kept == msgspec.structs.replace(config("t", ""), id=created.id)


CHILD = r"""
import datetime as dt, sys
import anyio
from a2a_actors.protocol import Task, TaskState as S, TaskStatus
from a2a_actors.protocol._models import Message, Part, Role
from a2a_actors.protocol._requests import AuthenticationInfo, TaskPushNotificationConfig
from a2a_actors.stores import StoredTask
from a2a_actors.stores._sqlite import SQLiteTaskStore

PLANS = [
    [S.SUBMITTED, S.WORKING, S.WORKING, S.COMPLETED],
    [S.SUBMITTED, S.WORKING, S.INPUT_REQUIRED],
    [S.SUBMITTED, S.WORKING, S.WORKING, S.WORKING, S.WORKING],
    [S.SUBMITTED, S.AUTH_REQUIRED],
]

async def main(path):
    async with SQLiteTaskStore.open(path, synchronous=sys.argv[3]) as store:
        for i in range(3):
            auth = AuthenticationInfo(scheme="Bearer", credentials=f"cred{i}")
            hook = TaskPushNotificationConfig(
                url=f"https://hooks.example.com/{i}", id=f"cfg{i}", task_id="w0-0",
                token=f"tok{i}", authentication=auth)
            await store.push_configs.put(hook, limit=10)
            print(f"config cfg{i}", flush=True)

        async def worker(w):
            n = 0
            while True:
                task_id = f"w{w}-{n}"
                history = []
                for version, state in enumerate(PLANS[n % len(PLANS)], start=1):
                    history.append(Message(message_id=f"m{version}", role=Role.AGENT,
                                           parts=(Part(text="x" * 200 * version),)))
                    status = TaskStatus(state=state, timestamp=dt.datetime.now(dt.UTC))
                    task = Task(id=task_id, context_id="c", status=status,
                                history=tuple(history))
                    await store.save(StoredTask(task, f"owner{w}", version))
                    print(f"task {task_id} {version}", flush=True)
                n += 1

        async with anyio.create_task_group() as tg:
            for w in range(8):
                tg.start_soon(worker, w)

anyio.run(main, sys.argv[1], backend=sys.argv[2])
"""


@pytest.mark.parametrize("synchronous", ["FULL", "NORMAL"])
async def test_sigkill_mid_burst_loses_no_acknowledged_write(
    tmp_path: Path, anyio_backend: str, synchronous: str
) -> None:
    path = tmp_path / "tasks.db"
    acked: dict[str, int] = {}
    configs: list[str] = []
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-c", CHILD, str(path), anyio_backend, synchronous]
    with anyio.fail_after(60):
        process = await anyio.open_process(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=env
        )
        try:
            assert process.stdout is not None
            lines = BufferedByteReceiveStream(process.stdout)
            while len(acked) < 1000:
                try:
                    line = (await lines.receive_until(b"\n", 1000)).decode()
                except anyio.IncompleteRead:
                    assert process.stderr is not None
                    errors = await process.stderr.receive()
                    pytest.fail(f"the child ended early: {errors.decode()}")
                kind, name, *rest = line.split()
                if kind == "config":
                    configs.append(name)
                else:
                    acked[name] = max(acked.get(name, 0), int(rest[0]))
            os.kill(process.pid, signal.SIGKILL)  # mid-burst: 8 writers are still saving
        finally:
            with anyio.CancelScope(shield=True):
                if process.returncode is None:
                    os.kill(process.pid, signal.SIGKILL)
                await process.wait()
                await process.aclose()
        assert process.returncode == -signal.SIGKILL
        assert configs == ["cfg0", "cfg1", "cfg2"]
        assert (tmp_path / "tasks.db-wal").exists()  # no clean close: the log is still there

        async with SQLiteTaskStore.open(path) as store:
            before: dict[str, StoredTask] = {}
            for task_id, version in acked.items():
                got = await store.get(task_id)
                assert got is not None, task_id
                assert got.version >= version, task_id
                before[task_id] = got
            hooks = store.push_configs.configs_for("w0-0")
            assert [(c.id, c.token) for c in hooks] == [(f"cfg{i}", f"tok{i}") for i in range(3)]
            assert all(c.authentication is not None for c in hooks)
            assert hooks[2].authentication == AuthenticationInfo(
                scheme="Bearer", credentials="cred2"
            )

            now = dt.datetime.now(dt.UTC)
            report = await store.recover(now=now)
            failed = {r.task.id for r in report.failed}
            for task_id, old in before.items():
                state = old.task.status.state
                got = await store.get(task_id)
                assert got is not None
                if state in (S.SUBMITTED, S.WORKING):
                    assert task_id in failed
                    assert got.version == old.version + 1
                    assert got.task.status.state is S.FAILED
                    assert got.task.status.timestamp == now
                    assert got.task.status.message is not None
                    assert got.task.status.message.text == RESTART_TEXT
                    assert got.task.history[:-1] == old.task.history
                else:
                    assert got == old
                    assert (task_id in report.resumable) == (
                        state in (S.INPUT_REQUIRED, S.AUTH_REQUIRED)
                    )
            for state in (S.SUBMITTED, S.WORKING):
                assert (await store.list(TaskQuery(state=state))).total_size == 0
        with closing(sqlite3.connect(path, isolation_level=None)) as check:
            assert check.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


# -- concurrency and group commit ---------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_racing_writers_and_readers_lose_no_update(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    newest = {f"t{i}": rng.randint(3, 25) for i in range(25)}
    saves = [(task_id, v) for task_id, top in newest.items() for v in range(1, top + 1)]
    saves += rng.choices(saves, k=150)  # stale writers repeat old versions
    rng.shuffle(saves)
    writers = [saves[i::16] for i in range(16)]
    regressions: list[str] = []
    with anyio.fail_after(30):
        async with SQLiteTaskStore.open(tmp_path / "tasks.db", max_batch=16) as store:

            async def write(chunk: list[tuple[str, int]]) -> None:
                for task_id, version in chunk:
                    state = S.COMPLETED if version == newest[task_id] else S.WORKING
                    await store.save(record(task_id, seconds=version, version=version, state=state))
                    if rng.random() < 0.3:
                        await anyio.lowlevel.checkpoint()

            async def read(done: anyio.Event) -> None:
                seen: dict[str, int] = {}
                while not done.is_set():
                    task_id = rng.choice(list(newest))
                    got = await store.get(task_id)
                    if got is not None:
                        consistent = got.task.metadata == {"v": got.version}
                        if got.version < seen.get(task_id, 0) or not consistent:
                            regressions.append(
                                f"{task_id}: {got.version} after {seen.get(task_id)}"
                            )
                        seen[task_id] = got.version
                    # Leave the CPU to the writers: on a loaded machine, readers spinning on
                    # worker threads slow every commit down (GIL hand-offs).
                    await anyio.sleep(0.0005)

            done = anyio.Event()
            async with anyio.create_task_group() as readers:
                for _ in range(4):
                    readers.start_soon(read, done)
                async with anyio.create_task_group() as tg:
                    for chunk in writers:
                        tg.start_soon(write, chunk)
                done.set()

            assert regressions == []
            for task_id, top in newest.items():
                got = await store.get(task_id)
                assert got is not None
                assert (got.version, got.task.metadata) == (top, {"v": top})
                assert got.task.status.state is S.COMPLETED
            assert (await store.list(TaskQuery(state=S.WORKING))).total_size == 0
            stats = store.statistics()
            assert (stats.writes, stats.failed_writes, stats.pending) == (len(saves), 0, 0)


async def test_group_commit_batches_concurrent_writes(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with SQLiteTaskStore.open(tmp_path / "tasks.db") as store:

            async def worker(w: int) -> None:
                for n in range(20):
                    await store.save(record(f"w{w}-{n}"))

            async with anyio.create_task_group() as tg:
                for w in range(50):
                    tg.start_soon(worker, w)
            stats = store.statistics()
            assert (stats.writes, stats.failed_writes, stats.pending) == (1000, 0, 0)
            assert stats.max_batch > 1
            assert stats.commits < stats.writes / 2  # every worker awaits each save
            assert (await store.list(TaskQuery())).total_size == 1000


async def test_a_failing_write_fails_only_its_caller(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    with anyio.fail_after(10):
        async with SQLiteTaskStore.open(path):
            pass
        with closing(
            sqlite3.connect(path, isolation_level=None)
        ) as db:  # inject a failure for one task id
            db.execute(
                "CREATE TRIGGER poison BEFORE INSERT ON tasks WHEN NEW.id = 'poison'"
                " BEGIN SELECT RAISE(ABORT, 'poisoned row'); END"
            )
        errors: list[StoreError] = []
        async with SQLiteTaskStore.open(path) as store:

            async def save(name: str) -> None:
                try:
                    await store.save(record(name))
                except StoreError as exc:
                    errors.append(exc)

            async with anyio.create_task_group() as tg:
                for name in ["a", "b", "poison", "c", "d"]:
                    tg.start_soon(save, name)
            assert len(errors) == 1
            assert "poisoned row" in str(errors[0])
            assert await ids(store, TaskQuery()) == ["d", "c", "b", "a"]
            stats = store.statistics()
            assert (stats.writes, stats.failed_writes) == (4, 1)


async def test_a_lock_timeout_fails_the_whole_batch_and_the_store_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    errors: list[StoreError] = []
    with anyio.fail_after(10):
        async with SQLiteTaskStore.open(path, busy_timeout=0.05) as store:

            async def save(name: str) -> None:
                try:
                    await store.save(record(name))
                except StoreError as exc:
                    errors.append(exc)

            other = sqlite3.connect(path, isolation_level=None)
            try:
                other.execute("BEGIN IMMEDIATE")  # held past the busy timeout
                async with anyio.create_task_group() as tg:
                    for name in "abcde":
                        tg.start_soon(save, name)
            finally:
                other.close()
            assert len(errors) == 5
            assert all("locked" in str(exc) for exc in errors)
            await store.save(record("f"))
            assert await ids(store, TaskQuery()) == ["f"]
            assert store.statistics().failed_writes == 5


async def test_reads_proceed_while_the_file_is_write_locked(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    with anyio.fail_after(10):
        async with SQLiteTaskStore.open(path) as store:
            await store.save(record("a"))
            other = sqlite3.connect(path, isolation_level=None)
            try:
                other.execute("BEGIN IMMEDIATE")  # another writer holds the write lock
                other.execute("DELETE FROM tasks")
                assert await store.get("a") is not None  # WAL: the committed state
                assert await ids(store, TaskQuery()) == ["a"]
                async with anyio.create_task_group() as tg:
                    tg.start_soon(store.save, record("b"))
                    await anyio.wait_all_tasks_blocked()  # the save is queued and waiting
                    assert store.statistics().pending == 1  # waits for the lock
                    other.execute("ROLLBACK")
            finally:
                other.close()
            assert await ids(store, TaskQuery()) == ["b", "a"]


async def test_a_cancelled_save_is_still_committed(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    with anyio.fail_after(10):
        async with SQLiteTaskStore.open(path) as store, anyio.create_task_group() as tg:
            scope = anyio.CancelScope()

            async def save() -> None:
                with scope:
                    await store.save(record("a"))

            other = sqlite3.connect(path, isolation_level=None)
            try:
                other.execute("BEGIN IMMEDIATE")  # the writer cannot commit for now
                tg.start_soon(save)
                await anyio.wait_all_tasks_blocked()
                assert store.statistics().pending == 1
                scope.cancel()  # the write is queued: cancelling the caller cannot undo it
                await anyio.wait_all_tasks_blocked()
                assert scope.cancelled_caught
                other.execute("ROLLBACK")
            finally:
                other.close()
        async with SQLiteTaskStore.open(path) as store:
            assert await store.get("a") is not None


async def test_leaving_with_an_error_flushes_and_reraises_it_unwrapped(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    with anyio.fail_after(10):
        with pytest.raises(LookupError, match="boom"):  # noqa: PT012 (the exit is tested)
            async with SQLiteTaskStore.open(path) as store:
                await store.save(record("a"))
                raise LookupError("boom")
        with pytest.raises(StoreClosedError):
            await store.save(record("b"))
        with pytest.raises(StoreClosedError):
            await store.get("a")
        async with SQLiteTaskStore.open(path) as store:
            assert await store.get("a") is not None


async def test_outer_cancellation_closes_the_store_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    with anyio.fail_after(10):
        with anyio.CancelScope() as outer:
            async with SQLiteTaskStore.open(path) as store:
                await store.save(record("a"))
                outer.cancel()
                await anyio.sleep_forever()
        assert outer.cancelled_caught
        async with SQLiteTaskStore.open(path) as store:
            assert await store.get("a") is not None


# -- opening: schema, corruption, bad paths ---------------------------------------------


async def test_a_new_file_gets_the_current_schema(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    with anyio.fail_after(10):
        async with SQLiteTaskStore.open(path):
            pass
        async with SQLiteTaskStore.open(path):  # opening again migrates nothing
            pass
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        assert db.execute("PRAGMA application_id").fetchone() == (APPLICATION_ID,)
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


async def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    with anyio.fail_after(10):
        async with SQLiteTaskStore.open(path):
            pass
        with closing(sqlite3.connect(path, isolation_level=None)) as db:
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
        with pytest.raises(SchemaTooNewError, match="is newer than this a2a-actors") as info:
            async with SQLiteTaskStore.open(path):
                pass
        assert (info.value.found, info.value.supported) == (SCHEMA_VERSION + 1, SCHEMA_VERSION)
        assert isinstance(info.value, StoreError)


async def test_a_file_that_is_not_a_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    garbage = b"this is not an SQLite database\n" * 200
    path.write_bytes(garbage)
    with anyio.fail_after(10):
        with pytest.raises(StoreCorruptError, match="not a usable SQLite database"):
            async with SQLiteTaskStore.open(path):
                pass
    assert path.read_bytes() == garbage


async def test_another_applications_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("CREATE TABLE notes (body TEXT)")
    with anyio.fail_after(10):
        with pytest.raises(StoreCorruptError, match="another application"):
            async with SQLiteTaskStore.open(path):
                pass


async def test_bad_paths_and_arguments(tmp_path: Path) -> None:
    with anyio.fail_after(10):
        with pytest.raises(StoreError, match="cannot open the task store"):
            async with SQLiteTaskStore.open(tmp_path):  # a directory
                pass
        with pytest.raises(ValueError, match="needs a file path"):
            async with SQLiteTaskStore.open(":memory:"):
                pass
        with pytest.raises(ValueError, match="positive interval"):
            async with SQLiteTaskStore.open(
                tmp_path / "t.db", retention_max=1, retention_interval=0
            ):
                pass


# -- restart recovery --------------------------------------------------------------------


async def test_recover_fails_active_tasks_and_reports_interrupted_ones(tmp_path: Path) -> None:
    now = T0 + dt.timedelta(hours=1)
    with anyio.fail_after(10):
        async with SQLiteTaskStore.open(tmp_path / "tasks.db") as store:
            for i, state in enumerate([*LIVE, S.COMPLETED, S.CANCELED]):
                await store.save(record(state.name, seconds=i, state=state, version=3, owner="o"))
            report = await store.recover(now=now)
            assert [r.task.id for r in report.failed] == ["SUBMITTED", "WORKING"]
            assert report.resumable == ("INPUT_REQUIRED", "AUTH_REQUIRED")
            for stored in report.failed:
                got = await store.get(stored.task.id)
                assert got == stored
                assert (got.version, got.owner, got.task.status.state) == (4, "o", S.FAILED)
                assert got.task.status.timestamp == now
                note = got.task.status.message
                assert note is not None
                assert (note.role, note.text, note.task_id) == (
                    Role.AGENT,
                    RESTART_TEXT,
                    got.task.id,
                )
                assert got.task.history == (note,)
            for name in ("INPUT_REQUIRED", "AUTH_REQUIRED", "COMPLETED", "CANCELED"):
                got = await store.get(name)
                assert got is not None
                assert got.version == 3
            again = await store.recover(now=now, message="second")
            assert again.failed == ()
            assert again.resumable == report.resumable


# -- retention ---------------------------------------------------------------------------


async def fill_for_retention(store: SQLiteTaskStore) -> None:
    for i in range(6):  # terminal tasks finished at T0+0s .. T0+50s
        state = [S.COMPLETED, S.FAILED, S.CANCELED, S.REJECTED][i % 4]
        await store.save(record(f"done{i}", seconds=10 * i, state=state))
        await store.push_configs.put(config(f"done{i}", "hook"), limit=5)
    for state in LIVE:  # live tasks older than every terminal one
        await store.save(record(state.name, seconds=-100, state=state))
        await store.push_configs.put(config(state.name, "hook"), limit=5)


async def test_evict_by_ttl_and_count_spares_live_tasks(tmp_path: Path) -> None:
    now = T0 + dt.timedelta(seconds=60)
    with anyio.fail_after(10):
        async with SQLiteTaskStore.open(tmp_path / "tasks.db") as store:
            await fill_for_retention(store)
            assert await store.evict(now=now) == ()
            assert await store.evict(now=now, ttl=float("inf")) == ()
            assert await store.evict(now=now, ttl=1e15) == ()
            assert await store.evict(now=now, ttl=40) == ("done0", "done1", "done2")  # <= 20s
            assert await store.evict(now=now, max_terminal=2) == ("done3",)
            assert await store.evict(now=now, ttl=40, max_terminal=2) == ()
            assert await store.evict(now=now, ttl=0, max_terminal=5) == ("done4", "done5")
            left = await ids(store, TaskQuery())
            assert sorted(left) == sorted(state.name for state in LIVE)
            for i in range(6):
                assert store.push_configs.configs_for(f"done{i}") == ()
            for state in LIVE:
                assert len(store.push_configs.configs_for(state.name)) == 1
            with pytest.raises(ValueError, match="must not be negative"):
                await store.evict(now=now, ttl=-1)
        async with SQLiteTaskStore.open(tmp_path / "tasks.db") as store:
            assert store.push_configs.configs_for("done5") == ()
            assert len(store.push_configs.configs_for("WORKING")) == 1


async def test_evict_by_count_breaks_timestamp_ties_by_id(tmp_path: Path) -> None:
    with anyio.fail_after(10):
        async with SQLiteTaskStore.open(tmp_path / "tasks.db") as store:
            for name in ("b", "c", "a"):
                await store.save(record(name))
            assert await store.evict(now=T0, max_terminal=1) == ("a", "b")


async def test_retention_runs_in_the_background(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    passes = 0
    second_pass = anyio.Event()

    def clock() -> dt.datetime:
        nonlocal passes
        passes += 1
        if passes == 2:  # the first pass has committed
            second_pass.set()
        return T0

    with anyio.fail_after(10):
        async with SQLiteTaskStore.open(tmp_path / "tasks.db") as store:
            await fill_for_retention(store)
            await store.save(record("ancient", seconds=-(10**9)))  # from 1994
            async with anyio.create_task_group() as tg:
                tg.start_soon(
                    lambda: store.run_retention(
                        ttl=None, max_terminal=2, interval=0.001, clock=clock
                    )
                )
                await second_pass.wait()
                tg.cancel_scope.cancel()
            left = await ids(store, TaskQuery())
            assert sorted(left) == sorted(["done4", "done5", *(state.name for state in LIVE)])
            await store.save(record("ancient", seconds=-(10**9)))
        # The background retention's first pass runs as the store opens; it tells us when
        # its eviction has committed (no reading the file until the task is gone).
        evicted = anyio.Event()
        evict = SQLiteTaskStore.evict

        async def evict_and_tell(self: SQLiteTaskStore, **kwargs: Any) -> tuple[str, ...]:
            try:
                return await evict(self, **kwargs)
            finally:
                evicted.set()

        monkeypatch.setattr(SQLiteTaskStore, "evict", evict_and_tell)
        async with SQLiteTaskStore.open(
            tmp_path / "tasks.db", retention_ttl=3600, retention_interval=3600
        ) as store:
            await evicted.wait()
            assert await store.get("ancient") is None
            for state in LIVE:
                assert await store.get(state.name) is not None
        with pytest.raises(ValueError, match="retention needs"):
            await store.run_retention(ttl=None, max_terminal=None, interval=1)


async def test_a_retention_pass_that_finds_the_store_closed_ends_quietly(
    tmp_path: Path,
) -> None:
    # On asyncio a retention task whose sleep has just ended is cancelled only at its
    # next await, so its pass can reach the store after ``open`` marked it closed: the
    # background retention must treat that as shutdown, while run_retention still raises.
    async with SQLiteTaskStore.open(tmp_path / "tasks.db") as store:
        pass
    with anyio.fail_after(10):
        await store._retain_until_closed(ttl=1.0, max_terminal=None, interval=1)
        with pytest.raises(StoreClosedError):
            await store.run_retention(ttl=1.0, max_terminal=None, interval=1)


# -- with the runtime ----------------------------------------------------------------------


async def test_the_supervisor_writes_through_to_the_file(tmp_path: Path) -> None:
    from a2a_actors.runtime import InProcessClient, Supervisor, TaskContext

    async def agent(ctx: TaskContext) -> str:
        return "done"

    path = tmp_path / "tasks.db"
    with anyio.fail_after(20):
        async with SQLiteTaskStore.open(path) as store, Supervisor(agent, store=store) as sup:
            client = InProcessClient(sup)
            finished: list[Task] = []

            async def send() -> None:
                result = await client.send_message("hi")
                assert isinstance(result, Task)
                finished.append(result)

            async with anyio.create_task_group() as tg:
                for _ in range(50):
                    tg.start_soon(send)
            assert store.statistics().max_batch > 1
        async with SQLiteTaskStore.open(path) as store:
            page = await store.list(TaskQuery(page_size=100))
            assert page.total_size == 50
            assert {r.task.id for r in page.records} == {t.id for t in finished}
            assert all(r.task.status.state is S.COMPLETED for r in page.records)
            assert (await store.recover(now=T0)).failed == ()


async def test_a_version_1_file_is_migrated_and_its_tasks_kept(tmp_path: Path) -> None:
    """A file written before ``private`` existed (schema 1) opens, keeps its tasks, and then
    stores private data."""
    path = tmp_path / "tasks.db"
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        for statement in MIGRATIONS[0]:
            db.execute(statement)
        db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        db.execute("PRAGMA user_version = 1")
        old = record("old", state=S.INPUT_REQUIRED).task
        db.execute(
            "INSERT INTO tasks (id, context_id, state, terminal, owner, status_us, version, body)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (old.id, old.context_id, old.status.state.value, 0, None, 0, 1, codec.encode(old)),
        )
    with anyio.fail_after(10):
        async with SQLiteTaskStore.open(path) as store:
            kept = await store.get("old")
            assert kept is not None
            assert (kept.task, kept.private) == (old, None)
            await store.save(StoredTask(old, None, 2, {"notes": [1, "two"]}))
        async with SQLiteTaskStore.open(path) as store:
            again = await store.get("old")
            assert again is not None
            assert again.private == {"notes": [1, "two"]}
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


@KINDS
async def test_private_data_is_stored_with_the_task_and_read_back(
    kind: str, tmp_path: Path
) -> None:
    with anyio.fail_after(10):
        async with open_store(kind, tmp_path) as store:
            base = record("p", context_id="c1")
            await store.save(StoredTask(base.task, None, 1, {"k": {"nested": [1, None]}}))
            got = await store.get("p")
            assert got is not None
            assert got.private == {"k": {"nested": [1, None]}}
            assert got.task == base.task  # the Task itself carries none of it
            page = await store.list(TaskQuery(context_id="c1"))
            assert [r.private for r in page.records] == [{"k": {"nested": [1, None]}}]
