"""The load of ``bench_http.py``: the requests, and the two load generators that send them.

The request bytes and the rule for a failed response are the same for every server and
generator. :func:`run_builtin` measures with ``servers/loadgen.py`` processes,
:func:`run_wrk` with ``wrk`` and the Lua script of :func:`wrk_script`; both report a
:class:`Measured`, with the server's CPU time sampled during the window.
"""

from __future__ import annotations

import http.client
import json
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _http_servers import SERVERS, Pinning, Server, _cpu_seconds

WORKLOADS = ("send", "stream")
#: The user text of every request.
TEXT = "hello from bench_http"


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


def raw_request(host: str, port: int, path: str, workload: str) -> bytes:
    """The complete HTTP/1.1 request bytes the built-in load generator sends."""
    body = request_body(workload)
    lines = [f"POST {path} HTTP/1.1", f"Host: {host}:{port}"]
    lines += [f"{name}: {value}" for name, value in request_headers(workload).items()]
    lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


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

    completed: int  #: responses completed in the window
    duration_s: float  #: the window's length
    errors: int
    latencies_ms: list[float]
    p50_ms: float | None = None  # when the generator computes percentiles itself (wrk)
    p99_ms: float | None = None
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


def run_builtin(server: Server, load: Load, pinning: Pinning, workers: int) -> Measured:
    """Measure with ``workers`` processes of ``servers/loadgen.py`` sharing the connections."""
    path = server.setup.path(load.workload)
    with tempfile.TemporaryDirectory() as tmp:
        request_file = Path(tmp) / "request.bin"
        request_file.write_bytes(raw_request(server.host, server.port, path, load.workload))
        workers = max(1, min(workers, load.connections))
        start_at = time.time() + 0.3 + 0.1 * workers
        processes = []
        for index in range(workers):
            share = load.connections // workers + (index < load.connections % workers)
            command = [
                sys.executable,
                str(SERVERS / "loadgen.py"),
                f"--host={server.host}",
                f"--port={server.port}",
                f"--request-file={request_file}",
                f"--connections={share}",
                f"--mode={load.workload}",
                f"--start-at={start_at}",
                f"--warmup={load.warmup}",
                f"--duration={load.duration}",
            ]
            cpus = (pinning.loadgen[index % len(pinning.loadgen)],) if pinning.enabled else ()
            processes.append(
                subprocess.Popen(
                    pinning.wrap(command, cpus), stdout=subprocess.PIPE, stdin=subprocess.DEVNULL
                )
            )
        measure_from = start_at + load.warmup
        server_cpu = _sample_server_cpu(server, measure_from, measure_from + load.duration)
        results = []
        for process in processes:
            out, _ = process.communicate(timeout=load.warmup + load.duration + 60)
            if process.returncode != 0:
                raise RuntimeError(f"load generator failed (exit {process.returncode})")
            results.append(json.loads(out))
    latencies = [us / 1000 for result in results for us in result["latencies_us"]]
    return Measured(
        completed=sum(result["completed"] for result in results),
        duration_s=load.duration,
        errors=sum(result["errors"] for result in results),
        latencies_ms=latencies,
        loadgen_cpu_s=sum(result["cpu_s"] for result in results),
        server_cpu_s=server_cpu,
        samples=tuple(sample for result in results for sample in result["error_samples"]),
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
        latencies_ms=[],
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
