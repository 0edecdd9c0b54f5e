"""Task-store benchmarks: the in-memory store against the SQLite store.

What is measured, for each store (``memory``, ``sqlite_full`` = synchronous FULL, every
commit fsynced; ``sqlite_normal`` = synchronous NORMAL, survives a process crash only), at
concurrency 1 and 100:

* ``save``: saves of new tasks (a few history messages each); ``tasks_per_s`` is saves/s and
  p50/p99 are per-save latencies (a save returns after its commit). For SQLite the result
  also carries the group-commit statistics (``commits``, ``max_batch``).
* ``list``: ListTasks pages of 50 (newest first, owner filter, a page token half the time)
  over a store holding ``--list-size`` tasks; ``tasks_per_s`` is list calls/s.
* ``supervisor``: blocking SendMessage of a trivial agent through the runtime's
  :class:`Supervisor` with that store; ``tasks_per_s`` is completed tasks/s.

Usage::

    python benchmarks/bench_store.py                   # full run on trio
    python benchmarks/bench_store.py --quick --json    # smoke run, JSON lines
    python benchmarks/bench_store.py --backend both --dir /var/tmp

With ``--json`` every result is one JSON object per line with the keys ``name``,
``backend``, ``concurrency``, ``tasks_per_s``, ``p50_ms``, ``p99_ms``, ``errors`` and
``versions`` (plus ``store``, ``operations`` and the SQLite statistics). The database files
live in a temporary directory under ``--dir`` (default: the system's); fsync cost depends
on that file system, so say which one when you quote numbers.
"""

from __future__ import annotations

import datetime as dt
import random
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from _common import emit, make_parser, percentile, versions

from a2a_actors.protocol import Message, Part, Role, Task, TaskState, TaskStatus
from a2a_actors.stores import MemoryTaskStore, StoredTask, TaskQuery, TaskStore
from a2a_actors.stores._sqlite import SQLiteTaskStore, Synchronous

STORES = ("memory", "sqlite_full", "sqlite_normal")
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


@asynccontextmanager
async def open_store(kind: str, directory: Path) -> AsyncIterator[TaskStore]:
    """A fresh store of ``kind`` (a new database file for SQLite)."""
    if kind == "memory":
        yield MemoryTaskStore()
        return
    path = directory / f"{kind}-{time.perf_counter_ns()}.db"
    synchronous: Synchronous = "FULL" if kind == "sqlite_full" else "NORMAL"
    async with SQLiteTaskStore.open(path, synchronous=synchronous) as store:
        yield store


def make_record(n: int) -> StoredTask:
    """Task number ``n``: three history messages, 10 owners, 100 contexts."""
    history = tuple(
        Message(message_id=f"m{n}-{i}", role=Role.USER, parts=(Part(text="hello " * 20),))
        for i in range(3)
    )
    status = TaskStatus(state=TaskState.COMPLETED, timestamp=T0 + dt.timedelta(milliseconds=n))
    task = Task(id=f"task-{n:08d}", context_id=f"ctx-{n % 100}", status=status, history=history)
    return StoredTask(task, f"owner-{n % 10}", 3)


async def run_workers(
    total: int, concurrency: int, request: Callable[[int], Awaitable[bool]]
) -> tuple[float, list[float], int]:
    """Run ``total`` requests, ``concurrency`` at a time; (seconds, latencies in s, errors)."""
    latencies: list[float] = []
    errors = 0
    counter = iter(range(total))

    async def worker() -> None:
        nonlocal errors
        for n in counter:
            start = time.perf_counter()
            try:
                ok = await request(n)
            except Exception:
                ok = False
            latencies.append(time.perf_counter() - start)
            errors += not ok

    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(concurrency):
            tg.start_soon(worker)
    return time.perf_counter() - start, latencies, errors


def result(
    name: str, kind: str, concurrency: int, total: int, run: tuple[float, list[float], int]
) -> dict[str, Any]:
    """One result dict in the shared format."""
    seconds, latencies, errors = run
    return {
        "name": f"{name}_{kind}",
        "store": kind,
        "concurrency": concurrency,
        "tasks_per_s": round(total / seconds, 1),
        "p50_ms": round(percentile(latencies, 0.50) * 1000, 4),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 4),
        "errors": errors,
        "operations": total,
    }


def sqlite_stats(store: TaskStore) -> dict[str, Any]:
    """Group-commit counters of a SQLite store (nothing for the memory store)."""
    if not isinstance(store, SQLiteTaskStore):
        return {}
    stats = store.statistics()
    return {"commits": stats.commits, "writes": stats.writes, "max_batch": stats.max_batch}


async def bench_save(kind: str, directory: Path, total: int, concurrency: int) -> dict[str, Any]:
    """Saves of new tasks per second."""
    records = [make_record(n) for n in range(total)]
    async with open_store(kind, directory) as store:

        async def save(n: int) -> bool:
            await store.save(records[n])
            return True

        run = await run_workers(total, concurrency, save)
        return {**result("save", kind, concurrency, total, run), **sqlite_stats(store)}


async def bench_list(
    kind: str, directory: Path, size: int, total: int, concurrency: int
) -> dict[str, Any]:
    """ListTasks calls per second over ``size`` stored tasks."""
    async with open_store(kind, directory) as store:
        async with anyio.create_task_group() as tg:  # fill concurrently (group commit)
            for chunk in range(100):
                tg.start_soon(fill, store, range(chunk, size, 100))
        first = await store.list(TaskQuery(owner="owner-3"))
        rng = random.Random(1)

        async def page(n: int) -> bool:
            token = first.next_page_token if rng.random() < 0.5 else ""
            listed = await store.list(TaskQuery(owner="owner-3", page_token=token))
            return len(listed.records) == 50 and listed.total_size == size // 10

        return result("list", kind, concurrency, total, await run_workers(total, concurrency, page))


async def fill(store: TaskStore, numbers: range) -> None:
    """Save the records ``numbers``, one after another."""
    for n in numbers:
        await store.save(make_record(n))


async def bench_supervisor(
    kind: str, directory: Path, total: int, concurrency: int
) -> dict[str, Any] | None:
    """Completed tasks per second of a trivial agent through the Supervisor."""
    try:
        from a2a_actors.runtime import InProcessClient, Supervisor, TaskContext
    except ImportError:
        return None

    async def trivial(ctx: TaskContext) -> str:
        return "ok"

    async with open_store(kind, directory) as store, Supervisor(trivial, store=store) as sup:
        client = InProcessClient(sup)

        async def one(n: int) -> bool:
            done = await client.send_message("hi")
            return isinstance(done, Task) and done.status.state is TaskState.COMPLETED

        run = await run_workers(total, concurrency, one)
        return {**result("supervisor", kind, concurrency, total, run), **sqlite_stats(store)}


async def run_all(quick: bool, directory: Path, list_size: int) -> list[dict[str, Any]]:
    """Every benchmark, for every store, at concurrency 1 and 100."""
    saves_1, saves_100 = (300, 3_000) if quick else (3_000, 30_000)
    lists = 300 if quick else 3_000
    found: list[dict[str, Any]] = []
    for kind in STORES:
        found.append(await bench_save(kind, directory, saves_1, 1))
        found.append(await bench_save(kind, directory, saves_100, 100))
        found.append(await bench_list(kind, directory, list_size, lists, 1))
        found.append(await bench_list(kind, directory, list_size, lists, 100))
        for concurrency, total in ((1, saves_1), (100, saves_100)):
            outcome = await bench_supervisor(kind, directory, total, concurrency)
            if outcome is not None:
                found.append(outcome)
    return found


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run, print results; exit status 1 if any operation failed."""
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("trio", "asyncio", "both"), default="trio")
    parser.add_argument("--dir", type=Path, default=None, help="where the database files go")
    parser.add_argument("--list-size", type=int, default=None, help="tasks stored for 'list'")
    args = parser.parse_args(argv)
    backends = ("trio", "asyncio") if args.backend == "both" else (args.backend,)
    list_size = args.list_size or (2_000 if args.quick else 20_000)
    env = versions("anyio", "trio")
    failed = False
    for backend in backends:
        with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
            found = anyio.run(run_all, args.quick, Path(tmp), list_size, backend=backend)
        for item in found:
            failed |= item["errors"] > 0
            emit({"name": item.pop("name"), "backend": backend, **item, "versions": env}, args.json)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
