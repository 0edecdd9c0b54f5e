"""The official a2a-sdk client (JSON-RPC and REST transports) against our server.

Our server runs on a real loopback Hypercorn, served by :func:`a2a_actors.server._serve` in the
test's own event loop; the tests run under asyncio and under trio (the SDK client is plain
httpx and works on both; under trio the server is QuartTrio on Hypercorn's trio worker), so
both server backends are exercised. Every A2A method is covered, plus streaming, two
concurrent subscribers, multi-turn, cancelling a running task, push-config CRUD, the
extended card, and errors mapped to the SDK's own exception types.

Trio note (as in test_sdk_harness.py): the SDK client leaves some httpx async generators
unclosed after a stream; trio reports them as ResourceWarnings, which the mark below ignores.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import httpx
import pytest
from a2a.client import A2ACardResolver, ClientCallContext
from a2a.types.a2a_pb2 import (
    AuthenticationInfo,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.errors import (
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
    VersionNotSupportedError,
)

from a2a_actors.protocol._card import AgentSkill
from a2a_actors.server import ExtendedCard, ServerConfig
from tests.interop.sdk_server import Binding, sdk_client
from tests.server.agents import CHUNKS, QUESTION, scenario_agent
from tests.server.helpers import served

if TYPE_CHECKING:
    from a2a.client import Client

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings(
        r"ignore:Async generator '(a2a\.client|httpx|httpcore)\..*' was garbage collected"
        r":ResourceWarning"
    ),
]

TIMEOUT = 15.0
SECRET_SKILL = AgentSkill(id="secret", name="Secret", description="extended only", tags=("x",))
FULL = ServerConfig(
    push_notifications=True,
    extended_card=ExtendedCard(name="scenario-agent (extended)", skills=(SECRET_SKILL,)),
)
PLAIN = ServerConfig()
TERMINAL = {
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_REJECTED,
}


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend


@pytest.fixture(params=["JSONRPC", "HTTP+JSON"])
def binding(request: pytest.FixtureRequest) -> Binding:
    value: Binding = request.param
    return value


@asynccontextmanager
async def our_server(
    binding: Binding, config: ServerConfig = FULL, *, streaming: bool = True
) -> AsyncIterator[tuple[str, Client]]:
    """Our server for the block, and an SDK client of it speaking ``binding``."""
    async with served(scenario_agent, config) as url, httpx.AsyncClient(timeout=TIMEOUT) as http:
        client = await sdk_client(url, binding=binding, httpx_client=http, streaming=streaming)
        try:
            yield url, client
        finally:
            await client.close()


def request(
    text: str, *, task_id: str = "", context_id: str = "", return_immediately: bool = False
) -> SendMessageRequest:
    return SendMessageRequest(
        message=Message(
            message_id=uuid.uuid4().hex,
            role=Role.ROLE_USER,
            parts=[Part(text=text)],
            task_id=task_id,
            context_id=context_id,
        ),
        configuration=SendMessageConfiguration(return_immediately=return_immediately),
    )


async def collect(stream: AsyncIterator[StreamResponse]) -> list[StreamResponse]:
    return [event async for event in stream]


async def unary(client: Client, req: SendMessageRequest) -> StreamResponse:
    (only,) = await collect(client.send_message(req))
    return only


def kinds(events: list[StreamResponse]) -> list[str | None]:
    return [e.WhichOneof("payload") for e in events]


def text_of(parts: Any) -> str:
    return "".join(p.text for p in parts)


async def test_card_parses_and_names_our_interfaces(binding: Binding) -> None:
    with anyio.fail_after(TIMEOUT):
        async with our_server(binding) as (url, _), httpx.AsyncClient() as http:
            card = await A2ACardResolver(http, url).get_agent_card()
            interfaces = [
                (i.protocol_binding, i.url, i.protocol_version) for i in card.supported_interfaces
            ]
            assert ("JSONRPC", f"{url}/", "1.0") in interfaces
            assert ("HTTP+JSON", f"{url}/rest", "1.0") in interfaces
            assert card.capabilities.streaming
            assert card.capabilities.push_notifications
            assert card.capabilities.extended_agent_card
            assert [s.id for s in card.skills] == ["scenarios"]


async def test_send_blocking_get_and_list(binding: Binding) -> None:
    with anyio.fail_after(TIMEOUT):
        async with our_server(binding, streaming=False) as (_, client):
            context_id = uuid.uuid4().hex
            reply = await unary(client, request("hello ours", context_id=context_id))
            task = reply.task
            assert task.status.state == TaskState.TASK_STATE_COMPLETED
            assert task.context_id == context_id
            assert [a.artifact_id for a in task.artifacts] == ["echo"]
            assert text_of(task.artifacts[0].parts) == "hello ours"
            assert task.history[0].role == Role.ROLE_USER

            got = await client.get_task(GetTaskRequest(id=task.id, history_length=0))
            assert got.id == task.id
            assert len(got.history) == 0
            listed = await client.list_tasks(ListTasksRequest(context_id=context_id))
            assert [t.id for t in listed.tasks] == [task.id]
            assert listed.total_size == 1
            assert listed.next_page_token == ""


async def test_message_reply(binding: Binding) -> None:
    with anyio.fail_after(TIMEOUT):
        for streaming in (False, True):
            async with our_server(binding, streaming=streaming) as (_, client):
                events = await collect(client.send_message(request("message back")))
                assert kinds(events) == ["message"]
                assert events[0].message.role == Role.ROLE_AGENT
                assert text_of(events[0].message.parts) == "message back"


async def test_a_tenant_reaches_the_agent(binding: Binding) -> None:
    # The SDK client puts the tenant in the params (JSON-RPC) or below the interface URL
    # (REST: /rest/{tenant}/message:send); the agent reads it as ctx.tenant.
    with anyio.fail_after(TIMEOUT):
        for streaming in (False, True):
            async with our_server(binding, streaming=streaming) as (_, client):
                req = request("tenant")
                req.tenant = "acme"
                events = await collect(client.send_message(req))
                assert kinds(events) == ["message"]
                assert text_of(events[0].message.parts) == "acme"
                first = (await collect(client.send_message(request("hello"))))[0]
                got = await client.get_task(GetTaskRequest(id=first.task.id, tenant="acme"))
                assert got.id == first.task.id


async def test_streaming_chunks(binding: Binding) -> None:
    with anyio.fail_after(TIMEOUT):
        async with our_server(binding) as (_, client):
            events = await collect(client.send_message(request("stream please")))
        assert kinds(events) == [
            "task",
            "status_update",
            *["artifact_update"] * len(CHUNKS),
            "status_update",
        ]
        chunks = [e.artifact_update for e in events[2:-1]]
        assert [c.append for c in chunks] == [False, True, True]
        assert [c.last_chunk for c in chunks] == [False, False, True]
        assert "".join(text_of(c.artifact.parts) for c in chunks) == "".join(CHUNKS)
        assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED


async def test_multi_turn_and_terminal_task(binding: Binding) -> None:
    with anyio.fail_after(TIMEOUT):
        async with our_server(binding, streaming=False) as (_, client):
            first = (await unary(client, request("input please"))).task
            assert first.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            assert text_of(first.status.message.parts) == QUESTION
            second = (await unary(client, request("Ada", task_id=first.id))).task
            assert second.id == first.id
            assert second.context_id == first.context_id
            assert second.status.state == TaskState.TASK_STATE_COMPLETED
            assert [text_of(a.parts) for a in second.artifacts] == ["Ada"]
            with pytest.raises(UnsupportedOperationError):  # -32004
                await unary(client, request("more", task_id=first.id))


async def test_two_subscribers_and_cancel_of_a_running_task(binding: Binding) -> None:
    with anyio.fail_after(TIMEOUT):
        async with our_server(binding) as (url, client), httpx.AsyncClient() as http:
            blocking = await sdk_client(url, binding=binding, httpx_client=http, streaming=False)
            started = await unary(blocking, request("sleep", return_immediately=True))
            await blocking.close()
            task_id = started.task.id
            assert started.task.status.state in {
                TaskState.TASK_STATE_SUBMITTED,
                TaskState.TASK_STATE_WORKING,
            }
            streams = [anyio.create_memory_object_stream[StreamResponse](16) for _ in range(2)]

            async def subscriber(index: int) -> None:
                send = streams[index][0]
                async with send:
                    async for event in client.subscribe(SubscribeToTaskRequest(id=task_id)):
                        await send.send(event)

            seen: list[list[StreamResponse]] = [[], []]
            async with anyio.create_task_group() as tg:
                for index in range(2):
                    tg.start_soon(subscriber, index)
                for index in range(2):
                    snapshot = await streams[index][1].receive()
                    assert snapshot.task.id == task_id
                    assert snapshot.task.status.state not in TERMINAL
                    seen[index].append(snapshot)
                canceled = await client.cancel_task(CancelTaskRequest(id=task_id))
                assert canceled.status.state == TaskState.TASK_STATE_CANCELED
                for index in range(2):
                    async with streams[index][1]:
                        seen[index].extend([event async for event in streams[index][1]])
            assert seen[0] == seen[1]
            assert seen[0][-1].status_update.status.state == TaskState.TASK_STATE_CANCELED

            got = await client.get_task(GetTaskRequest(id=task_id))
            assert got.status.state == TaskState.TASK_STATE_CANCELED
            with pytest.raises(TaskNotCancelableError):  # -32002
                await client.cancel_task(CancelTaskRequest(id=task_id))
            with pytest.raises(UnsupportedOperationError):  # -32004
                await collect(client.subscribe(SubscribeToTaskRequest(id=task_id)))


async def test_push_config_crud(binding: Binding) -> None:
    with anyio.fail_after(TIMEOUT):
        async with our_server(binding, streaming=False) as (_, client):
            task = (await unary(client, request("push target"))).task
            config = TaskPushNotificationConfig(
                task_id=task.id,
                id="cfg-1",
                url="https://hooks.example.com/a2a",
                token="tok-1",
                authentication=AuthenticationInfo(scheme="Bearer", credentials="secret"),
            )
            created = await client.create_task_push_notification_config(config)
            # credentials are write-only
            assert created == TaskPushNotificationConfig(
                task_id=task.id,
                id="cfg-1",
                url="https://hooks.example.com/a2a",
                authentication=AuthenticationInfo(scheme="Bearer"),
            )
            unnamed = await client.create_task_push_notification_config(
                TaskPushNotificationConfig(task_id=task.id, url="https://hooks.example.com/b")
            )
            assert unnamed.id
            assert unnamed.id != task.id

            got = await client.get_task_push_notification_config(
                GetTaskPushNotificationConfigRequest(task_id=task.id, id="cfg-1")
            )
            assert got == created
            listed = await client.list_task_push_notification_configs(
                ListTaskPushNotificationConfigsRequest(task_id=task.id)
            )
            assert sorted(c.id for c in listed.configs) == sorted(["cfg-1", unnamed.id])
            for _ in range(2):
                await client.delete_task_push_notification_config(
                    DeleteTaskPushNotificationConfigRequest(task_id=task.id, id="cfg-1")
                )
            with pytest.raises(TaskNotFoundError):
                await client.get_task_push_notification_config(
                    GetTaskPushNotificationConfigRequest(task_id=task.id, id="cfg-1")
                )
            with pytest.raises(TaskNotFoundError):
                await client.list_task_push_notification_configs(
                    ListTaskPushNotificationConfigsRequest(task_id="no-such-task")
                )


async def test_extended_card(binding: Binding) -> None:
    with anyio.fail_after(TIMEOUT):
        async with our_server(binding) as (_, client):
            card = await client.get_extended_agent_card(GetExtendedAgentCardRequest())
            assert card.name == "scenario-agent (extended)"
            assert [s.id for s in card.skills] == ["scenarios", "secret"]


async def test_errors_map_to_sdk_exceptions(binding: Binding) -> None:
    with anyio.fail_after(TIMEOUT):
        async with our_server(binding, streaming=False) as (_, client):
            with pytest.raises(TaskNotFoundError):  # -32001
                await client.get_task(GetTaskRequest(id="no-such-task"))
            with pytest.raises(TaskNotFoundError):
                await client.cancel_task(CancelTaskRequest(id="no-such-task"))
            with pytest.raises(TaskNotFoundError):  # a client cannot pick a task id
                await unary(client, request("hello", task_id="client-made-id"))
            done = (await unary(client, request("done"))).task
            with pytest.raises(TaskNotCancelableError):
                await client.cancel_task(CancelTaskRequest(id=done.id))
            for version in ("0.3", "99.0"):
                context = ClientCallContext(service_parameters={"A2A-Version": version})
                with pytest.raises(VersionNotSupportedError):  # -32009
                    await client.get_task(GetTaskRequest(id=done.id), context=context)


async def test_flags_off(binding: Binding) -> None:
    with anyio.fail_after(TIMEOUT):
        async with our_server(binding, PLAIN, streaming=False) as (_, client):
            task = (await unary(client, request("hello"))).task
            with pytest.raises(PushNotificationNotSupportedError):  # -32003
                await client.create_task_push_notification_config(
                    TaskPushNotificationConfig(task_id=task.id, url="https://x.example")
                )
            # Without capabilities.extendedAgentCard the SDK returns the public card.
            card = await client.get_extended_agent_card(GetExtendedAgentCardRequest())
            assert card.name == "scenario-agent"
