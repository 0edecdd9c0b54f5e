"""``a2a-actors serve --cluster``: two node processes through the real CLI against one
nats-server, the refusals at start-up, and a node SIGKILLed mid-task."""

from __future__ import annotations

import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx
import pytest
from anyio.abc import Process

from a2a_actors.client import A2AClient
from a2a_actors.cluster import NatsServer
from a2a_actors.protocol import Task, TaskState

from .helpers import nats_server

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
CLI = Path(sys.executable).with_name("a2a-actors")
AGENT = "tests.cluster.agents:agent"


def command(*args: str) -> list[str]:
    base = [str(CLI)] if CLI.exists() else [sys.executable, "-m", "a2a_actors.cli"]
    return [*base, *args]


async def first_line(process: Process) -> str:
    assert process.stdout is not None
    data = b""
    with anyio.fail_after(30):
        while b"\n" not in data:
            try:
                data += await process.stdout.receive()
            except anyio.EndOfStream:
                assert process.stderr is not None
                errors = b"".join([chunk async for chunk in process.stderr])
                raise AssertionError(f"the node exited: {errors.decode()}") from None
    return data.partition(b"\n")[0].decode()


@asynccontextmanager
async def node(server: NatsServer, node_id: str) -> AsyncIterator[tuple[Process, str]]:
    """``a2a-actors serve --cluster`` as ``node_id``; its URL; SIGTERM (or a kill) at the end."""
    argv = command(
        "serve", AGENT, "--cluster", server.url, "--node-id", node_id, "--cluster-lease", "2"
    )
    async with await anyio.open_process(argv, cwd=ROOT) as process:
        try:
            yield process, await first_line(process)
        finally:
            if process.returncode is None:
                process.send_signal(signal.SIGTERM)
                with anyio.move_on_after(20):
                    await process.wait()
                if process.returncode is None:
                    process.kill()
                    await process.wait()


async def test_three_cli_nodes_share_a_task(tmp_path: Path) -> None:
    with anyio.fail_after(120):
        async with (
            nats_server(tmp_path) as server,
            node(server, "a") as (proc_a, url_a),
            node(server, "b") as (proc_b, url_b),
            node(server, "c") as (proc_c, url_c),
        ):
            a = await A2AClient.connect(url_a, card_cache=None)
            b = await A2AClient.connect(url_b, card_cache=None)
            c = await A2AClient.connect(url_c, card_cache=None)
            async with a, b, c:
                started = await a.send_message("spin", return_immediately=True)
                assert isinstance(started, Task)
                seen = await b.get_task(started.id)
                assert seen.status.state in (TaskState.SUBMITTED, TaskState.WORKING)
                async with c.subscribe(started.id) as events:
                    first = await events.__anext__()
                    assert first.task is not None
                    canceled = await b.cancel_task(started.id)
                    assert canceled.status.state is TaskState.CANCELED
                    rest = [event async for event in events]
                final = rest[-1].status_update
                assert final is not None
                assert final.status.state is TaskState.CANCELED
                assert (await a.get_task(started.id)).status.state is TaskState.CANCELED
                assert (await c.list_tasks()) == (await a.list_tasks())
            for process in (proc_a, proc_b, proc_c):
                process.send_signal(signal.SIGTERM)
                with anyio.fail_after(20):
                    assert await process.wait() == 0


async def test_the_card_advertises_the_public_url(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with nats_server(tmp_path) as server:
            argv = command(
                "serve", AGENT, "--cluster", server.url, "--public-url", "https://lb.example.com"
            )
            async with await anyio.open_process(argv, cwd=ROOT) as process:
                try:
                    url = await first_line(process)
                    async with httpx.AsyncClient() as http:
                        card = (await http.get(f"{url}/.well-known/agent-card.json")).json()
                    urls = [i["url"] for i in card["supportedInterfaces"]]
                    assert urls
                    assert all(u.startswith("https://lb.example.com") for u in urls)
                finally:
                    process.send_signal(signal.SIGTERM)
                    assert await process.wait() == 0


async def test_a_lost_nodes_task_fails_and_a_subscriber_elsewhere_sees_it(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(90):
        async with (
            nats_server(tmp_path) as server,
            node(server, "a") as (proc_a, url_a),
            node(server, "b") as (_, url_b),
        ):
            a = await A2AClient.connect(url_a, card_cache=None)
            b = await A2AClient.connect(url_b, card_cache=None)
            async with a, b:
                started = await a.send_message("spin", return_immediately=True)
                assert isinstance(started, Task)
                async with b.subscribe(started.id) as events:
                    first = await events.__anext__()
                    assert first.task is not None
                    proc_a.kill()  # SIGKILL: no goodbye, the lease (2 s) must expire
                    rest = [event async for event in events]
                final = rest[-1].status_update
                assert final is not None
                assert final.status.state is TaskState.FAILED
                assert final.status.message is not None
                assert "lost" in final.status.message.text
                assert (await b.get_task(started.id)).status.state is TaskState.FAILED


async def test_a_node_cut_from_nats_for_a_lease_stops_in_one_line(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with nats_server(tmp_path) as server, node(server, "a") as (process, _):
            await server.stop()  # the node cannot renew its 2 s lease
            with anyio.fail_after(30):
                assert await process.wait() == 1
            assert process.stderr is not None
            said = b"".join([chunk async for chunk in process.stderr]).decode()
            last = said.strip().splitlines()[-1]
            assert last.startswith("a2a-actors serve: stopped serving:")
            assert "lease" in last


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--backend", "trio"], "--cluster needs --backend asyncio"),
        (["--store", "sqlite:x.db"], "takes no --store"),
        (["--cluster-lease", "0"], "--cluster-lease must be positive"),
        (["--cluster-replicas", "7"], "replicas must be between 1 and 5"),
    ],
)
async def test_bad_cluster_flags_are_refused_with_one_line(
    tmp_path: Path, extra: list[str], expected: str
) -> None:
    argv = command("serve", AGENT, "--cluster", "nats://127.0.0.1:1", *extra)
    result = await anyio.run_process(argv, cwd=tmp_path, check=False, env=_pythonpath())
    assert result.returncode == 2
    lines = result.stderr.decode().strip().splitlines()
    assert len(lines) == 1
    assert expected in lines[0]


async def test_without_nats_py_the_error_names_the_extra(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['nats'] = None; from a2a_actors.cli import main; sys.exit(main())"
    )
    argv = [sys.executable, "-c", code, "serve", AGENT, "--cluster", "nats://127.0.0.1:1"]
    result = await anyio.run_process(argv, cwd=ROOT, check=False)
    assert result.returncode == 2
    lines = result.stderr.decode().strip().splitlines()
    assert len(lines) == 1
    assert "a2a-actors[cluster]" in lines[0]


async def test_an_unreachable_nats_is_said_in_one_line(tmp_path: Path) -> None:
    argv = command("serve", AGENT, "--cluster", "nats://127.0.0.1:9")
    result = await anyio.run_process(argv, cwd=ROOT, check=False)
    assert result.returncode == 1
    assert result.stdout == b""
    assert "cannot join the cluster" in result.stderr.decode()


def _pythonpath() -> dict[str, str]:
    import os

    return {**os.environ, "PYTHONPATH": str(ROOT)}


async def stderr_line(process: Process, containing: str) -> str:
    """The first stderr line that contains ``containing``."""
    assert process.stderr is not None
    data = b""
    while True:
        for line in data.decode(errors="replace").splitlines():
            if containing in line:
                return line
        data += await process.stderr.receive()


async def test_a_node_id_in_use_says_so_and_stops_at_a_signal(tmp_path: Path) -> None:
    argv = command("serve", AGENT, "--cluster", "", "--node-id", "twin", "--cluster-lease", "2")
    with anyio.fail_after(60):
        async with nats_server(tmp_path) as server, node(server, "twin"):
            argv[argv.index("--cluster") + 1] = server.url
            async with await anyio.open_process(argv, cwd=ROOT) as twin:
                line = await stderr_line(twin, "is held by a live node")
                assert line == (
                    "WARNING node id 'twin' is held by a live node; waiting for its lease to "
                    "end (at most 4 s)"
                )
                twin.send_signal(signal.SIGTERM)
                with anyio.fail_after(5):  # at once, not after the other node stops
                    assert await twin.wait() == 0
                assert twin.stdout is not None
                assert [chunk async for chunk in twin.stdout] == []  # never served


async def test_a_node_id_held_past_two_leases_gives_up(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with nats_server(tmp_path) as server, node(server, "twin"):
            argv = command(
                "serve", AGENT, "--cluster", server.url, "--node-id", "twin", "--cluster-lease", "2"
            )
            done = await anyio.run_process(argv, cwd=ROOT, check=False)
            assert done.returncode == 1
            assert done.stdout == b""
            assert done.stderr.decode().splitlines()[-1] == (
                f"a2a-actors serve: cannot join the cluster at {server.url}: node id 'twin' is "
                "still held by a live node after 4 s: is another node running with this id?"
            )
