"""Payloads of any size through served cluster nodes (issue 29): a 32 MB artifact
completes, reads and streams byte for byte on another node, survives its owner, goes with
its task; large messages and status texts likewise; what no store can hold is refused at
once, naming the limit."""

from __future__ import annotations

import functools
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from a2a_actors.client import A2AClient
from a2a_actors.cluster import NatsServer, _retention as retention
from a2a_actors.cluster._event_log import EventLog
from a2a_actors.cluster._member import ClusterMember, join
from a2a_actors.cluster._offload import ObjectLimits
from a2a_actors.cluster._settling import LOST_TEXT
from a2a_actors.cluster._task_store import NatsTaskStore
from a2a_actors.protocol import Task, TaskState
from a2a_actors.protocol._errors import PayloadTooLargeError
from a2a_actors.protocol._models import Message, Part, Role, StreamResponse
from a2a_actors.runtime import InProcessClient, Supervisor
from a2a_actors.server import ClusterOptions, ServerConfig, serve

from .chaos_nodes import cli_nodes
from .helpers import connect, nats_server
from .payload_agents import agent, data, text

pytestmark = pytest.mark.anyio

MB32 = 32_000_000
PAYLOADS = "tests.cluster.payload_agents:agent"


def config(server: NatsServer, node_id: str) -> ServerConfig:
    options = ClusterOptions(urls=(server.url,), node_id=node_id, lease_s=2.0)
    return ServerConfig(cluster=options)  # the default request body limit, 1 MiB


@asynccontextmanager
async def served(server: NatsServer, *node_ids: str) -> AsyncIterator[list[A2AClient]]:
    """Nodes ``node_ids`` of the payloads agent's cluster, served in this process."""
    async with anyio.create_task_group() as tg:
        clients = []
        for node_id in node_ids:
            url = await tg.start(functools.partial(serve, agent, config=config(server, node_id)))
            clients.append(await A2AClient.connect(url, card_cache=None))
        try:
            yield clients
        finally:
            for client in clients:
                await client.aclose()
            tg.cancel_scope.cancel()


def artifact_text(task: Task) -> str:
    return "".join(part.text or "" for artifact in task.artifacts for part in artifact.parts)


async def test_a_32_mb_artifact_completes_reads_whole_anywhere_and_goes_with_its_task(
    tmp_path: Path,
) -> None:
    expected = text(MB32)
    with anyio.fail_after(120):
        async with nats_server(tmp_path) as server, served(server, "a", "b") as (a, b):
            done = await a.send_message(f"artifact {MB32}")
            assert isinstance(done, Task)
            assert done.status.state is TaskState.COMPLETED
            assert artifact_text(done) == expected
            on_b = await b.get_task(done.id)
            assert artifact_text(on_b) == expected
            assert on_b == await a.get_task(done.id)
            listed = await b.list_tasks(include_artifacts=True)
            assert [artifact_text(t) for t in listed.tasks] == [expected]
            assert (await b.list_tasks()).tasks[0].artifacts == ()
            # Retention deletes the task with its objects and events.
            async with (
                connect(server, cluster="payloads") as conn,
                NatsTaskStore.open(conn) as store,
            ):
                assert await store.objects.entries() != []
                log = await EventLog.open(conn)
                now = done.status.timestamp
                assert now is not None
                assert await retention.evict(store, now=now, max_terminal=0, log=log) == (done.id,)
                assert await store.objects.entries() == []
                assert await log.last_version(done.id) == 0


async def test_raw_bytes_and_large_status_messages_read_whole_on_another_node(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(60):
        async with nats_server(tmp_path) as server, served(server, "a", "b") as (a, b):
            raw = await a.send_message("raw 3000000")
            assert isinstance(raw, Task)
            assert raw.artifacts[0].parts[0].raw == data(3_000_000)
            assert (await b.get_task(raw.id)).artifacts[0].parts[0].raw == data(3_000_000)
            told = await a.send_message("status 2000000")
            assert isinstance(told, Task)
            on_b = await b.get_task(told.id)
            assert on_b.status.message is not None
            assert on_b.status.message.parts[0].text == text(2_000_000, 2)
            assert [m.parts[0].text for m in on_b.history[1:]] == [
                text(2_000_000),
                text(2_000_000, 2),
            ]


async def test_two_messages_under_the_body_limit_pass_max_payload_together(
    tmp_path: Path,
) -> None:
    first, second = text(900_000, 1), text(900_000, 2)
    with anyio.fail_after(60):
        async with nats_server(tmp_path) as server, served(server, "a", "b") as (a, b):
            asked = await a.send_message(first)
            assert isinstance(asked, Task)
            assert asked.status.state is TaskState.INPUT_REQUIRED
            # The answer goes to the owner through b's inbox request (over 900 KB).
            answered = await b.send_message(second, task_id=asked.id)
            assert isinstance(answered, Task)
            assert answered.status.state is TaskState.COMPLETED
            for node in (a, b):
                task = await node.get_task(asked.id)
                texts = [m.parts[0].text for m in task.history]
                assert texts[0] == first
                assert second in texts


async def test_a_large_artifact_streams_to_both_kinds_of_stream_on_another_node(
    tmp_path: Path,
) -> None:
    chunks = [text(4_000_000, i) for i in range(8)]  # 32 MB in 4 MB events
    with anyio.fail_after(120):
        async with nats_server(tmp_path) as server, served(server, "a", "b") as (a, b):
            asked = await a.send_message("chunks 8 4000000")
            assert isinstance(asked, Task)
            subscribed: list[StreamResponse] = []

            async def subscribe(*, task_status: anyio.abc.TaskStatus[None]) -> None:
                async with b.subscribe(asked.id) as events:
                    task_status.started()
                    subscribed.extend([event async for event in events])

            async with anyio.create_task_group() as tg:
                await tg.start(subscribe)
                async with b.stream_message("go", task_id=asked.id) as events:
                    streamed = [event async for event in events]
            for events_seen in (streamed, subscribed):
                parts = [
                    part.text
                    for event in events_seen
                    if event.artifact_update is not None
                    for part in event.artifact_update.artifact.parts
                ]
                assert parts == chunks
                final = events_seen[-1].status_update
                assert final is not None
                assert final.status.state is TaskState.COMPLETED
            assert artifact_text(await b.get_task(asked.id)) == "".join(chunks)


async def test_a_32_mb_artifact_survives_its_owner_being_killed(tmp_path: Path) -> None:
    expected = text(MB32)
    with anyio.fail_after(180):
        async with (
            nats_server(tmp_path) as server,
            cli_nodes(server, ["a"], tmp_path, served=PAYLOADS) as (node_a,),
            served(server, "b") as (b,),
        ):
            a = await A2AClient.connect(node_a.url, card_cache=None)
            async with a:
                started = await a.send_message(f"hold {MB32}", return_immediately=True)
                assert isinstance(started, Task)
                assert (await node_a.next_line()).split() == ["holding", started.id]
                # Followed on the event log (a SubscribeToTask's first event, the 32 MB
                # snapshot, is past our client's SSE limit of 16 MiB per event).
                async with (
                    connect(server, cluster="payloads") as conn,
                    NatsTaskStore.open(conn) as store,
                ):
                    log = await EventLog.open(conn)
                    async with log.follow(started.id, store) as feed:
                        assert feed.snapshot is not None
                        assert artifact_text(feed.snapshot.task) == expected
                        node_a.kill()
                        seen = [logged.event async for logged in feed]
            final = seen[-1].status_update
            assert final is not None
            assert final.status.state is TaskState.FAILED
            settled = await b.get_task(started.id)
            assert settled.status.state is TaskState.FAILED
            assert settled.status.message is not None
            assert settled.status.message.parts[0].text == LOST_TEXT.format(node="a")
            assert artifact_text(settled) == expected


@asynccontextmanager
async def limited_node(
    server: NatsServer, node_id: str, limits: ObjectLimits
) -> AsyncIterator[tuple[ClusterMember, InProcessClient]]:
    """A node of the payloads cluster with ``limits``, its Supervisor used in process."""
    async with (
        join(
            [server.url], cluster="payloads", node_id=node_id, lease_ttl=2.0, objects=limits
        ) as member,
        anyio.create_task_group() as tg,
    ):
        options = member.supervisor_options()
        options.pop("retain")
        async with Supervisor(agent, **options) as sup:
            await tg.start(member.serve_inbox, sup)
            yield member, InProcessClient(sup)
            tg.cancel_scope.cancel()


async def test_a_task_past_the_object_limit_fails_at_once_naming_it(tmp_path: Path) -> None:
    limits = ObjectLimits(max_object_bytes=2_000_000)
    with anyio.fail_after(60):
        async with (
            nats_server(tmp_path) as server,
            limited_node(server, "a", limits) as (member, a),
        ):
            started = time.monotonic()
            failed = await a.send_message(f"artifact {3_000_000}")
            assert time.monotonic() - started < 1.0  # refused, not retried as "unavailable"
            assert isinstance(failed, Task)
            assert failed.status.state is TaskState.FAILED
            assert failed.status.message is not None
            note = failed.status.message.parts[0].text or ""
            assert "limit of 2000000 bytes per object (max_object_bytes)" in note
            assert failed.artifacts == ()  # nothing of the refused write
            stored = await member.node.store.get(failed.id)
            assert stored is not None
            assert stored.task == failed
            assert await member.node.objects.entries() == []
            assert member.node.conn.statistics().unavailable == 0
            await member.publisher.wait_idle()  # followers elsewhere get the FAILED update
            assert await member.node.log.last_version(failed.id) == stored.version


async def test_a_message_past_the_object_limit_to_another_node_is_refused(
    tmp_path: Path,
) -> None:
    limits = ObjectLimits(max_object_bytes=2_000_000)
    with anyio.fail_after(60):
        async with (
            nats_server(tmp_path) as server,
            limited_node(server, "a", limits) as (_, a),
            limited_node(server, "b", limits) as (_, b),
        ):
            asked = await a.send_message("hi")
            assert isinstance(asked, Task)
            big = Message(
                message_id="m2",
                role=Role.USER,
                task_id=asked.id,
                parts=(Part(text=text(3_000_000)),),
            )
            started = time.monotonic()
            with pytest.raises(PayloadTooLargeError) as refused:
                await b.send_message(big)
            assert time.monotonic() - started < 1.0
            assert refused.value.code == -32052
            assert "max_object_bytes" in str(refused.value)
            still = await a.get_task(asked.id)
            assert still.status.state is TaskState.INPUT_REQUIRED
