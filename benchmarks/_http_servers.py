"""The servers under test of ``bench_http.py``: setups, CPU pinning, start and stop.

A :class:`Setup` says how to start one server (``SETUPS``: ours on asyncio and trio, the
official a2a-sdk, the bare Quart and ASGI routes; ``TRIVIAL`` for the load-generator
ceiling). :func:`running_server` starts it in a subprocess pinned with ``taskset`` (see
:func:`choose_pinning`), reads its URL from stdout and stops it by its PID afterwards.
"""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
SERVERS = HERE / "servers"
REPO = HERE.parent

STARTUP_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class Setup:
    """A server to measure: how to start it and where its routes are."""

    name: str
    backend: str
    command: tuple[str, ...]
    send_path: str = "/"
    stream_path: str = "/"

    def path(self, workload: str) -> str:
        return self.stream_path if workload == "stream" else self.send_path


def _ours(backend: str) -> Setup:
    command = (sys.executable, "-m", "a2a_actors.cli", "serve", "examples.echo:agent")
    return Setup(f"ours-{backend}", backend, (*command, "--port", "0", "--backend", backend))


def _bare(backend: str, raw: bool = False) -> Setup:
    command = (sys.executable, str(SERVERS / "bare_quart.py"), "--backend", backend)
    return Setup(
        f"bare-{'asgi' if raw else 'quart'}-{backend}",
        backend,
        (*command, "--raw-asgi") if raw else command,
        stream_path="/stream",
    )


SETUPS: dict[str, Setup] = {
    "ours-asyncio": _ours("asyncio"),
    "ours-trio": _ours("trio"),
    "sdk": Setup("sdk", "asyncio", (sys.executable, str(SERVERS / "sdk_echo.py"))),
    "bare-quart-asyncio": _bare("asyncio"),
    "bare-quart-trio": _bare("trio"),
    # Not run by default: what Hypercorn does without Quart (how much Quart itself costs).
    "bare-asgi-asyncio": _bare("asyncio", raw=True),
    "bare-asgi-trio": _bare("trio", raw=True),
}
TRIVIAL = Setup(
    "trivial", "asyncio", (sys.executable, str(SERVERS / "trivial.py")), stream_path="/stream"
)
DEFAULT_SETUPS = ("bare-quart-asyncio", "ours-asyncio", "sdk", "bare-quart-trio", "ours-trio")
QUICK_SETUPS = ("bare-quart-asyncio", "ours-asyncio", "sdk", "ours-trio")


# --------------------------------------------------------------------------- CPUs


@dataclass(frozen=True, slots=True)
class Pinning:
    """Which CPUs the server and the load generator run on (empty: not pinned)."""

    server: tuple[int, ...]
    loadgen: tuple[int, ...]

    @property
    def enabled(self) -> bool:
        return bool(self.server)

    def describe(self) -> str:
        if not self.enabled:
            return "none"
        return f"server:{_cpu_list(self.server)} loadgen:{_cpu_list(self.loadgen)}"

    def wrap(self, command: Sequence[str], cpus: tuple[int, ...]) -> list[str]:
        if not self.enabled:
            return list(command)
        return ["taskset", "-c", _cpu_list(cpus), *command]

    @contextmanager
    def applied(self, cpus: tuple[int, ...]) -> Iterator[None]:
        """Run the block with this process on ``cpus``, as ``taskset`` would: the processes
        it starts meanwhile inherit them. The process's own CPUs come back afterwards."""
        if not self.enabled:
            yield
            return
        before = os.sched_getaffinity(0)
        os.sched_setaffinity(0, cpus)
        try:
            yield
        finally:
            os.sched_setaffinity(0, before)


def _cpu_list(cpus: Sequence[int]) -> str:
    if len(cpus) > 1 and list(cpus) == list(range(cpus[0], cpus[-1] + 1)):
        return f"{cpus[0]}-{cpus[-1]}"
    return ",".join(str(cpu) for cpu in cpus)


def choose_pinning(enabled: bool) -> Pinning:
    """Server on the first CPU, load generator on the rest; none without taskset or 2 CPUs."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = list(range(os.cpu_count() or 1))
    if not enabled or len(cpus) < 2 or shutil.which("taskset") is None:
        return Pinning((), ())
    return Pinning((cpus[0],), tuple(cpus[1:]))


def _cpu_seconds(pid: int) -> float | None:
    """User+system CPU seconds of process ``pid`` (Linux ``/proc``), or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# --------------------------------------------------------------------------- servers


@dataclass(slots=True)
class Server:
    """A started server subprocess."""

    setup: Setup
    process: subprocess.Popen[bytes]
    url: str
    log: Any

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or "127.0.0.1"

    @property
    def port(self) -> int:
        port = urlsplit(self.url).port
        assert port is not None
        return port


def _log_tail(log: Any, limit: int = 2000) -> str:
    log.flush()
    log.seek(0)
    data: bytes = log.read()
    return data[-limit:].decode(errors="replace")


def read_stdout_line(
    process: subprocess.Popen[bytes], timeout: float, pick: Callable[[str], str | None]
) -> str | None:
    """The first stdout line (stripped) that ``pick`` turns into a value, within ``timeout``
    seconds; None when the server exits or the time is up."""
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        buffer = b""
        while time.monotonic() < deadline:
            if not selector.select(deadline - time.monotonic()):
                continue
            chunk = os.read(process.stdout.fileno(), 4096)
            if not chunk:
                return None  # the server exited
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                value = pick(line.decode(errors="replace").strip())
                if value is not None:
                    return value
    return None


def _url(text: str) -> str | None:
    return text.rstrip("/") if text.startswith("http://") else None


def _read_url(process: subprocess.Popen[bytes], timeout: float) -> str | None:
    """The first stdout line that is a URL, within ``timeout`` seconds."""
    return read_stdout_line(process, timeout, _url)


def stop_process(process: subprocess.Popen[bytes], timeout: float = STOP_TIMEOUT_S) -> None:
    """SIGTERM ``process`` (by its PID), then SIGKILL if it has not exited in ``timeout``."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def started_process(
    name: str, command: Sequence[str], pinning: Pinning, pick: Callable[[str], str | None]
) -> Iterator[tuple[subprocess.Popen[bytes], str, Any]]:
    """Start ``command`` pinned to the server CPU; yield the process, the first stdout line
    ``pick`` accepts and the stderr log once it prints that line; stop it on exit."""
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1")
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            pinning.wrap(command, pinning.server),
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
        )
        try:
            value = read_stdout_line(process, STARTUP_TIMEOUT_S, pick)
            if value is None:
                raise RuntimeError(f"{name} did not start:\n{_log_tail(log)}")
            yield process, value, log
        finally:
            stop_process(process)
            assert process.stdout is not None
            process.stdout.close()


@contextmanager
def running_server(setup: Setup, pinning: Pinning) -> Iterator[Server]:
    """Start ``setup`` pinned to the server CPU, yield it once it prints its URL, stop it."""
    with started_process(setup.name, setup.command, pinning, _url) as (process, url, log):
        yield Server(setup, process, url, log)
