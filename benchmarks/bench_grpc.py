"""gRPC benchmarks: our gRPC binding vs the official a2a-sdk's gRPC server, in one run.

Every measured point gets a fresh server in its own subprocess (127.0.0.1, port 0, its
address read from its stdout), pinned to one CPU with ``taskset`` when there are two CPUs or
more, and stopped by its PID afterwards; the load comes from separate processes pinned to the
other CPUs (:mod:`_grpc_load`: closed-loop ``grpc.aio`` callers, one process per
load-generator CPU unless ``--workers`` says otherwise).

Setups (``--setups``):

* ``ours``: ``a2a-actors serve examples.echo:agent --grpc-port 0 --backend asyncio`` (the
  gRPC service beside the HTTP one, on asyncio);
* ``sdk``: the official a2a-sdk's ``GrpcHandler`` with the echo executor
  (``benchmarks/servers/sdk_grpc_echo.py``);
* ``trivial`` (the ``grpc.loadgen-ceiling`` results): fixed answers from bare ``grpc.aio``
  handlers (``sdk_grpc_echo.py --trivial``). As long as it is far above the best setup, the
  generator is not the bottleneck; ``loadgen_cpu_pct`` says the same from the other end.

Workloads (``--workloads``), each at every ``--concurrency`` level: ``send`` (unary
SendMessage, blocking, answered by a COMPLETED Task) and ``stream`` (SendStreamingMessage read
to its end, the last event COMPLETED; ``requests_per_s`` counts completed streams). The
request is the same bytes for every server.

Results (``--json``: one object per line): ``name`` (``grpc.send``, ``grpc.stream``,
``grpc.loadgen-ceiling``, ``grpc.ratio``), ``setup``, ``workload``, ``concurrency``,
``requests_per_s``, ``p50_ms``, ``p99_ms``, ``errors``, ``completed``, ``duration_s``,
``loadgen``, ``cpu_pinning``, ``server_cpu_pct``, ``loadgen_cpu_pct`` and ``versions``.
``grpc.ratio`` lines compare ``ours`` with ``sdk`` on ``requests_per_s`` and say the
issue's ``target`` (``>= 3.0``) and whether it was ``met``.

Usage::

    python benchmarks/bench_grpc.py                      # 16 and 64 callers, 10 s each
    python benchmarks/bench_grpc.py --quick --json       # CI smoke run (a few seconds)
    python benchmarks/bench_grpc.py --setups ours --workloads send --duration 5
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from _common import emit, make_parser, versions
from _grpc_load import Merged, run_load
from _http_servers import SERVERS, Pinning, choose_pinning, started_process

DURATION_S = 10.0
TARGET_RATIO = 3.0
WORKLOADS = ("send", "stream")
#: A line that is a gRPC address: ``HOST:PORT`` (what ``serve --grpc-port`` prints after the
#: HTTP URL) or ``grpc://HOST:PORT``.
_ADDRESS = re.compile(r"(?:grpcs?://)?([\w.\-]+:\d+)")


@dataclass(frozen=True, slots=True)
class Setup:
    """A gRPC server to measure: how to start it."""

    name: str
    command: tuple[str, ...]


SETUPS: dict[str, Setup] = {
    "ours": Setup(
        "ours",
        (
            sys.executable,
            "-m",
            "a2a_actors.cli",
            "serve",
            "examples.echo:agent",
            "--port",
            "0",
            "--grpc-port",
            "0",
            "--backend",
            "asyncio",
        ),
    ),
    "sdk": Setup("sdk", (sys.executable, str(SERVERS / "sdk_grpc_echo.py"))),
}
TRIVIAL = Setup("trivial", (sys.executable, str(SERVERS / "sdk_grpc_echo.py"), "--trivial"))


@dataclass(slots=True)
class Server:
    """A started server subprocess and its gRPC ``host:port``."""

    setup: Setup
    process: subprocess.Popen[bytes]
    target: str


def _grpc_address(text: str) -> str | None:
    found = _ADDRESS.fullmatch(text)
    return found.group(1) if found else None


@contextmanager
def running_server(setup: Setup, pinning: Pinning) -> Iterator[Server]:
    """Start ``setup`` pinned to the server CPU; yield it once it names its gRPC address."""
    with started_process(setup.name, setup.command, pinning, _grpc_address) as started:
        process, target, _ = started
        yield Server(setup, process, target)


@dataclass(frozen=True, slots=True)
class Point:
    name: str
    setup: Setup
    workload: str
    concurrency: int


def measure(point: Point, pinning: Pinning, duration: float, warmup: float, workers: int) -> Merged:
    """Run the load of ``point`` against a fresh server (the first load process samples the
    server's CPU time around its measured window)."""
    with running_server(point.setup, pinning) as server:
        return run_load(
            server.target,
            point.workload,
            point.concurrency,
            warmup,
            duration,
            workers=workers,
            taskset=pinning.wrap([], pinning.loadgen) if pinning.enabled else (),
            server_pid=server.process.pid,
        )


def result_of(
    point: Point, merged: Merged, pinning: Pinning, env: dict[str, str]
) -> dict[str, Any]:
    window = merged.window_s or 1.0
    p50, p99 = merged.percentile(0.5), merged.percentile(0.99)
    return {
        "name": point.name,
        "setup": point.setup.name,
        "workload": point.workload,
        "concurrency": point.concurrency,
        "requests_per_s": round(merged.completed / window, 1),
        "p50_ms": None if p50 != p50 else round(p50, 3),
        "p99_ms": None if p99 != p99 else round(p99, 3),
        "errors": merged.errors,
        "completed": merged.completed,
        "duration_s": round(window, 3),
        "loadgen": "grpc.aio",
        "cpu_pinning": pinning.describe(),
        "server_cpu_pct": (
            None if merged.server_cpu_s is None else round(100 * merged.server_cpu_s / window, 1)
        ),
        "loadgen_cpu_pct": round(100 * merged.cpu_s / window, 1),
        "versions": env,
    }


def ratios(results: list[dict[str, Any]], env: dict[str, str]) -> list[dict[str, Any]]:
    """``grpc.ratio``: ours vs sdk on requests/s, per workload and concurrency."""
    index = {(r["setup"], r["workload"], r["concurrency"]): r for r in results}
    out = []
    for (setup, workload, concurrency), mine in index.items():
        other = index.get(("sdk", workload, concurrency))
        if setup != "ours" or other is None or not other["requests_per_s"]:
            continue
        ratio = mine["requests_per_s"] / other["requests_per_s"]
        out.append(
            {
                "name": "grpc.ratio",
                "workload": workload,
                "setup": "ours",
                "versus": "sdk",
                "concurrency": concurrency,
                "metric": "requests_per_s",
                "ratio": round(ratio, 3),
                "target": f">= {TARGET_RATIO}",
                "met": ratio >= TARGET_RATIO,
                "versions": env,
            }
        )
    return out


def _int_list(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def _name_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = make_parser(__doc__.splitlines()[0] if __doc__ else "bench_grpc")
    parser.add_argument("--setups", type=_name_list, default=list(SETUPS))
    parser.add_argument("--workloads", type=_name_list, default=list(WORKLOADS))
    parser.add_argument("--concurrency", type=_int_list, default=None, help="callers")
    parser.add_argument("--duration", type=float, default=None, help="seconds per point")
    parser.add_argument("--warmup", type=float, default=None, help="seconds before each point")
    parser.add_argument("--workers", type=int, default=None, help="load processes")
    parser.add_argument("--no-pin", action="store_true", help="do not use taskset")
    parser.add_argument("--no-ceiling", action="store_true", help="skip grpc.loadgen-ceiling")
    args = parser.parse_args(argv)

    unknown = [n for n in args.setups if n not in SETUPS]
    unknown += [w for w in args.workloads if w not in WORKLOADS]
    if unknown:
        parser.error(f"unknown setups/workloads: {unknown}")
    concurrency = args.concurrency or ([4] if args.quick else [16, 64])
    duration = args.duration or (1.0 if args.quick else DURATION_S)
    warmup = args.warmup if args.warmup is not None else (0.3 if args.quick else 1.0)
    pinning = choose_pinning(not args.no_pin)
    workers = args.workers or (len(pinning.loadgen) if pinning.enabled else 1)
    env = versions("a2a-sdk", "grpcio", "protobuf")

    points = []
    if not args.no_ceiling:
        points += [
            Point("grpc.loadgen-ceiling", TRIVIAL, w, max(concurrency)) for w in args.workloads
        ]
    points += [
        Point(f"grpc.{w}", SETUPS[s], w, c)
        for s in args.setups
        for w in args.workloads
        for c in concurrency
    ]
    results = []
    failed = False
    for point in points:
        try:
            merged = measure(point, pinning, duration, warmup, workers)
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            print(
                f"{point.setup.name} {point.workload} c={point.concurrency}: {exc}", file=sys.stderr
            )
            failed = True
            continue
        for sample in merged.samples:
            print(f"{point.setup.name} {point.workload}: {sample}", file=sys.stderr)
        result = result_of(point, merged, pinning, env)
        print(
            f"  {point.setup.name} {point.workload} c={point.concurrency}: "
            f"{result['requests_per_s']:,.0f}/s p99 {result['p99_ms']} ms, "
            f"errors {result['errors']}",
            file=sys.stderr,
            flush=True,
        )
        results.append(result)
        emit(result, args.json)
    for ratio in ratios([r for r in results if r["name"] != "grpc.loadgen-ceiling"], env):
        emit(ratio, args.json)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
