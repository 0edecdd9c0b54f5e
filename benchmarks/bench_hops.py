"""The latency a delegation hop adds, locally and over HTTP.

A chain of ``N + 1`` agents: agent 0 delegates to agent 1 (``orchestrator.delegate``), which
delegates to agent 2, ... down to a leaf that answers at once. One request at a time goes
to agent 0; the latency of each blocking request is measured, and the chain with 0 hops
(the leaf alone) is the baseline, so ``per_hop_ms = (p50(N hops) - p50(0 hops)) / N``.

* ``mode=local``: every agent is a local child: a task actor of the same supervisor, started
  and followed through one ``Supervisor.stream_message``, correlation recorded in task
  metadata; the root is called in-process (``Supervisor.send_message``), no HTTP at all.
* ``mode=http``: every agent has its own loopback server (``orchestrator.serve``); each hop
  is one SendStreamingMessage (the orchestrated child starts at once, so its first event
  tells the parent its id) over a reused connection; the root is called with ``A2AClient``
  over HTTP. Client and servers share one process and event loop.

Usage::

    python benchmarks/bench_hops.py                  # hops 0,1,2,4, both modes, trio
    python benchmarks/bench_hops.py --quick --json   # smoke run, JSON lines
    python benchmarks/bench_hops.py --backend asyncio --mode http --hops 0,3

With ``--json`` each result is one JSON object per line with the keys ``name``
(``hops.chain``), ``backend``, ``hops``, ``mode`` (``local`` or ``http``), ``p50_ms``,
``p99_ms``, ``per_hop_ms`` (0 for the baseline), ``requests_per_s`` (sequential requests),
``errors``, ``versions``, plus ``setup`` (``"<mode>, <N> hops"``) for the summary table.
"""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
from _common import emit, make_parser, percentile, versions

from a2a_actors.client import A2AClient, text_message
from a2a_actors.protocol import Message, SendMessageRequest, Task, TaskState
from a2a_actors.runtime import Agent, Supervisor, TaskContext
from orchestrator import Orchestrator, delegate, orchestrated, serve

Send = Callable[[], Awaitable[Task | Message]]


def chain(hops: int, target_of: Callable[[int], object]) -> list[Agent]:
    """Agents ``hop0 .. hopN``; ``hopI`` delegates to ``target_of(I + 1)``."""

    async def leaf(ctx: TaskContext) -> str:
        return ctx.text

    def link(index: int) -> Agent:
        async def forward(ctx: TaskContext) -> str:
            return (await delegate(ctx, target_of(index + 1), ctx.text)).text

        return Agent(handler=forward, name=f"hop{index}")

    return [link(i) for i in range(hops)] + [Agent(handler=leaf, name=f"hop{hops}")]


@asynccontextmanager
async def local_chain(hops: int) -> AsyncIterator[Send]:
    """The chain in one supervisor; yields a function sending one request to its root."""
    agents: list[Agent] = []
    agents += chain(hops, lambda i: agents[i])
    async with (
        Orchestrator() as orch,
        Supervisor(orchestrated(agents[0]), delegator=orch) as sup,
    ):

        async def send() -> Task | Message:
            return await sup.send_message(SendMessageRequest(message=text_message("ping")))

        yield send


@asynccontextmanager
async def http_chain(hops: int) -> AsyncIterator[Send]:
    """The chain with one loopback server per agent; yields a sender to the root over HTTP."""
    urls: dict[int, str] = {}
    agents = chain(hops, lambda i: urls[i])
    async with anyio.create_task_group() as tg:
        for index in reversed(range(hops + 1)):
            urls[index] = await tg.start(partial(serve, agents[index]))
        async with await A2AClient.connect(urls[0]) as client:

            async def send() -> Task | Message:
                return await client.send_message("ping")

            yield send
        tg.cancel_scope.cancel()


async def measure(send: Send, iterations: int, warmup: int) -> tuple[list[float], int, float]:
    """(latencies in seconds, errors, elapsed seconds) of ``iterations`` sequential sends."""
    for _ in range(warmup):
        await send()
    samples: list[float] = []
    errors = 0
    began = time.perf_counter()
    for _ in range(iterations):
        start = time.perf_counter()
        try:
            reply = await send()
        except Exception:
            errors += 1
            continue
        samples.append(time.perf_counter() - start)
        if not isinstance(reply, Task) or reply.status.state is not TaskState.COMPLETED:
            errors += 1
    return samples, errors, time.perf_counter() - began


async def run(
    backend: str, modes: list[str], hop_counts: list[int], quick: bool, json_mode: bool
) -> None:
    """Measure every (mode, hops) and emit one result each."""
    for mode in modes:
        iterations = (30 if quick else 400) if mode == "local" else (15 if quick else 150)
        warmup = max(3, iterations // 10)
        baseline: float | None = None
        for hops in sorted(set(hop_counts) | {0}):
            factory = local_chain if mode == "local" else http_chain
            async with factory(hops) as send:
                samples, errors, elapsed = await measure(send, iterations, warmup)
            p50 = percentile(samples, 0.5) * 1000
            if hops == 0:
                baseline = p50
            assert baseline is not None
            result: dict[str, Any] = {
                "name": "hops.chain",
                "backend": backend,
                "hops": hops,
                "mode": mode,
                "setup": f"{mode}, {hops} hops",
                "p50_ms": round(p50, 3),
                "p99_ms": round(percentile(samples, 0.99) * 1000, 3),
                "per_hop_ms": round((p50 - baseline) / hops, 3) if hops else 0.0,
                "requests_per_s": round(len(samples) / elapsed, 1) if elapsed else 0.0,
                "errors": errors,
                "versions": versions("anyio", "trio", "httpx", "hypercorn"),
            }
            emit(result, json_mode)


def main() -> int:
    """Parse the command line and run."""
    parser = make_parser(__doc__.splitlines()[0] if __doc__ else "bench_hops")
    parser.add_argument("--backend", choices=("trio", "asyncio", "both"), default="trio")
    parser.add_argument("--mode", default="local,http", help="comma-separated: local,http")
    parser.add_argument("--hops", default="0,1,2,4", help="comma-separated hop counts")
    args = parser.parse_args()
    modes = [m for m in args.mode.split(",") if m]
    if not set(modes) <= {"local", "http"}:
        parser.error("--mode takes local and/or http")
    hop_counts = [int(h) for h in args.hops.split(",") if h]
    if args.quick:
        hop_counts = [h for h in hop_counts if h <= 2] or [0, 1]
    backends = ["trio", "asyncio"] if args.backend == "both" else [args.backend]
    for backend in backends:
        anyio.run(run, backend, modes, hop_counts, args.quick, args.json, backend=backend)
    return 0


if __name__ == "__main__":
    sys.exit(main())
