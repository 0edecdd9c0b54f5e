"""Cluster mode: a stream of a task running on node ``a`` resumed on node ``b`` with
``Last-Event-ID`` is served from the cluster's event log (JetStream): every later event
once, no snapshot; also once the task has ended, and after its final event."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from a2a_actors.client import A2AClient, EventStream
from a2a_actors.cluster import NatsServer
from a2a_actors.protocol._models import StreamResponse, Task, TaskState
from a2a_actors.server import ClusterOptions, ServerConfig, serve

from ..cluster.helpers import nats_server
from .agents import Chunks

pytestmark = [pytest.mark.anyio, pytest.mark.serial]  # timed by leases and TTLs

TIMEOUT = 30.0


@pytest.fixture
def anyio_backend() -> str:
    """Cluster mode is asyncio-only."""
    return "asyncio"


def config(server: NatsServer, node_id: str) -> ServerConfig:
    return ServerConfig(cluster=ClusterOptions(urls=(server.url,), node_id=node_id, lease_s=3.0))


@asynccontextmanager
async def two_nodes(tmp_path: Path, chunks: Chunks) -> AsyncIterator[tuple[A2AClient, A2AClient]]:
    async with nats_server(tmp_path) as server, anyio.create_task_group() as tg:
        url_a = await tg.start(functools.partial(serve, chunks.agent, config=config(server, "a")))
        url_b = await tg.start(functools.partial(serve, chunks.agent, config=config(server, "b")))
        a = await A2AClient.connect(url_a, card_cache=None)
        b = await A2AClient.connect(url_b, card_cache=None)
        async with a, b:
            yield a, b
        tg.cancel_scope.cancel()


async def take(stream: EventStream, count: int | None = None) -> list[tuple[int, StreamResponse]]:
    seen: list[tuple[int, StreamResponse]] = []
    async for event in stream:
        assert stream.last_event_id is not None
        seen.append((int(stream.last_event_id), event))
        if len(seen) == count:
            break
    return seen


def texts(seen: list[tuple[int, StreamResponse]]) -> str:
    return "".join(
        part.text or ""
        for _, event in seen
        if event.artifact_update is not None
        for part in event.artifact_update.artifact.parts
    )


async def test_a_stream_resumes_on_another_node_from_the_event_log(tmp_path: Path) -> None:
    chunks = Chunks()
    with anyio.fail_after(TIMEOUT):
        async with two_nodes(tmp_path, chunks) as (a, b):
            async with a.stream_message("8 chunks") as stream:
                first = await take(stream, 3)  # then the connection is left: a cut
            await chunks.waiting.wait()
            task_id, last = stream.task_id, first[-1][0]
            async with b.subscribe(task_id, last_event_id=last) as resumed:
                rest: list[tuple[int, StreamResponse]] = []
                async for event in resumed:
                    assert resumed.last_event_id is not None
                    rest.append((int(resumed.last_event_id), event))
                    if len(rest) == 2:  # the two events the cut stream missed
                        chunks.gate.set()
            assert rest[-1][1].status_update is not None
            assert rest[-1][1].status_update.status.state is TaskState.COMPLETED
            seen = first + rest
            versions = [v for v, _ in seen]
            assert versions == list(range(versions[0], versions[0] + len(seen)))
            assert all(event.task is None for _, event in rest)  # no snapshot
            assert texts(seen) == "".join(f"{i};" for i in range(8))
            # the task has ended: its events are still in the log, on either node
            async with b.subscribe(task_id, last_event_id=last) as again:
                assert await take(again) == rest
            async with a.subscribe(task_id, last_event_id=versions[-1]) as after_end:
                assert await take(after_end) == []
            assert after_end.task is not None
            assert after_end.task.status.state is TaskState.COMPLETED


async def test_an_id_ahead_of_the_task_starts_with_the_snapshot(tmp_path: Path) -> None:
    chunks = Chunks()
    with anyio.fail_after(TIMEOUT):
        async with two_nodes(tmp_path, chunks) as (a, b):
            started = await a.send_message("4 chunks", return_immediately=True)
            assert isinstance(started, Task)
            await chunks.waiting.wait()
            async with b.subscribe(started.id, last_event_id=10_000) as resumed:
                seen: list[tuple[int, StreamResponse]] = []
                async for event in resumed:
                    assert resumed.last_event_id is not None
                    seen.append((int(resumed.last_event_id), event))
                    chunks.gate.set()
            assert seen[0][1].task is not None
            versions = [v for v, _ in seen]
            assert versions == list(range(versions[0], versions[0] + len(seen)))
            task = seen[0][1].task
            done = "".join(part.text or "" for part in task.artifacts[0].parts) + texts(seen)
            assert done == "0;1;2;3;"
