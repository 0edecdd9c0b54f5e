"""Framework benchmarks: the same agent served by a2a-actors and by its framework's own A2A
server, over HTTP.

Two agents, each the same object in both of its servers, so what differs is the server
around it:

* ``benchmarks/servers/pydantic_echo.py``: a ``pydantic_ai.Agent`` on a ``FunctionModel``
  that gives a fixed reply (streamed as one text delta), on PydanticAI's own A2A server
  (fasta2a) and on a2a-actors (``a2a_actors.frameworks.pydantic_ai.as_agent``);
* ``benchmarks/servers/sdk_executor_echo.py``: an a2a-sdk ``AgentExecutor`` (WORKING, the
  echo artifact, COMPLETED, through a ``TaskUpdater``), on the SDK's own server
  (``DefaultRequestHandler``, ``InMemoryTaskStore``, uvicorn) and on a2a-actors
  (``a2a_actors.frameworks.a2a_sdk.as_agent``).

Every measured point gets a fresh server in its own subprocess, started on 127.0.0.1 (port
0, the URL read from its stdout), pinned to one CPU with ``taskset`` when there are two CPUs
or more, with the load generator pinned to the others, and stopped by its PID afterwards
(SIGTERM, then SIGKILL), as in ``bench_http.py``.

Setups (``--setups``), each with the workloads it is measured with:

* ``fasta2a`` (stream): ``fasta2a.pydantic_ai.agent_to_a2a(agent)`` (fasta2a's in-memory
  broker, storage and worker) on uvicorn with its defaults and no access log
  (``python benchmarks/servers/pydantic_echo.py``);
* ``ours-asyncio`` (stream): ``a2a-actors serve benchmarks.servers.pydantic_echo:served
  --backend asyncio`` (Quart on Hypercorn);
* ``ours-trio`` (stream; only when named): the same with ``--backend trio``;
* ``sdk-executor`` (send, stream): the executor on the SDK's server
  (``python benchmarks/servers/sdk_executor_echo.py``), uvicorn as for ``fasta2a``;
* ``ours-executor`` (send, stream): ``a2a-actors serve
  benchmarks.servers.sdk_executor_echo:served --backend asyncio``.

Workloads, at every ``--concurrency`` level (closed loop: N keep-alive connections, each
sending its next request as soon as its answer has ended): ``stream``, JSON-RPC
``SendStreamingMessage`` read to the end of the SSE stream (``requests_per_s`` counts
completed streams); ``send``, a blocking JSON-RPC ``SendMessage`` answered with the
completed task. The PydanticAI setups are measured streaming only: fasta2a answers a
blocking ``SendMessage`` with the task as just submitted, without waiting for it. fasta2a
reads the A2A 1.0 method name and answers with 1.0's enums (``TASK_STATE_*``): its streams
are a Task (SUBMITTED), a status update (WORKING), the text as an appended artifact chunk,
the whole ``result`` artifact, and a status update (COMPLETED); ours are a Task, WORKING,
the ``answer`` artifact and its last chunk, and COMPLETED. The executor's streams are the
same on both of its servers: a Task (SUBMITTED), WORKING, the ``echo`` artifact, COMPLETED.

Load generator: the one of ``a2a-actors bench`` (:mod:`a2a_actors.loadtest`, through
``bench_http``'s :func:`_http_load.run_builtin`): raw sockets, epoll, one process per
load-generator CPU, a fresh ``messageId`` per request, and every answer parsed (a stream
event by event). An error is an HTTP status other than 200, a JSON-RPC error (in the
answer or as an event), a malformed answer or event, or a task (or stream) whose last state
is not ``TASK_STATE_COMPLETED``. wrk is not used: it cannot read a stream to its end
reliably. The ``frameworks.loadgen-ceiling`` results measure the generator against
``servers/trivial.py`` (fixed, valid answers) at the highest concurrency, for each workload
measured.

Results (``--json``: one object per line): ``name`` (``frameworks.stream``,
``frameworks.send``, ``frameworks.loadgen-ceiling``, ``frameworks.ratio``), ``setup``,
``backend``, ``workload``, ``concurrency``, ``requests_per_s``, ``p50_ms``, ``p99_ms``,
``cpu_ms_per_request`` (the server process's CPU time over the window divided by the
requests completed in it), ``errors``, ``completed``, ``duration_s``, ``loadgen``,
``cpu_pinning``, ``server_cpu_pct``, ``loadgen_cpu_pct`` and ``versions``. With
``--rounds N`` every point is measured N times (setups interleaved) and the round with the
median requests/s is kept. ``frameworks.ratio`` lines compare each of ours with the
framework's own server, per workload and concurrency: ``ours-asyncio`` (and ``ours-trio``
when measured) with ``fasta2a``, target ``>= 3.0``; ``ours-executor`` with
``sdk-executor``, target ``>= 4.0`` (the same executor, at least 4x the SDK's server);
``requests_per_s`` with its ``target`` and whether it was ``met``, and
``cpu_ms_per_request`` as context (no target; below 1 means ours spends less CPU per
request).

Usage::

    python benchmarks/bench_frameworks.py                   # 16 and 64 connections, 10 s each
    python benchmarks/bench_frameworks.py --quick --json    # CI smoke run (a few seconds)
    python benchmarks/bench_frameworks.py --setups sdk-executor,ours-executor --rounds 3
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

from _common import emit, make_parser, versions
from _http_load import Load, Measured, check_once, run_builtin
from _http_servers import SERVERS, TRIVIAL, Pinning, Server, Setup, choose_pinning, running_server

#: Seconds per measured point, as in ``bench_http.py``.
DURATION_S = 10.0
#: The agents, as ``a2a-actors serve`` imports them.
PYDANTIC = "benchmarks.servers.pydantic_echo:served"
EXECUTOR = "benchmarks.servers.sdk_executor_echo:served"


def _ours(name: str, served: str, backend: str) -> Setup:
    command = (sys.executable, "-m", "a2a_actors.cli", "serve", served, "--port", "0")
    return Setup(name, backend, (*command, "--backend", backend))


def _script(name: str, script: str) -> Setup:
    return Setup(name, "asyncio", (sys.executable, str(SERVERS / script)))


SETUPS: dict[str, Setup] = {
    "fasta2a": _script("fasta2a", "pydantic_echo.py"),
    "ours-asyncio": _ours("ours-asyncio", PYDANTIC, "asyncio"),
    "ours-trio": _ours("ours-trio", PYDANTIC, "trio"),
    "sdk-executor": _script("sdk-executor", "sdk_executor_echo.py"),
    "ours-executor": _ours("ours-executor", EXECUTOR, "asyncio"),
}
#: The workloads each setup is measured with (fasta2a does not wait on a blocking send).
WORKLOADS: dict[str, tuple[str, ...]] = {
    "fasta2a": ("stream",),
    "ours-asyncio": ("stream",),
    "ours-trio": ("stream",),
    "sdk-executor": ("send", "stream"),
    "ours-executor": ("send", "stream"),
}
DEFAULT_SETUPS = ("fasta2a", "ours-asyncio", "sdk-executor", "ours-executor")
#: (setup, versus, the target of its requests/s ratio): the ratios reported, when both
#: were measured.
PAIRS = (
    ("ours-asyncio", "fasta2a", 3.0),
    ("ours-trio", "fasta2a", 3.0),
    ("ours-executor", "sdk-executor", 4.0),
)


@dataclass(frozen=True, slots=True)
class Point:
    name: str
    setup: Setup
    load: Load


def measure(point: Point, pinning: Pinning, workers: int) -> tuple[Measured, int]:
    """Run ``point`` against a fresh server: what the generator measured, and 1 when the
    server's first answer (sent before the load) was wrong, else 0."""
    with running_server(point.setup, pinning) as server:
        failure = check_once(server, point.load.workload)
        if failure is not None:
            print(f"{point.setup.name}: first request failed: {failure}", file=sys.stderr)
        measured = run_builtin(server, point.load, pinning, workers)
        _still_running(server)
    return measured, int(failure is not None)


def _still_running(server: Server) -> None:
    if server.process.poll() is not None:
        raise RuntimeError(f"{server.setup.name} exited ({server.process.returncode})")


def result_of(
    point: Point, measured: Measured, first_failed: int, pinning: Pinning, env: dict[str, str]
) -> dict[str, Any]:
    """One measured point as a result dict."""
    duration = measured.duration_s
    rate = measured.completed / duration if duration else 0.0
    # run_builtin gives the server's CPU share over the window times the load's duration
    share = None if measured.server_cpu_s is None else measured.server_cpu_s / point.load.duration
    return {
        "name": point.name,
        "setup": point.setup.name,
        "backend": point.setup.backend,
        "workload": point.load.workload,
        "concurrency": point.load.connections,
        "requests_per_s": round(rate, 1),
        "p50_ms": _round(measured.p50_ms),
        "p99_ms": _round(measured.p99_ms),
        "cpu_ms_per_request": None if share is None or not rate else round(1000 * share / rate, 3),
        "errors": measured.errors + first_failed,
        "completed": measured.completed,
        "duration_s": round(duration, 3),
        "loadgen": "builtin",
        "cpu_pinning": pinning.describe(),
        "server_cpu_pct": None if share is None else round(100 * share, 1),
        "loadgen_cpu_pct": _pct(measured.loadgen_cpu_s, duration),
        "versions": env,
    }


def median_round(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median requests/s among ``runs`` of one point (the lower middle one
    for an even count), with every round's requests/s and the errors of all rounds."""
    ordered = sorted(runs, key=lambda run: run["requests_per_s"])
    chosen = dict(ordered[(len(ordered) - 1) // 2])
    chosen["errors"] = sum(run["errors"] for run in runs)
    chosen["rounds"] = len(runs)
    chosen["requests_per_s_rounds"] = [run["requests_per_s"] for run in runs]
    return chosen


def ratios(results: list[dict[str, Any]], env: dict[str, str]) -> list[dict[str, Any]]:
    """``frameworks.ratio``: each of ours vs its framework's server, per workload and
    concurrency, on requests/s (the target) and on CPU per request (context, no target)."""
    index = {
        (r["setup"], r["workload"], r["concurrency"]): r
        for r in results
        if r["name"] != "frameworks.loadgen-ceiling"
    }
    out = []
    for setup, versus, target_ratio in PAIRS:
        for (name, workload, concurrency), mine in index.items():
            other = index.get((versus, workload, concurrency))
            if name != setup or other is None:
                continue
            for metric, target in (("requests_per_s", target_ratio), ("cpu_ms_per_request", None)):
                if not mine[metric] or not other[metric]:
                    continue
                ratio = mine[metric] / other[metric]
                out.append(
                    {
                        "name": "frameworks.ratio",
                        "workload": workload,
                        "setup": setup,
                        "backend": mine["backend"],
                        "versus": versus,
                        "concurrency": concurrency,
                        "metric": metric,
                        "ratio": round(ratio, 3),
                        "target": None if target is None else f">= {target}",
                        "met": None if target is None else ratio >= target,
                        "versions": env,
                    }
                )
    return out


def _round(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 3)


def _pct(cpu_s: float | None, duration: float) -> float | None:
    return None if cpu_s is None or not duration else round(100 * cpu_s / duration, 1)


def _int_list(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def _name_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _environment() -> dict[str, str]:
    env = versions(
        "a2a-sdk",
        "pydantic-ai-slim",
        "pydantic-ai",
        "fasta2a",
        "pydantic",
        "uvicorn",
        "starlette",
        "h11",
        "httptools",
        "uvloop",
        "quart",
        "quart-trio",
        "hypercorn",
        "anyio",
        "trio",
    )
    if env["pydantic-ai"] == "absent":  # the slim distribution is the one installed
        del env["pydantic-ai"]
    return env


def main(argv: list[str] | None = None) -> int:
    parser = make_parser(__doc__.splitlines()[0] if __doc__ else "bench_frameworks")
    parser.add_argument(
        "--setups",
        type=_name_list,
        default=list(DEFAULT_SETUPS),
        help=f"comma-separated, of {', '.join(SETUPS)} (default: {', '.join(DEFAULT_SETUPS)})",
    )
    parser.add_argument(
        "--concurrency", type=_int_list, default=None, help="connections, comma-separated"
    )
    parser.add_argument("--duration", type=float, default=None, help="seconds per point")
    parser.add_argument("--warmup", type=float, default=None, help="seconds before each point")
    parser.add_argument("--workers", type=int, default=None, help="load generator processes")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="repeat every point this many times (servers restarted, setups interleaved) "
        "and report the round with the median requests/s",
    )
    parser.add_argument("--no-pin", action="store_true", help="do not use taskset")
    parser.add_argument("--no-ceiling", action="store_true", help="skip frameworks.loadgen-ceiling")
    args = parser.parse_args(argv)

    unknown = [name for name in args.setups if name not in SETUPS]
    if unknown:
        parser.error(f"unknown setups: {unknown}")
    concurrency = args.concurrency or ([4] if args.quick else [16, 64])
    duration = args.duration or (1.0 if args.quick else DURATION_S)
    warmup = args.warmup if args.warmup is not None else (0.3 if args.quick else 1.0)
    pinning = choose_pinning(not args.no_pin)
    workers = args.workers or (
        len(pinning.loadgen) if pinning.enabled else max(1, (os.cpu_count() or 2) - 1)
    )
    env = _environment()

    points: list[Point] = []
    workloads = [w for w in ("send", "stream") if any(w in WORKLOADS[n] for n in args.setups)]
    if not args.no_ceiling:
        for workload in workloads:
            load = Load(workload, max(concurrency), duration, warmup)
            points.append(Point("frameworks.loadgen-ceiling", TRIVIAL, load))
    for workload in workloads:
        for connections in concurrency:  # the setups compared are measured one after the other
            for name in args.setups:
                if workload in WORKLOADS[name]:
                    load = Load(workload, connections, duration, warmup)
                    points.append(Point(f"frameworks.{workload}", SETUPS[name], load))

    rounds: dict[tuple[str, str, str, int], list[dict[str, Any]]] = {}
    failed = False
    for _ in range(args.rounds):
        for point in points:
            try:
                measured, first_failed = measure(point, pinning, workers)
            except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
                print(f"{point.setup.name} c={point.load.connections}: {exc}", file=sys.stderr)
                failed = True
                continue
            for sample in measured.samples:
                print(f"{point.setup.name}: {sample}", file=sys.stderr)
            result = result_of(point, measured, first_failed, pinning, env)
            key = (result["name"], result["setup"], result["workload"], result["concurrency"])
            runs = rounds.setdefault(key, [])
            runs.append(result)
            print(
                f"  {key[1]} {key[2]} c={key[3]} round {len(runs)}: "
                f"{result['requests_per_s']:,.0f}/s "
                f"p99 {result['p99_ms']} ms, {result['cpu_ms_per_request']} ms CPU/request, "
                f"errors {result['errors']}",
                file=sys.stderr,
                flush=True,
            )
    results = [median_round(runs) for runs in rounds.values()]
    for result in results:
        emit(result, args.json)
    for ratio in ratios(results, env):
        emit(ratio, args.json)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
