"""The load and the samples of ``bench_soak.py``.

:func:`run_soak` drives a steady mix of A2A calls (:data:`KINDS`) at a fixed rate through a
few :class:`~a2a_actors.client.A2AClient` instances (asyncio), and every ``sample_s``
seconds hands a sample to a callback: each process's RSS (``/proc/PID/status`` VmRSS),
open fds (``/proc/PID/fd``) and CPU seconds, the store's size (ListTasks ``totalSize``
through each node) and, with a NATS URL, the JetStream streams' sizes (nats-py
``streams_info``). Nothing kept per task: the load's own memory stays flat.
"""

from __future__ import annotations

import math
import os
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
from _http_servers import _cpu_seconds

from a2a_actors.client import A2AClient
from a2a_actors.protocol import Task, TaskState

__all__ = ("DEFAULT_MIX", "KINDS", "Soak", "Tally", "parse_mix", "process_stats", "run_soak")

#: What one operation of the mix does (each starts one task).
KINDS = ("send", "stream", "ask", "sleep")
DEFAULT_MIX = "send=4,stream=3,ask=2,sleep=1"
#: Seconds one operation may take before it counts as an error.
OP_TIMEOUT_S = 30.0
#: The operation's kind and, in a cluster, the other node's client (cancel and answer).
Op = Callable[[A2AClient, A2AClient, float], Any]


def parse_mix(spec: str) -> list[str]:
    """``kind=weight,...`` as one cycle of kinds, spread evenly (smooth weighted round robin).

    Raises:
        ValueError: An unknown kind, a weight that is not a whole number, or all weights 0.
    """
    weights: dict[str, int] = {}
    for item in spec.split(","):
        kind, _, weight = item.strip().partition("=")
        if kind not in KINDS or not weight.isdigit():
            raise ValueError(f"--mix wants kind=weight with kinds {', '.join(KINDS)}: {item!r}")
        weights[kind] = int(weight)
    total = sum(weights.values())
    if not total:
        raise ValueError("--mix needs a weight above 0")
    current = dict.fromkeys(weights, 0)
    cycle = []
    for _ in range(total):
        for kind, share in weights.items():
            current[kind] += share
        chosen = max(current, key=current.__getitem__)
        current[chosen] -= total
        cycle.append(chosen)
    return cycle


# --------------------------------------------------------------------------- processes


def _rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024  # kB
    except (OSError, ValueError, IndexError):
        return None
    return None


def _open_fds(pid: int) -> int | None:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def process_stats(pids: Mapping[str, int]) -> dict[str, dict[str, Any]]:
    """RSS (MB), open fds and CPU seconds of each process, by label (None where unreadable)."""
    return {
        label: {
            "pid": pid,
            "rss_mb": _rss_mb(pid),
            "fds": _open_fds(pid),
            "cpu_s": _cpu_seconds(pid),
        }
        for label, pid in pids.items()
    }


# --------------------------------------------------------------------------- the load


@dataclass(slots=True)
class Soak:
    """What to run: the nodes (label → URL), the processes to sample (label → PID), the
    NATS URL of a cluster (None: no JetStream sizes) and the load's settings."""

    urls: Mapping[str, str]
    pids: Mapping[str, int]
    nats_url: str | None
    duration_s: float
    sample_s: float
    rate: float
    clients: int
    max_in_flight: int
    sleep_s: float
    mix: Sequence[str]


@dataclass(slots=True)
class Tally:
    """Counters of the load: operations done and errors, by kind."""

    done: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    first_errors: dict[str, str] = field(default_factory=dict)
    in_flight: int = 0
    started: int = 0


class _Unexpected(Exception):
    """An answer in the wrong state."""


def _expect(answer: object, state: TaskState, kind: str) -> Task:
    if not isinstance(answer, Task):
        raise _Unexpected(f"{kind}: a {type(answer).__name__}, not a Task")
    if answer.status.state is not state:
        raise _Unexpected(f"{kind}: {answer.status.state.name}, not {state.name}")
    return answer


async def _send(a: A2AClient, b: A2AClient, sleep_s: float) -> None:
    _expect(await a.send_message("hello from bench_soak"), TaskState.COMPLETED, "send")


async def _stream(a: A2AClient, b: A2AClient, sleep_s: float) -> None:
    state: TaskState | None = None
    async with a.stream_message("stream") as events:
        async for event in events:
            if event.task is not None:
                state = event.task.status.state
            elif event.status_update is not None:
                state = event.status_update.status.state
    if state is not TaskState.COMPLETED:
        raise _Unexpected(f"stream: ended in {state}")


async def _ask(a: A2AClient, b: A2AClient, sleep_s: float) -> None:
    asked = _expect(await a.send_message("ask"), TaskState.INPUT_REQUIRED, "ask")
    answer = await b.send_message("42", task_id=asked.id, context_id=asked.context_id)
    _expect(answer, TaskState.COMPLETED, "answer")


async def _sleep(a: A2AClient, b: A2AClient, sleep_s: float) -> None:
    started = await a.send_message("sleep", return_immediately=True)
    if not isinstance(started, Task):
        raise _Unexpected("sleep: not a Task")
    await anyio.sleep(sleep_s)
    _expect(await b.cancel_task(started.id), TaskState.CANCELED, "cancel")


OPS: dict[str, Op] = {"send": _send, "stream": _stream, "ask": _ask, "sleep": _sleep}


async def _run_op(
    kind: str, a: A2AClient, b: A2AClient, soak: Soak, tally: Tally, slot: anyio.Semaphore
) -> None:
    tally.in_flight += 1
    try:
        with anyio.fail_after(OP_TIMEOUT_S):
            await OPS[kind](a, b, soak.sleep_s)
    except Exception as exc:
        error = f"{kind}:{type(exc).__name__}"
        tally.errors[error] += 1
        tally.first_errors.setdefault(error, str(exc)[:300])
    else:
        tally.done[kind] += 1
    finally:
        tally.in_flight -= 1
        slot.release()


async def _dispatch(
    tg: anyio.abc.TaskGroup, clients: Sequence[A2AClient], soak: Soak, tally: Tally, end: float
) -> None:
    """Start one operation every ``1 / rate`` seconds until ``end`` (at most
    ``max_in_flight`` at once; a schedule more than a second late starts again from now)."""
    slot = anyio.Semaphore(soak.max_in_flight)
    origin = time.monotonic()
    k = 0
    while True:
        due = origin + k / soak.rate
        if due >= end:
            return
        await anyio.sleep_until(due)
        await slot.acquire()
        if time.monotonic() - due > 1.0:
            origin, k = time.monotonic(), 0
        kind = soak.mix[tally.started % len(soak.mix)]
        a = clients[tally.started % len(clients)]
        b = clients[(tally.started + 1) % len(clients)]  # in a cluster: the other node
        tally.started += 1
        k += 1
        tg.start_soon(_run_op, kind, a, b, soak, tally, slot)


@asynccontextmanager
async def _jetstream(url: str) -> AsyncIterator[Any]:
    import nats

    connection = await nats.connect(url, name="bench-soak", max_reconnect_attempts=2)
    try:
        yield connection.jetstream()
    finally:
        await connection.close()


async def _jetstream_sizes(js: Any) -> dict[str, dict[str, int]] | None:
    """Messages, bytes and consumers of every stream (KV buckets are ``KV_*`` streams)."""
    try:
        with anyio.fail_after(5):
            infos = await js.streams_info()
    except Exception:
        return None
    return {
        info.config.name: {
            "messages": info.state.messages,
            "bytes": info.state.bytes,
            "consumers": info.state.consumer_count,
        }
        for info in infos
    }


async def _store_size(client: A2AClient) -> int | None:
    try:
        with anyio.fail_after(10):
            return (await client.list_tasks(page_size=1)).total_size
    except Exception:
        return None


async def _sample(
    soak: Soak, probes: Mapping[str, A2AClient], js: Any, tally: Tally, t: float, rate: float
) -> dict[str, Any]:
    return {
        "t_s": round(t, 2),
        "tasks_done": sum(tally.done.values()),
        "done_by_kind": dict(tally.done),
        "errors": sum(tally.errors.values()),
        "in_flight": tally.in_flight,
        "tasks_per_s": rate,
        "processes": process_stats(soak.pids),
        "store_tasks": {label: await _store_size(probe) for label, probe in probes.items()},
        "jetstream": None if js is None else await _jetstream_sizes(js),
    }


async def run_soak(soak: Soak, on_sample: Callable[[dict[str, Any]], None]) -> Tally:
    """Run the load for ``duration_s`` (then let the operations in flight end), sampling
    before it starts, every ``sample_s`` and once more at the end; the final counters."""
    tally = Tally()
    async with AsyncExitStack() as stack:
        urls = list(soak.urls.values())
        clients = [
            await stack.enter_async_context(await A2AClient.connect(urls[i % len(urls)]))
            for i in range(max(soak.clients, len(urls)))
        ]
        probes = {
            label: await stack.enter_async_context(await A2AClient.connect(url))
            for label, url in soak.urls.items()
        }
        js = None
        if soak.nats_url is not None:
            js = await stack.enter_async_context(_jetstream(soak.nats_url))
        start = time.monotonic()
        end = start + soak.duration_s
        last = (start, 0)

        async def sample() -> None:
            nonlocal last
            now, done = time.monotonic(), sum(tally.done.values())
            rate = (done - last[1]) / (now - last[0]) if now > last[0] else math.nan
            last = (now, done)
            on_sample(await _sample(soak, probes, js, tally, now - start, rate))

        async def sample_every() -> None:
            k = 1
            while start + k * soak.sample_s < end - soak.sample_s / 2:
                await anyio.sleep_until(start + k * soak.sample_s)
                await sample()
                k += 1

        await sample()  # before the load: the baseline
        async with anyio.create_task_group() as tg:
            tg.start_soon(sample_every)
            await _dispatch(tg, clients, soak, tally, end)
        await sample()  # at the end, the operations in flight done
    return tally
