"""In-process benchmarks of the actor runtime: no HTTP, no encoding.

What is measured (each on trio and/or asyncio):

* ``send_message_trivial``: tasks/s of blocking SendMessage for an agent that returns a
  string at once, one request at a time (concurrency 1) and with 1000 requests in flight;
  p50/p99 are per-request latencies.
* ``cancel_latency``: CancelTask of a task whose agent is blocked in ``sleep_forever``,
  from the cancel call to the return of the CANCELED task (p50/p99); one cancel at a time
  while the other tasks keep sleeping.
* ``parked_input_required_memory``: bytes per task parked in INPUT_REQUIRED
  (``await ctx.ask(...)``), measured with tracemalloc over N parked tasks; includes the
  actor, its anyio task and coroutine frames, the state machine, and the stored snapshot.

Usage::

    python benchmarks/bench_inprocess.py                      # full run, both backends
    python benchmarks/bench_inprocess.py --quick --json       # smoke run, JSON lines
    python benchmarks/bench_inprocess.py --backend trio

With ``--json`` every result is one JSON object per line with the keys ``name``,
``backend``, ``concurrency``, ``tasks_per_s`` or ``requests_per_s``, ``p50_ms``,
``p99_ms``, ``errors`` and ``versions`` (plus ``bytes_per_task`` for the memory run).
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from importlib import metadata
from typing import Any

import anyio

from a2a_actors.protocol import Task, TaskState
from a2a_actors.runtime import InProcessClient, Supervisor, TaskContext


def versions() -> dict[str, str]:
    """The versions that matter for these numbers."""
    found = {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
    }
    for dist in ("a2a-actors", "anyio", "trio", "msgspec"):
        try:
            found[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            found[dist] = "absent"
    return found


def percentile(samples: list[float], q: float) -> float:
    """The q-quantile (0..1) of ``samples`` in milliseconds, nearest rank."""
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))
    return ordered[index] * 1000


async def trivial(ctx: TaskContext) -> str:
    """The trivial agent: complete at once with a text message."""
    return "ok"


async def sleeper(ctx: TaskContext) -> None:
    """An agent that blocks forever (until cancelled)."""
    await anyio.sleep_forever()


async def asker(ctx: TaskContext) -> str:
    """An agent that parks in INPUT_REQUIRED."""
    answer = await ctx.ask("Which city?")
    return answer.text


async def run_workers(
    total: int, concurrency: int, request: Callable[[], Awaitable[bool]]
) -> tuple[float, list[float], int]:
    """Run ``total`` requests with ``concurrency`` in flight; (seconds, latencies, errors)."""
    latencies: list[float] = []
    errors = 0
    remaining = total

    async def worker() -> None:
        nonlocal remaining, errors
        while remaining > 0:
            remaining -= 1
            start = time.perf_counter()
            ok = await request()
            latencies.append(time.perf_counter() - start)
            errors += not ok

    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(concurrency):
            tg.start_soon(worker)
    return time.perf_counter() - start, latencies, errors


async def bench_trivial(total: int, concurrency: int) -> dict[str, Any]:
    """Tasks/s of a trivial agent through the supervisor."""
    async with Supervisor(trivial) as sup:
        client = InProcessClient(sup)

        async def one() -> bool:
            result = await client.send_message("hi")
            return isinstance(result, Task) and result.status.state is TaskState.COMPLETED

        await run_workers(min(total, 1000), concurrency, one)  # warm-up
        gc.collect()
        seconds, latencies, errors = await run_workers(total, concurrency, one)
    return {
        "name": "send_message_trivial",
        "concurrency": concurrency,
        "tasks_per_s": round(total / seconds, 1),
        "p50_ms": round(percentile(latencies, 0.50), 4),
        "p99_ms": round(percentile(latencies, 0.99), 4),
        "errors": errors,
        "tasks": total,
    }


async def bench_cancel(total: int) -> dict[str, Any]:
    """Latency of cancelling an agent blocked in sleep_forever."""
    latencies: list[float] = []
    errors = 0
    async with Supervisor(sleeper) as sup:
        client = InProcessClient(sup)
        ids: list[str] = []
        for _ in range(total):
            task = await client.send_message("sleep", return_immediately=True)
            assert isinstance(task, Task)
            ids.append(task.id)
        await anyio.wait_all_tasks_blocked()
        start_all = time.perf_counter()
        for task_id in ids:
            start = time.perf_counter()
            task = await client.cancel_task(task_id)
            latencies.append(time.perf_counter() - start)
            errors += task.status.state is not TaskState.CANCELED
        seconds = time.perf_counter() - start_all
    return {
        "name": "cancel_latency",
        "concurrency": 1,
        "requests_per_s": round(total / seconds, 1),
        "p50_ms": round(percentile(latencies, 0.50), 4),
        "p99_ms": round(percentile(latencies, 0.99), 4),
        "errors": errors,
        "tasks": total,
    }


async def bench_parked(total: int) -> dict[str, Any]:
    """Memory per task parked in INPUT_REQUIRED (tracemalloc)."""
    async with Supervisor(asker) as sup:
        client = InProcessClient(sup)

        async def park() -> bool:
            task = await client.send_message("weather?")
            return isinstance(task, Task) and task.status.state is TaskState.INPUT_REQUIRED

        await run_workers(100, 10, park)  # warm-up: caches, interned strings, code objects
        await anyio.wait_all_tasks_blocked()
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        seconds, latencies, errors = await run_workers(total, 100, park)
        await anyio.wait_all_tasks_blocked()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        live = sup.statistics().live_tasks
    return {
        "name": "parked_input_required_memory",
        "concurrency": 100,
        "tasks_per_s": round(total / seconds, 1),
        "p50_ms": round(percentile(latencies, 0.50), 4),
        "p99_ms": round(percentile(latencies, 0.99), 4),
        "errors": errors + (live != total + 100),
        "tasks": total,
        "bytes_per_task": round((after - before) / total),
    }


async def run_all(quick: bool) -> list[dict[str, Any]]:
    """Every benchmark, sized for ``quick`` or full runs."""
    n = 2_000 if quick else 50_000
    return [
        await bench_trivial(n // 4 if quick else 20_000, 1),
        await bench_trivial(n, 1000),
        await bench_cancel(200 if quick else 5_000),
        await bench_parked(1_000 if quick else 100_000),
    ]


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run, print results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("trio", "asyncio", "both"), default="both")
    parser.add_argument("--quick", action="store_true", help="small sizes, for smoke runs")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    args = parser.parse_args(argv)
    backends = ("trio", "asyncio") if args.backend == "both" else (args.backend,)
    env = versions()
    failed = False
    for backend in backends:
        for result in anyio.run(run_all, args.quick, backend=backend):
            result = {"backend": backend, **result, "versions": env}
            failed |= result["errors"] > 0
            if args.json:
                print(json.dumps(result), flush=True)
            else:
                rate = result.get("tasks_per_s", result.get("requests_per_s"))
                extra = f"  {result['bytes_per_task']} B/task" if "bytes_per_task" in result else ""
                print(
                    f"{backend:8} {result['name']:30} c={result['concurrency']:<5} "
                    f"{rate:>10}/s  p50 {result['p50_ms']:.3f} ms  "
                    f"p99 {result['p99_ms']:.3f} ms  errors {result['errors']}{extra}",
                    flush=True,
                )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
