"""The gRPC load generator of ``bench_grpc.py``: closed-loop ``grpc.aio`` callers in processes.

:func:`run_load` starts ``workers`` load processes (this file run as a script), pinned to the
load-generator CPUs, each with its share of the ``concurrency`` callers on one HTTP/2
channel, and merges what they report. Each caller sends its next call as soon as the previous
answer is complete (a closed loop), for ``warmup`` seconds and then ``duration`` seconds that
are measured. Requests are built and serialized once (the same bytes for every call and
every server, ``a2a-version: 1.0`` metadata); answers are parsed and checked:

* ``send``: a unary SendMessage whose answer is a COMPLETED Task (or a Message);
* ``stream``: a SendStreamingMessage read to its end, the last event COMPLETED.

A failed call, or an answer that is not that, is an error (the first few are reported as
``samples``). A worker prints one JSON object: ``completed``, ``errors``, ``latencies_ms``
(of the calls that ended in the measured window), ``window_s``, ``cpu_s`` (its CPU time in
the window), ``server_cpu_s`` (the server's, with ``--server-pid``) and ``samples``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TEXT = "hello from the benchmark"
MESSAGE_ID = "6f1c3c1e-0000-4000-8000-000000000001"
_SERVICE = "/lf.a2a.v1.A2AService/"
_MAX_SAMPLES = 5
_CALL_TIMEOUT_S = 30.0


@dataclass(slots=True)
class Merged:
    """The load processes' reports, merged."""

    completed: int = 0
    errors: int = 0
    window_s: float = 0.0
    cpu_s: float = 0.0
    server_cpu_s: float | None = None
    latencies_ms: list[float] = field(default_factory=list)
    samples: list[str] = field(default_factory=list)

    def percentile(self, q: float) -> float:
        """The ``q``-quantile of the latencies (nearest rank), NaN without any."""
        if not self.latencies_ms:
            return math.nan
        ordered = sorted(self.latencies_ms)
        return ordered[max(1, math.ceil(q * len(ordered))) - 1]


def run_load(
    target: str,
    workload: str,
    concurrency: int,
    warmup: float,
    duration: float,
    *,
    workers: int,
    taskset: Sequence[str] = (),
    server_pid: int | None = None,
) -> Merged:
    """Run ``workers`` load processes against ``target`` and merge their reports.

    ``taskset`` prefixes each command (``("taskset", "-c", "1")``) to pin it. The first
    process samples the CPU time of ``server_pid`` around its measured window.

    Raises:
        RuntimeError: A load process failed or printed no report.
    """
    workers = max(1, min(workers, concurrency))
    shares = [concurrency // workers + (i < concurrency % workers) for i in range(workers)]
    processes = [
        subprocess.Popen(
            [
                *taskset,
                sys.executable,
                str(Path(__file__)),
                "--target",
                target,
                "--workload",
                workload,
                "--concurrency",
                str(share),
                "--warmup",
                str(warmup),
                "--duration",
                str(duration),
                *(["--server-pid", str(server_pid)] if server_pid and i == 0 else []),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, share in enumerate(shares)
    ]
    merged = Merged()
    failures = []
    for process in processes:
        out, err = process.communicate(timeout=warmup + duration + 60)
        if process.returncode != 0 or not out.strip():
            failures.append(f"exit {process.returncode}: {err[-2000:]}")
            continue
        report = json.loads(out.strip().splitlines()[-1])
        merged.completed += report["completed"]
        merged.errors += report["errors"]
        merged.window_s = max(merged.window_s, report["window_s"])
        merged.cpu_s += report["cpu_s"]
        if report.get("server_cpu_s") is not None:
            merged.server_cpu_s = report["server_cpu_s"]
        merged.latencies_ms.extend(report["latencies_ms"])
        merged.samples.extend(report["samples"])
    if failures:
        raise RuntimeError("load process failed: " + "; ".join(failures))
    return merged


# --------------------------------------------------------------------------- one process


def _request() -> bytes:
    from a2a.types import a2a_pb2

    message = a2a_pb2.Message(
        message_id=MESSAGE_ID, role=a2a_pb2.ROLE_USER, parts=[a2a_pb2.Part(text=TEXT)]
    )
    return a2a_pb2.SendMessageRequest(message=message).SerializeToString()


def _send_failure(raw: bytes) -> str | None:
    from a2a.types import a2a_pb2

    reply = a2a_pb2.SendMessageResponse.FromString(raw)
    if reply.HasField("message"):
        return None
    if reply.task.status.state != a2a_pb2.TASK_STATE_COMPLETED:
        return f"task not completed: {a2a_pb2.TaskState.Name(reply.task.status.state)}"
    return None


def _stream_failure(last: bytes | None) -> str | None:
    from a2a.types import a2a_pb2

    if last is None:
        return "empty stream"
    event = a2a_pb2.StreamResponse.FromString(last)
    kind = event.WhichOneof("payload")
    if kind == "message":
        return None
    state = (
        event.status_update.status.state
        if kind == "status_update"
        else event.task.status.state
        if kind == "task"
        else None
    )
    if state != a2a_pb2.TASK_STATE_COMPLETED:
        return f"stream did not complete: last event {kind}"
    return None


def _cpu_seconds(pid: int | None) -> float | None:
    """User+system CPU seconds of process ``pid`` (Linux ``/proc``), or None."""
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _load(
    target: str,
    workload: str,
    concurrency: int,
    warmup: float,
    duration: float,
    server_pid: int | None,
) -> dict[str, Any]:
    import grpc
    import grpc.aio

    request = _request()
    metadata = (("a2a-version", "1.0"),)
    latencies: list[float] = []
    samples: list[str] = []
    counts = {"completed": 0, "errors": 0}
    loop = asyncio.get_running_loop()
    async with grpc.aio.insecure_channel(target) as channel:
        await channel.channel_ready()
        send = channel.unary_unary(_SERVICE + "SendMessage")
        stream = channel.unary_stream(_SERVICE + "SendStreamingMessage")
        start = loop.time()
        window_start, window_end = start + warmup, start + warmup + duration

        async def one() -> str | None:
            if workload == "send":
                raw = await send(request, metadata=metadata, timeout=_CALL_TIMEOUT_S)
                return _send_failure(raw)
            last = None
            async for raw in stream(request, metadata=metadata, timeout=_CALL_TIMEOUT_S):
                last = raw
            return _stream_failure(last)

        async def caller() -> None:
            while True:
                began = loop.time()
                if began >= window_end:
                    return
                try:
                    failure = await one()
                except grpc.aio.AioRpcError as exc:
                    failure = f"{exc.code().name}: {exc.details()}"
                ended = loop.time()
                if not window_start <= ended < window_end:
                    continue
                if failure is None:
                    counts["completed"] += 1
                    latencies.append((ended - began) * 1000)
                else:
                    counts["errors"] += 1
                    if len(samples) < _MAX_SAMPLES:
                        samples.append(failure)

        async def cpu_window() -> tuple[float, float | None]:
            await asyncio.sleep(window_start - loop.time())
            before, server_before = time.process_time(), _cpu_seconds(server_pid)
            await asyncio.sleep(window_end - loop.time())
            server_after = _cpu_seconds(server_pid)
            server = (
                None
                if server_before is None or server_after is None
                else server_after - server_before
            )
            return time.process_time() - before, server

        cpu = asyncio.ensure_future(cpu_window())
        await asyncio.gather(*(caller() for _ in range(concurrency)))
        cpu_s, server_cpu_s = await cpu
    return {
        **counts,
        "latencies_ms": [round(v, 3) for v in latencies],
        "window_s": duration,
        "cpu_s": cpu_s,
        "server_cpu_s": server_cpu_s,
        "samples": samples,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="one gRPC load process (see bench_grpc.py)")
    parser.add_argument("--target", required=True, help="host:port")
    parser.add_argument("--workload", choices=("send", "stream"), required=True)
    parser.add_argument("--concurrency", type=int, required=True)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--server-pid", type=int, default=None, help="sample its CPU time")
    args = parser.parse_args(argv)
    report = asyncio.run(
        _load(
            args.target,
            args.workload,
            args.concurrency,
            args.warmup,
            args.duration,
            args.server_pid,
        )
    )
    print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
