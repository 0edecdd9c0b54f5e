"""A node SIGKILLed mid-task: within a lease the other nodes settle its tasks (running
ones FAILED, seen by a subscriber elsewhere; waiting ones resumable), and a node that
comes back with the same id gets a new epoch and owns nothing of its old incarnation."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.abc
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from a2a_actors.cluster import NatsServer
from a2a_actors.cluster._leases import NodeEvent, NodeLeases
from a2a_actors.cluster._node import ClusterNode
from a2a_actors.cluster._settling import LOST_TEXT
from a2a_actors.protocol import TaskState

from .helpers import connect, nats_server

pytestmark = pytest.mark.anyio

# Long enough that a node process starting on a loaded 2-core machine renews in time.
TTL = 5.0
ROOT = Path(__file__).resolve().parents[2]


@asynccontextmanager
async def node_process(
    server: NatsServer, node_id: str
) -> AsyncIterator[tuple[anyio.abc.Process, int]]:
    """Run tests/cluster/node_process.py; yield it and its epoch once it is ready; kill it
    by its PID on leaving if it still runs."""
    args = [sys.executable, "-m", "tests.cluster.node_process", server.url, node_id, str(TTL)]
    process = await anyio.open_process(args, cwd=ROOT, stdin=subprocess.DEVNULL, stderr=None)
    try:
        assert process.stdout is not None
        line = await BufferedByteReceiveStream(process.stdout).receive_until(b"\n", 1024)
        word, epoch = line.decode().split()
        assert word == "ready"
        yield process, int(epoch)
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                # Already killed by the test and reaped by the event loop's child watcher
                # before returncode was read: nothing left to kill.
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signal.SIGKILL)
            await process.wait()
            await process.aclose()


def sigkill(process: anyio.abc.Process) -> None:
    os.kill(process.pid, signal.SIGKILL)


async def test_a_sigkilled_node_is_settled_by_another_within_a_lease(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with (
            nats_server(tmp_path) as server,
            ClusterNode.open([server.url], cluster="test", node_id="b", lease_ttl=TTL) as b,
        ):
            async with (
                node_process(server, "a") as (process, epoch),
                b.log.follow("work-a", b.store) as feed,
            ):
                assert feed.snapshot is not None
                assert feed.snapshot.task.status.state is TaskState.WORKING
                sigkill(process)
                with anyio.fail_after(TTL * 4):  # expiry, its marker, the settling
                    events = [logged async for logged in feed]
            assert len(events) == 1
            final = events[0].event.status_update
            assert final is not None
            assert final.status.state is TaskState.FAILED
            assert final.status.message is not None
            assert final.status.message.parts[0].text == LOST_TEXT.format(node="a")
            entry = await b.store.get_entry("ask-a")
            assert entry is not None
            assert (entry.record.task.status.state, entry.holder) == (
                TaskState.INPUT_REQUIRED,
                None,
            )
            # (b.settled is counted after the pass returns: not read here, it would race)
            # The same id again: a new epoch, and its writes to the old incarnation's
            # tasks (the process writes both again as it starts) are refused.
            async with node_process(server, "a") as (again, new_epoch):
                assert new_epoch > epoch
                assert await b.store.held_by("a") == []
                work = await b.store.get("work-a")
                assert work is not None
                assert work.task.status.state is TaskState.FAILED
                sigkill(again)


async def test_a_node_lost_while_nobody_watched_is_settled_by_the_next_one_to_start(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(60):
        async with nats_server(tmp_path) as server, connect(server) as watcher:
            leases = await NodeLeases.open(watcher, ttl=TTL)
            async with leases.follow() as changes:
                async with node_process(server, "a") as (process, _):
                    sigkill(process)
                while (event := await changes.receive()) != NodeEvent("a", None, expired=True):
                    assert event.node_id == "a"
            async with ClusterNode.open([server.url], cluster="test", node_id="b") as b:
                assert b.settled == 2  # at start, before open() returned
                work = await b.store.get("work-a")
                assert work is not None
                assert work.task.status.state is TaskState.FAILED
