"""Two nodes served in one process (``serve`` with ``ServerConfig.cluster``) against one
real nats-server: every method works on either node for the other's tasks, over HTTP."""

from __future__ import annotations

import functools
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from a2a_actors.client import A2AClient
from a2a_actors.cluster import ClusterUnavailableError, NatsServer
from a2a_actors.protocol import Task, TaskState
from a2a_actors.protocol._errors import ServerBusyError, TaskNotCancelableError
from a2a_actors.protocol._models import StreamResponse
from a2a_actors.protocol._requests import TaskPushNotificationConfig
from a2a_actors.server import ClusterOptions, GrpcOptions, ServerConfig, serve

from ..push.receiver import Received, receiver
from .agents import agent
from .helpers import connect, nats_server
from .signals import cluster_log

pytestmark = pytest.mark.anyio


#: What the node left logs once it has settled node a's tasks (one released, resumable).
RELEASED_BY_A = r"node a \(epoch \d+\) is gone: 0 task\(s\) FAILED, 1 resumable"


def config(server: NatsServer, node_id: str) -> ServerConfig:
    options = ClusterOptions(urls=(server.url,), node_id=node_id, lease_s=3.0)
    return ServerConfig(cluster=options)


@asynccontextmanager
async def two_nodes(tmp_path: Path) -> AsyncIterator[tuple[A2AClient, A2AClient]]:
    async with nats_server(tmp_path) as server, anyio.create_task_group() as tg:
        url_a = await tg.start(functools.partial(serve, agent, config=config(server, "a")))
        url_b = await tg.start(functools.partial(serve, agent, config=config(server, "b")))
        a = await A2AClient.connect(url_a, card_cache=None)
        b = await A2AClient.connect(url_b, card_cache=None)
        async with a, b:
            yield a, b
        tg.cancel_scope.cancel()


def state(event: StreamResponse) -> TaskState | None:
    if event.task is not None:
        return event.task.status.state
    if event.status_update is not None:
        return event.status_update.status.state
    return None


async def test_get_and_list_answer_the_same_on_both_nodes(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with two_nodes(tmp_path) as (a, b):
            asked = await a.send_message("hi")
            assert isinstance(asked, Task)
            assert asked.status.state is TaskState.INPUT_REQUIRED
            assert await b.get_task(asked.id) == await a.get_task(asked.id)
            listed_a = await a.list_tasks()
            listed_b = await b.list_tasks()
            assert listed_a == listed_b
            assert [t.id for t in listed_b.tasks] == [asked.id]


async def test_a_cancel_on_the_other_node_interrupts_the_owner(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with two_nodes(tmp_path) as (a, b):
            started = await a.send_message("spin", return_immediately=True)
            assert isinstance(started, Task)
            canceled = await b.cancel_task(started.id)
            assert canceled.status.state is TaskState.CANCELED
            assert (await a.get_task(started.id)).status.state is TaskState.CANCELED
            assert (await b.get_task(started.id)).status.state is TaskState.CANCELED


async def test_concurrent_cancels_from_both_nodes_give_one_final_state(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with two_nodes(tmp_path) as (a, b):
            started = await a.send_message("spin", return_immediately=True)
            assert isinstance(started, Task)
            answers: list[TaskState] = []

            async def cancel(client: A2AClient) -> None:
                try:
                    answers.append((await client.cancel_task(started.id)).status.state)
                except TaskNotCancelableError:
                    answers.append(TaskState.UNSPECIFIED)  # the other cancel got there first

            async with anyio.create_task_group() as tg:
                for client in (a, b, a, b):
                    tg.start_soon(cancel, client)
            assert TaskState.CANCELED in answers
            assert set(answers) <= {TaskState.CANCELED, TaskState.UNSPECIFIED}
            final = await b.get_task(started.id)
            assert final.status.state is TaskState.CANCELED
            assert final == await a.get_task(started.id)


async def test_an_answer_on_the_other_node_reaches_the_parked_ask(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with two_nodes(tmp_path) as (a, b):
            asked = await a.send_message("hi")
            assert isinstance(asked, Task)
            done = await b.send_message("Ada", task_id=asked.id, context_id=asked.context_id)
            assert isinstance(done, Task)
            assert done.status.state is TaskState.COMPLETED
            assert done.status.message is not None
            assert done.status.message.text == "Hello, Ada!"
            assert (await a.get_task(asked.id)).status.state is TaskState.COMPLETED


async def test_a_subscriber_on_the_other_node_gets_every_event_once(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with two_nodes(tmp_path) as (a, b):
            started = await a.send_message("count", return_immediately=True)
            assert isinstance(started, Task)
            async with b.subscribe(started.id) as events:
                seen = [event async for event in events]
            assert seen[0].task is not None  # the snapshot first
            assert state(seen[-1]) is TaskState.COMPLETED
            texts = [
                e.status_update.status.message.text
                for e in seen[1:]
                if e.status_update is not None and e.status_update.status.message is not None
            ]
            assert len(texts) == len(set(texts))  # no duplicate
            assert texts[-1] == "counted"
            first = seen[0].task.status.message
            skipped = 0 if first is None else int(first.text.split()[-1]) + 1
            expected = [f"step {i}" for i in range(skipped, 5)]
            assert [t for t in texts if t.startswith("step")] == expected  # no gap
            final = await a.get_task(started.id)
            assert final.status.state is TaskState.COMPLETED


async def test_a_streamed_answer_on_the_other_node_follows_the_owner(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with two_nodes(tmp_path) as (a, b):
            asked = await a.send_message("hi")
            assert isinstance(asked, Task)
            stream = b.stream_message("Ada", task_id=asked.id, context_id=asked.context_id)
            async with stream as events:
                seen = [event async for event in events]
            assert state(seen[-1]) is TaskState.COMPLETED


async def test_with_nats_away_a_request_is_busy_in_bounded_time(tmp_path: Path) -> None:
    with anyio.fail_after(60), cluster_log() as log:
        async with nats_server(tmp_path) as server, anyio.create_task_group() as tg:
            options = ClusterOptions(urls=(server.url,), node_id="a", timeout_s=1.0)
            url = await tg.start(
                functools.partial(serve, agent, config=ServerConfig(cluster=options))
            )
            async with await A2AClient.connect(url, card_cache=None) as a:
                asked = await a.send_message("hi")
                assert isinstance(asked, Task)
                await server.stop()
                with anyio.fail_after(10), pytest.raises(ServerBusyError):
                    await a.list_tasks()  # -32050 (HTTP 429), never a hang
                await server.start()
                await log.wait_for("NATS connection back")  # the node reconnected by itself
                # Nothing was written meanwhile: the mirror is caught up without its consumer.
                again = (await a.list_tasks()).tasks
                assert [t.id for t in again] == [asked.id]
            tg.cancel_scope.cancel()


async def test_a_stopped_nodes_waiting_task_resumes_on_another_node(tmp_path: Path) -> None:
    with anyio.fail_after(30), cluster_log() as log:
        async with nats_server(tmp_path) as server, anyio.create_task_group() as tg:
            url_b = await tg.start(functools.partial(serve, agent, config=config(server, "b")))
            async with anyio.create_task_group() as node_a:
                url_a = await node_a.start(
                    functools.partial(serve, agent, config=config(server, "a"))
                )
                async with await A2AClient.connect(url_a, card_cache=None) as a:
                    asked = await a.send_message("hi")
                node_a.cancel_scope.cancel()  # a graceful stop: its waiting task is released
            assert isinstance(asked, Task)
            # Node b sees a's lease go and releases a's waiting task for resumption.
            await log.wait_for(RELEASED_BY_A)
            async with await A2AClient.connect(url_b, card_cache=None) as b:
                done = await b.send_message("Ada", task_id=asked.id, context_id=asked.context_id)
                assert isinstance(done, Task)
                assert done.status.state is TaskState.COMPLETED
                assert done.status.message is not None
                assert done.status.message.text == "Hello, Ada! (resumed)"
                assert (await b.get_task(asked.id)) == done
            tg.cancel_scope.cancel()


def test_the_embedded_server_does_not_import_nats() -> None:
    code = (
        "import sys, a2a_actors.server, a2a_actors.server._cli.serve, a2a_actors.cli\n"
        "from a2a_actors.server import create_app\n"
        "async def handler(ctx): pass\n"
        "create_app(handler)\n"
        "assert 'nats' not in sys.modules, 'nats imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


async def test_push_is_delivered_once_per_event_by_the_owner(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with (
            receiver() as hooks,
            nats_server(tmp_path) as server,
            anyio.create_task_group() as tg,
        ):
            urls = []
            for node_id in ("a", "b"):
                options = ClusterOptions(urls=(server.url,), node_id=node_id)
                push = ServerConfig(cluster=options, push_notifications=True).replace(
                    allow_private_push=True
                )
                urls.append(await tg.start(functools.partial(serve, agent, config=push)))
            a = await A2AClient.connect(urls[0], card_cache=None)
            b = await A2AClient.connect(urls[1], card_cache=None)
            async with a, b:
                hook = TaskPushNotificationConfig(url=f"{hooks.base_url}/hook", id="h")
                asked = await a.send_message("hi", push_config=hook)  # inline, on the owner
                assert isinstance(asked, Task)
                listed = await b.list_push_configs(asked.id)  # CRUD on the other node
                assert [c.id for c in listed.configs] == ["h"]
                done = await b.send_message("Ada", task_id=asked.id, context_id=asked.context_id)
                assert isinstance(done, Task)

                def completed(requests: list[Received]) -> bool:
                    return any("TASK_STATE_COMPLETED" in r.body.decode() for r in requests)

                await hooks.wait_until(completed)
            tg.cancel_scope.cancel()
        bodies = [r.body for r in hooks.requests]
        assert len(bodies) == len(set(bodies))  # each event once, not once per node
        assert sum(b"TASK_STATE_COMPLETED" in body for body in bodies) == 1


async def test_a_new_task_is_stored_at_its_first_change_not_before(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with nats_server(tmp_path) as server, anyio.create_task_group() as tg:
            url = await tg.start(functools.partial(serve, agent, config=config(server, "a")))
            async with (
                connect(server, cluster="cluster-test") as conn,
                await A2AClient.connect(url, card_cache=None) as a,
            ):
                bucket = f"KV_{conn.names.tasks_bucket}"
                before = (await conn.js.stream_info(bucket)).state.last_seq
                done = await a.send_message("count")
                assert isinstance(done, Task)
                assert done.status.state is TaskState.COMPLETED
                after = (await conn.js.stream_info(bucket)).state.last_seq
                # WORKING (the creation), five updates, COMPLETED: as many writes as a
                # single server's, none before the handler's first change
                assert after - before == 7
                assert (await a.get_task(done.id)) == done
            tg.cancel_scope.cancel()


async def test_a_node_that_cannot_join_frees_its_ports() -> None:
    # serve() binds HTTP and gRPC before it joins; when the join fails, both ports are
    # given back, so that the next try on the same ports can bind them.
    pytest.importorskip("grpc", reason="the grpc extra is not installed")
    ports = []
    for _ in range(2):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            ports.append(probe.getsockname()[1])
    config = ServerConfig(
        cluster=ClusterOptions(urls=["nats://127.0.0.1:1"], timeout_s=1),
        grpc=GrpcOptions(port=ports[1]),
    )
    with anyio.fail_after(30):
        with pytest.raises(BaseExceptionGroup) as failed:
            async with anyio.create_task_group() as tg:
                await tg.start(functools.partial(serve, agent, port=ports[0], config=config))
        assert failed.value.subgroup(ClusterUnavailableError) is not None
    for port in ports:
        with socket.socket() as again:
            again.bind(("127.0.0.1", port))  # OSError (in use) while the failed node held it
