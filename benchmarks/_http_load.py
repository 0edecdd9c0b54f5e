"""The load of ``bench_http.py``: the requests, and the two load generators that send them.

Each generator sends every server the same request, a JSON-RPC SendMessage (or
SendStreamingMessage) of :data:`TEXT`. :func:`run_wrk` measures with ``wrk`` and the Lua
script of :func:`wrk_script` (the bytes of :func:`request_body` every time; an error is
what :func:`response_failure` says). :func:`run_builtin` measures with the ``a2a-actors
bench`` generator (:mod:`a2a_actors.loadtest`, through its Python API), which gives each
message a fresh ``messageId`` and checks every answer as that tool does (its failures
include those of :func:`response_failure`). Both report a :class:`Measured`, with the
server's CPU time sampled during the window.
"""

from __future__ import annotations

import http.client
import json
import math
import resource
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _http_servers import Pinning, Server, _cpu_seconds

from a2a_actors.loadtest._engine import Load as GeneratorLoad
from a2a_actors.loadtest._requests import load_message
from a2a_actors.loadtest._runner import Options, measure
from a2a_actors.loadtest._target import BenchError, Endpoint

WORKLOADS = ("send", "stream")
#: The user text of every request.
TEXT = "hello from bench_http"
#: The longest one exchange of the built-in generator may take (as wrk's ``--timeout 10s``).
_TIMEOUT_S = 10.0


# --------------------------------------------------------------------------- requests


def request_body(workload: str) -> bytes:
    """The JSON-RPC request of ``workload``: the same bytes for every server."""
    method = "SendStreamingMessage" if workload == "stream" else "SendMessage"
    message = {
        "messageId": "6f1c3c1e-0000-4000-8000-000000000001",
        "role": "ROLE_USER",
        "parts": [{"text": TEXT}],
    }
    payload = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": message}}
    return json.dumps(payload, separators=(",", ":")).encode()


def request_headers(workload: str) -> dict[str, str]:
    """The headers of every request of ``workload`` (besides Host and Content-Length)."""
    headers = {"Content-Type": "application/json", "A2A-Version": "1.0"}
    if workload == "stream":
        headers["Accept"] = "text/event-stream"
    return headers


def response_failure(workload: str, status: int, body: bytes) -> str | None:
    """Why a response counts as an error, or None when it is a success."""
    if status != 200:
        return f"HTTP {status}"
    if b'"error"' in body:
        return f"error body: {body[:300]!r}"
    if workload == "stream" and b"TASK_STATE_COMPLETED" not in body:
        return f"stream did not complete: {body[:300]!r}"
    return None


def check_once(server: Server, workload: str) -> str | None:
    """Send one request of ``workload``; why it failed, or None when it worked."""
    connection = http.client.HTTPConnection(server.host, server.port, timeout=30)
    try:
        connection.request(
            "POST",
            server.setup.path(workload),
            body=request_body(workload),
            headers=request_headers(workload),
        )
        response = connection.getresponse()
        return response_failure(workload, response.status, response.read())
    except OSError as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        connection.close()


# --------------------------------------------------------------------------- load generators


@dataclass(frozen=True, slots=True)
class Load:
    """What one measured point asks of the load generator."""

    workload: str
    connections: int
    duration: float
    warmup: float


@dataclass(slots=True)
class Measured:
    """What a load generator reports for one point."""

    completed: int  #: successful responses (or streams) completed in the window
    duration_s: float  #: the window's length
    errors: int
    p50_ms: float  #: NaN when nothing completed
    p99_ms: float
    loadgen_cpu_s: float | None = None
    server_cpu_s: float | None = None
    samples: tuple[str, ...] = ()


def _sample_server_cpu(server: Server, start: float, stop: float) -> float | None:
    """Sleep until wall time ``start``, read the server's CPU time, again at ``stop``."""
    time.sleep(max(0.0, start - time.time()))
    before = _cpu_seconds(server.process.pid)
    time.sleep(max(0.0, stop - time.time()))
    after = _cpu_seconds(server.process.pid)
    if before is None or after is None:
        return None
    return after - before


class _ServerCpu:
    """A progress callback of the built-in generator that samples the server's CPU time.

    The generator calls it about every 0.2 s with the fraction of warm-up plus window
    elapsed; the samples taken inside the window give the server's CPU seconds per second.
    """

    def __init__(self, pid: int, window_from: float) -> None:
        self._pid = pid
        self._window_from = window_from
        self._samples: list[tuple[float, float]] = []

    def __call__(self, label: str, fraction: float) -> None:
        if fraction >= self._window_from:
            cpu = _cpu_seconds(self._pid)
            if cpu is not None:
                self._samples.append((time.monotonic(), cpu))

    def share(self) -> float | None:
        """CPU seconds per second between the first and last sample; None without two."""
        if len(self._samples) < 2:
            return None
        (t0, cpu0), (t1, cpu1) = self._samples[0], self._samples[-1]
        return (cpu1 - cpu0) / (t1 - t0) if t1 > t0 else None


def run_builtin(server: Server, load: Load, pinning: Pinning, workers: int) -> Measured:
    """Measure with the ``a2a-actors bench`` generator (:mod:`a2a_actors.loadtest`).

    ``workers`` generator processes share the connections, each in a closed loop of one
    request per connection; they run on the load-generator CPUs (they inherit this
    process's CPUs, set as ``taskset`` would for the duration). Every answer is checked
    (a JSON-RPC error, a stream that does not end COMPLETED, a wrong state are errors).
    """
    path = server.setup.path(load.workload)
    endpoint = Endpoint(
        name=server.setup.name,
        url=server.url + path,
        binding="jsonrpc",
        host=server.host,
        port=server.port,
        path=path,
    )
    options = Options(
        workload=load.workload,
        message=load_message(TEXT, None),
        load=GeneratorLoad(
            connections=load.connections,
            concurrency=load.connections,
            rate=None,
            warmup=load.warmup,
            duration=load.duration,
            timeout=_TIMEOUT_S,
        ),
        processes=max(1, min(workers, load.connections)),
    )
    total = load.warmup + load.duration
    server_cpu = _ServerCpu(server.process.pid, load.warmup / total if total else 0.0)
    try:
        with pinning.applied(pinning.loadgen):
            tally = measure(endpoint, options, server.setup.name, server_cpu)
    except BenchError as exc:
        raise RuntimeError(f"load generator failed: {exc}") from None
    share = server_cpu.share()
    latency = tally.latency
    return Measured(
        completed=tally.ok,
        duration_s=tally.window_s or load.duration,
        errors=tally.failed,
        p50_ms=latency.percentile(50) / 1000 if latency.count else math.nan,
        p99_ms=latency.percentile(99) / 1000 if latency.count else math.nan,
        loadgen_cpu_s=tally.cpu_s,
        server_cpu_s=None if share is None else share * load.duration,
        samples=tuple(
            f"{kind}: {sample}" for kind, samples in tally.samples.items() for sample in samples
        ),
    )


_WRK_LUA = """
wrk.method = "POST"
wrk.body = [==[{body}]==]
{headers}
local stream = {stream}
local threads = {{}}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  bad = 0
end

function response(status, headers, body)
  if status ~= 200 or string.find(body, '"error"', 1, true)
     or (stream and not string.find(body, "TASK_STATE_COMPLETED", 1, true)) then
    bad = bad + 1
  end
end

function done(summary, latency, requests)
  local bad = 0
  for _, thread in ipairs(threads) do
    bad = bad + thread:get("bad")
  end
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {{"requests":%d,"duration_us":%d,"bad":%d,"socket_errors":%d,' ..
    '"p50_us":%.1f,"p99_us":%.1f}}\\n',
    summary.requests, summary.duration, bad, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
"""


def wrk_script(workload: str) -> str:
    """The generated Lua script of ``workload``: POST body, headers, error counting."""
    headers = "\n".join(
        f'wrk.headers["{name}"] = "{value}"' for name, value in request_headers(workload).items()
    )
    return _WRK_LUA.format(
        body=request_body(workload).decode(),
        headers=headers,
        stream="true" if workload == "stream" else "false",
    )


def run_wrk(server: Server, load: Load, pinning: Pinning, threads: int) -> Measured:
    """Measure with wrk (a warm-up run first; wrk takes whole seconds)."""
    url = server.url + server.setup.path(load.workload)
    threads = max(1, min(threads, load.connections))
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "a2a.lua"
        script.write_text(wrk_script(load.workload))

        def wrk(seconds: int) -> list[str]:
            command = ["wrk", f"-t{threads}", f"-c{load.connections}", f"-d{seconds}s"]
            command += ["--latency", "--timeout", "10s", "-s", str(script), url]
            return pinning.wrap(command, pinning.loadgen)

        if load.warmup > 0:
            subprocess.run(
                wrk(max(1, round(load.warmup))), capture_output=True, check=True, timeout=120
            )
        seconds = max(1, round(load.duration))
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.time()
        process = subprocess.Popen(wrk(seconds), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        server_cpu = _sample_server_cpu(server, started + 0.2, started + 0.2 + seconds * 0.9)
        server_cpu = None if server_cpu is None else server_cpu / 0.9
        out, err = process.communicate(timeout=seconds + 120)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        wrk_cpu = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
    if process.returncode != 0:
        raise RuntimeError(f"wrk failed: {err.decode(errors='replace')}")
    line = next((text for text in out.decode().splitlines() if text.startswith("WRKJSON ")), None)
    if line is None:
        raise RuntimeError(f"no result from wrk:\n{out.decode(errors='replace')}")
    data = json.loads(line.removeprefix("WRKJSON "))
    return Measured(
        completed=data["requests"],
        duration_s=data["duration_us"] / 1e6 or float(seconds),
        errors=data["bad"] + data["socket_errors"],
        p50_ms=data["p50_us"] / 1000,
        p99_ms=data["p99_us"] / 1000,
        loadgen_cpu_s=wrk_cpu,
        server_cpu_s=server_cpu,
    )


def _wrk_version() -> str:
    try:
        out = subprocess.run(["wrk", "--version"], capture_output=True, text=True, timeout=10)
    except OSError:
        return "unknown"
    text = (out.stdout or out.stderr).strip().splitlines()
    return text[0].split(" [")[0].removeprefix("wrk ") if text else "unknown"
