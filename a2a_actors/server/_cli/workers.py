"""``a2a-actors serve MODULE:ATTR --workers N``: N node processes of one cluster on one
host, sharing one port.

Theory of operation
-------------------
The parent serves nothing itself; it binds, starts and supervises:

* **one port for all.** The parent binds the address (``--port 0`` picks one port, the
  same for every worker) and hands each worker a socket of its own on it, inherited as a
  file descriptor. On Linux each worker's socket is a separate ``SO_REUSEPORT`` socket,
  so the kernel spreads new connections evenly over the workers; a socket the parent
  keeps bound (never listening, so it gets no connections) holds the port while workers
  come and go. Elsewhere every worker gets the parent's one listening socket.
* **one gRPC port too**, with ``--grpc-port``: the parent binds and holds it the same way
  and prints it after the URL; each worker binds it with ``SO_REUSEPORT``
  (``GrpcOptions.shared``), Linux only.
* **one cluster.** With ``--cluster URL`` the workers join it. Without, the parent first
  starts a private nats-server (:class:`~a2a_actors.cluster.NatsServer`, from the
  ``cluster`` extra) on a free 127.0.0.1 port with its store in a new temporary
  directory, and stops it (and removes the directory) after the last worker has stopped.
* **node ids** ``<base>-w1 … <base>-wN``, the base being ``--node-id`` or the parent's
  ``HOST-PID``.
* **each worker** is ``python -m a2a_actors.server._cli.worker_process``, handed the parent's
  parsed ``serve`` arguments (pickled, on its stdin) with ``--workers 1``, its socket,
  the cluster's URLs and its node id: it is ``a2a-actors serve --cluster`` on that socket,
  with every other flag as given. It runs in a session of its own (a Ctrl-C in the
  terminal reaches the parent only, which stops the workers in order) and asks the kernel
  to SIGTERM it if the parent dies (Linux).
* **ready** when every worker has printed its URL: the parent then reports the one URL.
  A worker that exits before it serves (at the start or when restarted) ends the whole
  command: the others are stopped and :class:`WorkerFailedError` says which one failed
  (its own error is on stderr above).
* **a worker that dies while serving is reported** on stderr (``worker NAME (pid N)
  exited with status S; restarting it``) **and restarted** with the same node id and a new
  socket on the port. After a crash its new incarnation waits for the old lease to expire
  before it serves (what the cluster does for any node back with the same id; meanwhile
  the other nodes settle the old one's tasks); its socket listens only once it serves, so
  new connections go to the other workers meanwhile. Connections the dead worker had
  accepted are lost with it, as with any crashed server.
* **stopping** (cancellation; SIGINT/SIGTERM in the CLI) SIGTERMs every worker at once,
  waits up to :data:`STOP_S` for each (then SIGKILL), and only then stops the
  nats-server, so the workers' last writes reach it.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import logging
import os
import pickle
import re
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import AsyncExitStack, contextmanager

import anyio
import anyio.abc
from anyio.abc import TaskStatus

from a2a_actors.cluster._errors import ClusterExtraMissingError, require_nats
from a2a_actors.cluster._nats_server import NatsServer, NatsServerError, find_nats_server
from a2a_actors.server._addresses import authority
from a2a_actors.server._cli import values as cli_values
from a2a_actors.server._cli.parser import add_serve_parser
from a2a_actors.server._config.config import ClusterOptions

__all__ = (
    "STOP_S",
    "WorkerFailedError",
    "check",
    "inherited_socket",
    "listen_failure",
    "run",
    "serve_workers",
)

logger = logging.getLogger("a2a_actors.server")

#: Seconds a worker has to stop after SIGTERM before it is SIGKILLed.
STOP_S = 30.0

#: Each worker gets a balanced socket of its own (Linux) rather than a shared one.
_BALANCED = sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")
_BACKLOG = 1024


class WorkerFailedError(RuntimeError):
    """A worker exited before it served (at the start, or when it was restarted)."""


def check(args: argparse.Namespace) -> None:
    """Refuse what ``--workers N`` (N > 1) cannot do, before anything starts.

    Raises:
        ValueError: trio, ``--store``, ``--grpc-port`` without ``SO_REUSEPORT``, or a node
            id too long for ``-wN``.
        ClusterExtraMissingError: The ``cluster`` extra is not installed.
    """
    if args.workers == 1:
        return
    if args.backend != "asyncio":
        raise ValueError("--workers needs --backend asyncio (its nodes are a cluster on nats-py)")
    if args.store != "memory":
        raise ValueError("--workers keeps tasks in NATS JetStream (a cluster); it takes no --store")
    if args.grpc_port is not None and not _BALANCED:
        raise ValueError("--grpc-port with --workers needs SO_REUSEPORT (Linux)")
    base = args.node_id or _default_base()
    if len(f"{base}-w{args.workers}") > 64:  # ClusterOptions' limit
        raise ValueError(f"--node-id {base!r} is too long for worker ids ({base}-w{args.workers})")
    try:
        require_nats()
        if not args.cluster:
            find_nats_server()
    except ClusterExtraMissingError:
        raise ClusterExtraMissingError(cli_values.missing_extra("--workers", "cluster")) from None


def listen_failure(exc: OSError, host: str, port: int) -> str:
    """What a port that cannot be bound reads as (``serve``, with or without workers):
    ``cannot listen on HOST:PORT: <why>``, or ``cannot listen on gRPC port HOST:PORT: <why>``
    when it is the gRPC one (the error then carries ``grpc_address``: see
    :class:`~a2a_actors.server._grpc.server.GrpcServer` and :func:`_serve`)."""
    grpc_address = getattr(exc, "grpc_address", None)
    if grpc_address is not None:
        return f"cannot listen on gRPC port {grpc_address}: {exc}"
    return f"cannot listen on {authority(host, port)}: {exc}"


def _default_base() -> str:
    # the parent's HOST-PID, as a single node's default id (cluster.member.default_node_id,
    # which needs nats-py to import)
    host = re.sub(r"[^A-Za-z0-9_-]+", "-", socket.gethostname()).strip("-")[:40] or "node"
    return f"{host}-{os.getpid()}"


def inherited_socket(args: argparse.Namespace) -> socket.socket | None:
    """A worker's socket, handed down by its parent; None when not a worker."""
    fd: int | None = args.listen_fd
    return None if fd is None else socket.socket(fileno=fd)


def run(args: argparse.Namespace) -> int:
    """Run ``args.workers`` workers until SIGINT or SIGTERM; the exit status.

    Prints the one URL on stdout once every worker serves.
    """
    return anyio.run(_run_until_signal, args, backend="asyncio")


async def _run_until_signal(args: argparse.Namespace) -> int:
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        try:
            async with anyio.create_task_group() as tg:

                async def stop_on_signal() -> None:
                    async for _ in signals:
                        break
                    tg.cancel_scope.cancel()

                tg.start_soon(stop_on_signal)
                served: _Served = await tg.start(_serve, args)
                print(served.url, flush=True)
                if served.grpc is not None:
                    print(served.grpc, flush=True)  # its own line, after the URL
        except BaseExceptionGroup as group:
            failed = group.subgroup((WorkerFailedError, OSError, NatsServerError))
            if failed is None:
                raise
            leaf: BaseException = failed
            while isinstance(leaf, BaseExceptionGroup):
                leaf = leaf.exceptions[0]
            if isinstance(leaf, OSError):  # the only one: a failed spawn is a worker's
                said = listen_failure(leaf, args.host, args.port)
            elif isinstance(leaf, NatsServerError):
                said = f"cannot start the private nats-server: {leaf}"
            else:
                said = str(leaf)
            print(f"a2a-actors serve: {said}", file=sys.stderr)
            return 1
    return 0


async def serve_workers(
    target: str,
    *,
    workers: int,
    host: str = "127.0.0.1",
    port: int = 0,
    cluster: ClusterOptions | None = None,
    options: Sequence[str] = (),
    task_status: TaskStatus[str] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``target`` from ``workers`` node processes sharing ``host:port``, until
    cancelled (then every worker stops gracefully, then the private nats-server).

    Args:
        target: ``MODULE:ATTR``, as for ``a2a-actors serve`` (each worker imports it; a
            ``ServedAgent`` there carries the server configuration).
        workers: How many node processes (at least 2).
        host: The address to bind.
        port: The port; 0 picks a free one, shared by every worker.
        cluster: The cluster to join (its URLs, node id base, name, lease, replicas);
            None: a private nats-server, stopped when serving ends.
        options: More ``a2a-actors serve`` flags for every worker (``--max-tasks 100``).
        task_status: Receives the one base URL once every worker serves.

    Raises:
        ValueError: Bad flags in ``options``, or what ``--workers`` refuses (``check``).
        ClusterExtraMissingError: The ``cluster`` extra is not installed.
        WorkerFailedError: A worker exited before it served.
        OSError: The address cannot be bound.
    """
    if workers < 2:
        raise ValueError(f"serve_workers runs at least 2 workers, not {workers}")
    argv = [target, *options, "--host", host, "--port", str(port), "--workers", str(workers)]
    if cluster is not None:
        argv += ["--cluster", ",".join(cluster.urls), "--cluster-lease", str(cluster.lease_s)]
        argv += ["--cluster-replicas", str(cluster.replicas)]
        if cluster.node_id is not None:
            argv += ["--node-id", cluster.node_id]
        if cluster.cluster_name is not None:
            argv += ["--cluster-name", cluster.cluster_name]
    args = _parse_serve(argv)
    check(args)
    await _serve(args, task_status=_UrlOnly(task_status))


def _parse_serve(argv: list[str]) -> argparse.Namespace:
    # The serve command's own parser, so a worker gets exactly what the command would parse.
    parser = argparse.ArgumentParser(prog="serve_workers", exit_on_error=False)
    add_serve_parser(parser.add_subparsers())
    try:
        return parser.parse_args(["serve", *argv])
    except (argparse.ArgumentError, SystemExit) as exc:
        raise ValueError(f"serve_workers: bad options {argv!r}: {exc}") from None


@dataclasses.dataclass(frozen=True, slots=True)
class _Served:
    """What the workers serve: the one URL, and the one gRPC address
    (``grpc://host:port``) if ``--grpc-port`` was given."""

    url: str
    grpc: str | None


class _UrlOnly:
    """A task status passing on only the URL of what :func:`_serve` reports."""

    def __init__(self, status: TaskStatus[str]) -> None:
        self._status = status

    def started(self, value: _Served | None = None) -> None:
        assert value is not None
        self._status.started(value.url)


async def _serve(
    args: argparse.Namespace, *, task_status: TaskStatus[_Served] = anyio.TASK_STATUS_IGNORED
) -> None:
    base = args.node_id or _default_base()
    async with AsyncExitStack() as stack:
        port = stack.enter_context(_SharedPort.bound(args.host, args.port))  # before NATS
        grpc: str | None = None
        if args.grpc_port is not None:  # held as the HTTP port is (check: Linux only)
            grpc_host = args.grpc_host or args.host
            try:
                held = stack.enter_context(_SharedPort.bound(grpc_host, args.grpc_port))
            except OSError as exc:  # said as the gRPC port's (listen_failure)
                exc.grpc_address = authority(grpc_host, args.grpc_port)  # type: ignore[attr-defined]
                raise
            args = copy.copy(args)
            args.grpc_port, args.grpc_shared = held.port, True  # every worker binds it too
            grpc = f"grpc://{held.address}"  # what a single server prints
        urls: str | None = args.cluster
        if urls is None:
            store = stack.enter_context(tempfile.TemporaryDirectory(prefix="a2a-actors-nats-"))
            nats = await stack.enter_async_context(NatsServer.running(store))
            urls = nats.url
            logger.info("workers: private nats-server %s (pid %s, store %s)", urls, nats.pid, store)
        async with anyio.create_task_group() as tg:
            async with anyio.create_task_group() as starting:  # all at once
                for index in range(1, args.workers + 1):
                    worker = _Worker(args, urls, f"{base}-w{index}", port)
                    starting.start_soon(tg.start, worker.keep)
            task_status.started(_Served(port.url, grpc))


class _SharedPort:
    """The one address every worker serves on (see the module docstring)."""

    def __init__(self, host: str, port: int) -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._family = family
        self._host = host
        self._held = self._bind(port)
        self.port: int = self._held.getsockname()[1]
        #: ``host:port`` (``[host]:port`` for IPv6), as a gRPC address is written.
        self.address = authority(host, self.port)
        self.url = f"http://{self.address}"
        if not _BALANCED:
            self._held.listen(_BACKLOG)

    @classmethod
    @contextmanager
    def bound(cls, host: str, port: int) -> Iterator[_SharedPort]:
        shared = cls(host, port)
        try:
            yield shared
        finally:
            shared.close()

    def close(self) -> None:
        """Give the port back (the workers' own sockets are theirs)."""
        self._held.close()

    def _bind(self, port: int) -> socket.socket:
        sock = socket.socket(self._family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if _BALANCED:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.bind((self._host, port))
        except OSError:
            sock.close()
            raise
        return sock

    def for_worker(self, *, listening: bool) -> socket.socket:
        """A socket on the port for one worker: listening now, or once its server starts."""
        if not _BALANCED:
            return self._held.dup()
        sock = self._bind(self.port)
        if listening:
            sock.listen(_BACKLOG)
        return sock


class _Worker:
    """One worker slot: its process, restarted when it dies while serving."""

    def __init__(
        self, args: argparse.Namespace, urls: str, node_id: str, port: _SharedPort
    ) -> None:
        self.node_id = node_id
        self._args = args
        self._urls = urls
        self._port = port

    async def keep(self, *, task_status: TaskStatus[None]) -> None:
        """Run the worker, restarting it when it dies; reports once it first serves.

        Raises:
            WorkerFailedError: It exited before it served.
        """
        restarted = False
        while True:
            # The first start listens at once: the command's URL is printed only once every
            # worker serves. A restart listens once it serves: the others take its share.
            process = await self._spawn(listening=not restarted)
            try:
                await self._wait_serving(process)
                if restarted:
                    logger.info("worker %s is back (pid %d)", self.node_id, process.pid)
                else:
                    logger.info("worker %s serving (pid %d)", self.node_id, process.pid)
                    task_status.started()
                status = await self._wait_exit(process)
            finally:
                await _stop(process)
            logger.warning(
                "worker %s (pid %d) exited with status %s; restarting it",
                self.node_id,
                process.pid,
                status,
            )
            restarted = True

    async def _spawn(self, *, listening: bool) -> anyio.abc.Process:
        sock = self._port.for_worker(listening=listening)
        try:
            args = copy.copy(self._args)
            args.workers = 1
            args.listen_fd = sock.fileno()
            args.cluster = self._urls
            args.node_id = self.node_id
            args.worker_parent = os.getpid()
            process = await anyio.open_process(
                [sys.executable, "-m", "a2a_actors.server._cli.worker_process"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=None,  # the parent's: a worker's log and errors go where ours go
                pass_fds=(sock.fileno(),),
                start_new_session=True,
            )
        except OSError as exc:
            raise WorkerFailedError(f"cannot start worker {self.node_id}: {exc}") from exc
        finally:
            sock.close()  # the worker has its own copy
        try:
            assert process.stdin is not None
            async with process.stdin:
                await process.stdin.send(pickle.dumps(args))
        except anyio.BrokenResourceError:
            pass  # it exited at once: _wait_serving reports its status
        except BaseException:  # cancelled: stopped here, not left behind
            await _stop(process)
            raise
        return process

    async def _wait_serving(self, process: anyio.abc.Process) -> None:
        assert process.stdout is not None
        seen = b""
        while b"\n" not in seen:
            try:
                seen += await process.stdout.receive()
            except anyio.EndOfStream:
                status = await process.wait()
                raise WorkerFailedError(
                    f"worker {self.node_id} (pid {process.pid}) exited with status {status} "
                    f"before it served"
                ) from None

    async def _wait_exit(self, process: anyio.abc.Process) -> int:
        assert process.stdout is not None
        async for _ in process.stdout:  # its stdout stays drained until it exits
            pass
        return await process.wait()


async def _stop(process: anyio.abc.Process) -> None:
    """SIGTERM, then SIGKILL after :data:`STOP_S`; wait until it is gone (shielded)."""
    with anyio.CancelScope(shield=True):
        if process.returncode is None:
            process.terminate()
            with anyio.move_on_after(STOP_S):
                await process.wait()
            if process.returncode is None:
                process.kill()
        await process.wait()
        await process.aclose()
