"""Our client over gRPC against the official a2a-sdk's gRPC server: every method.

The shared client scenarios (tests/client/scenarios.py: send, Message replies, streaming,
multi-turn, list/subscribe/cancel, push-config CRUD, the extended card, errors) run over a
client built from the SDK server's card, whose only interface is GRPC. They run under trio
(the transport drives ``grpc.aio`` on a private asyncio loop) and under asyncio (on the
caller's loop).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio
import pytest

from a2a_actors.client import A2AClient
from a2a_actors.protocol import _protobuf as protobuf
from a2a_actors.protocol._card import AgentCard
from a2a_actors.protocol._models import Task, TaskState
from tests.client import scenarios
from tests.client.scenarios import TIMEOUT
from tests.grpc.grpc_servers import GrpcServer

Scenario = Callable[[A2AClient], Awaitable[None]]

SCENARIOS: dict[str, Scenario] = {
    "send_blocking": scenarios.send_blocking,
    "message_reply": scenarios.message_reply,
    "streaming": scenarios.streaming,
    "multi_turn": scenarios.multi_turn,
    "subscribe_and_cancel": scenarios.subscribe_and_cancel,
    "push_config_crud": scenarios.push_config_crud,
    "extended_card": scenarios.extended_card,
    "errors": scenarios.errors,
}


def card_of(server: GrpcServer) -> AgentCard:
    """The SDK server's card as our Struct."""
    return protobuf.from_proto(server.card, AgentCard)


@asynccontextmanager
async def grpc_client(server: GrpcServer) -> AsyncIterator[A2AClient]:
    """A client chosen from the card (gRPC: its only interface)."""
    async with A2AClient(card=card_of(server)) as client:
        assert client.interface.protocol_binding == "GRPC"
        assert client.interface.url == server.target
        yield client


@pytest.mark.parametrize("name", SCENARIOS)
async def test_scenario_on_trio(sdk_grpc: GrpcServer, name: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with grpc_client(sdk_grpc) as client:
            await SCENARIOS[name](client)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("name", SCENARIOS)
async def test_scenario_on_asyncio(sdk_grpc: GrpcServer, name: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with grpc_client(sdk_grpc) as client:
            await SCENARIOS[name](client)


async def test_leaving_a_stream_midway_leaves_the_task_and_the_channel_usable(
    sdk_grpc: GrpcServer,
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with grpc_client(sdk_grpc) as client:
            async with client.stream_message("sleep for a while") as stream:
                async for _event in stream:
                    break  # the consumer leaves after the first event
            task_id = stream.task_id
            assert task_id
            got = await client.get_task(task_id)
            assert got.status.state in (TaskState.SUBMITTED, TaskState.WORKING)
            canceled = await client.cancel_task(task_id)
            assert canceled.status.state is TaskState.CANCELED


async def test_cancel_while_a_subscriber_streams(sdk_grpc: GrpcServer) -> None:
    # Two clients: one follows the task over gRPC, the other cancels it; the follower
    # sees CANCELED as the last event and its stream ends.
    with anyio.fail_after(TIMEOUT):
        async with grpc_client(sdk_grpc) as follower, grpc_client(sdk_grpc) as canceller:
            task = await canceller.send_message("sleep", return_immediately=True)
            assert isinstance(task, Task)
            async with follower.subscribe(task.id) as events:
                first = await events.__anext__()
                assert first.task is not None
                await canceller.cancel_task(task.id)
                rest = [event async for event in events]
            last = rest[-1].status_update
            assert last is not None
            assert last.status.state is TaskState.CANCELED


@pytest.mark.parametrize("prefix", ["", "grpc://"])
async def test_a_client_for_an_endpoint_without_a_card(sdk_grpc: GrpcServer, prefix: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with A2AClient(prefix + sdk_grpc.target, binding="GRPC") as client:
            task = await client.send_message("hello endpoint")
            assert isinstance(task, Task)
            assert task.status.state is TaskState.COMPLETED
            assert (await client.get_task(task.id)).id == task.id
            events = await scenarios.collect(client.stream_message("stream please"))
            assert scenarios.kinds(events)[0] == "Task"
