"""Proves the interop harness: the official SDK client against the official SDK server.

Every A2A method is exercised over JSON-RPC and HTTP+JSON, under both asyncio and trio (the
SDK client is plain httpx and runs on either), plus raw-httpx checks of the exact wire.

Trio note: the SDK client's ``BaseClient._process_stream`` returns after a ``message`` event
without closing the transport's async generators, so under trio (which finalises abandoned
async generators itself) a streamed Message reply leaves a ``ResourceWarning: Async generator
... was garbage collected`` behind. asyncio closes such generators silently. The targeted
``filterwarnings`` mark below ignores exactly that warning for the SDK/httpx generators.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterator
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

from tests.interop.sdk_server import (
    MULTI_TURN_QUESTION,
    STREAM_CHUNKS,
    Binding,
    SdkServer,
    run_sdk_server,
    sdk_client,
)

if TYPE_CHECKING:
    from a2a.client import Client

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings(
        r"ignore:Async generator '(a2a\.client|httpx|httpcore)\..*' was garbage collected"
        r":ResourceWarning"
    ),
]

TIMEOUT = 10.0
BINDINGS: tuple[Binding, ...] = ("JSONRPC", "HTTP+JSON")
V1 = {"A2A-Version": "1.0"}
TERMINAL = {
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_REJECTED,
}


@pytest.fixture(params=["asyncio", "trio"], scope="module")
def anyio_backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend


@pytest.fixture(scope="module")
def sdk() -> Iterator[SdkServer]:
    with run_sdk_server() as server:
        yield server


@pytest.fixture(scope="module")
def sdk_plain() -> Iterator[SdkServer]:
    with run_sdk_server(push=False, extended_card=False) as server:
        yield server


@pytest.fixture(params=BINDINGS)
def binding(request: pytest.FixtureRequest) -> Binding:
    value: Binding = request.param
    return value


# --------------------------------------------------------------------------- helpers


def user_message(text: str, *, task_id: str = "", context_id: str = "") -> Message:
    return Message(
        message_id=uuid.uuid4().hex,
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
        task_id=task_id,
        context_id=context_id,
    )


def send_request(
    text: str, *, task_id: str = "", context_id: str = "", return_immediately: bool = False
) -> SendMessageRequest:
    return SendMessageRequest(
        message=user_message(text, task_id=task_id, context_id=context_id),
        configuration=SendMessageConfiguration(return_immediately=return_immediately),
    )


@asynccontextmanager
async def client_for(
    server: SdkServer, binding: Binding, *, streaming: bool = True
) -> AsyncIterator[Client]:
    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        client = await sdk_client(
            server.base_url, binding=binding, httpx_client=http, streaming=streaming
        )
        try:
            yield client
        finally:
            await client.close()


async def collect(stream: AsyncIterator[StreamResponse]) -> list[StreamResponse]:
    return [event async for event in stream]


async def send_blocking(client: Client, request: SendMessageRequest) -> StreamResponse:
    """``send_message`` on a ``streaming=False`` client yields exactly one StreamResponse."""
    (only,) = await collect(client.send_message(request))
    return only


def kinds(events: list[StreamResponse]) -> list[str | None]:
    return [e.WhichOneof("payload") for e in events]


def text_of(parts: Any) -> str:
    return "".join(p.text for p in parts)


async def sse_data(response: httpx.Response) -> list[str]:
    """The ``data:`` payloads of an SSE response, one entry per event."""
    events: list[str] = []
    chunks: list[str] = []
    async for line in response.aiter_lines():
        if not line:
            if chunks:
                events.append("\n".join(chunks))
                chunks = []
        elif line.startswith("data:"):
            chunks.append(line[5:].removeprefix(" "))
    if chunks:
        events.append("\n".join(chunks))
    return events


# --------------------------------------------------------------------------- card


async def test_card_declares_both_interfaces(sdk: SdkServer) -> None:
    with anyio.fail_after(TIMEOUT):
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            response = await http.get(sdk.card_url, headers=V1)
            assert response.status_code == 200
            card = response.json()
            assert card["supportedInterfaces"] == [
                {"url": sdk.jsonrpc_url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                {"url": sdk.rest_url, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
            ]
            assert card["capabilities"] == {
                "streaming": True,
                "pushNotifications": True,
                "extendedAgentCard": True,
            }
            assert "url" not in card
            assert "protocolVersion" not in card
            parsed = await A2ACardResolver(http, sdk.base_url).get_agent_card()
            assert parsed == sdk.card


async def test_card_flags_off(sdk_plain: SdkServer) -> None:
    with anyio.fail_after(TIMEOUT):
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            card = (await http.get(sdk_plain.card_url, headers=V1)).json()
            # The capability flags are `optional bool` (explicit presence): false is printed.
            assert card["capabilities"] == {
                "streaming": True,
                "pushNotifications": False,
                "extendedAgentCard": False,
            }


# --------------------------------------------------------------------------- SDK x SDK


async def test_send_blocking_echo(sdk: SdkServer, binding: Binding) -> None:
    with anyio.fail_after(TIMEOUT):
        async with client_for(sdk, binding, streaming=False) as client:
            reply = await send_blocking(client, send_request("hello sdk"))
            assert reply.HasField("task")
            task = reply.task
            assert task.status.state == TaskState.TASK_STATE_COMPLETED
            assert [a.artifact_id for a in task.artifacts] == ["echo"]
            assert text_of(task.artifacts[0].parts) == "hello sdk"
            assert task.history[0].role == Role.ROLE_USER
            assert text_of(task.history[0].parts) == "hello sdk"

            got = await client.get_task(GetTaskRequest(id=task.id, history_length=0))
            assert got.id == task.id
            assert got.status.state == TaskState.TASK_STATE_COMPLETED
            assert len(got.history) == 0


async def test_send_message_reply(sdk: SdkServer, binding: Binding) -> None:
    with anyio.fail_after(TIMEOUT):
        for streaming in (False, True):
            async with client_for(sdk, binding, streaming=streaming) as client:
                events = await collect(client.send_message(send_request("message hi")))
                assert kinds(events) == ["message"]
                message = events[0].message
                assert message.role == Role.ROLE_AGENT
                assert text_of(message.parts) == "message hi"
                assert message.context_id
                assert not message.task_id


async def test_streaming_chunks(sdk: SdkServer, binding: Binding) -> None:
    with anyio.fail_after(TIMEOUT):
        async with client_for(sdk, binding) as client:
            events = await collect(client.send_message(send_request("stream please")))
        assert kinds(events) == [
            "task",
            "status_update",
            *["artifact_update"] * len(STREAM_CHUNKS),
            "status_update",
        ]
        assert events[0].task.status.state == TaskState.TASK_STATE_SUBMITTED
        assert events[1].status_update.status.state == TaskState.TASK_STATE_WORKING
        chunks = [e.artifact_update for e in events[2:-1]]
        assert [c.artifact.artifact_id for c in chunks] == ["stream"] * len(STREAM_CHUNKS)
        assert [c.append for c in chunks] == [False, True, True]
        assert [c.last_chunk for c in chunks] == [False, False, True]
        assert "".join(text_of(c.artifact.parts) for c in chunks) == "".join(STREAM_CHUNKS)
        assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
        task_id = events[0].task.id
        assert {e.status_update.task_id for e in (events[1], events[-1])} == {task_id}


async def test_multi_turn(sdk: SdkServer, binding: Binding) -> None:
    with anyio.fail_after(TIMEOUT):
        async with client_for(sdk, binding, streaming=False) as client:
            first = (await send_blocking(client, send_request("input please"))).task
            assert first.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            assert text_of(first.status.message.parts) == MULTI_TURN_QUESTION
            assert first.status.message.role == Role.ROLE_AGENT

            follow_up = send_request("Ada", task_id=first.id, context_id=first.context_id)
            second = (await send_blocking(client, follow_up)).task
            assert second.id == first.id
            assert second.status.state == TaskState.TASK_STATE_COMPLETED
            assert [text_of(a.parts) for a in second.artifacts] == ["Ada"]
            texts = [text_of(m.parts) for m in second.history]
            assert texts[0] == "input please"
            assert texts[-1] == "Ada"

            # A terminal task takes no more messages: -32004.
            again = send_request("more", task_id=first.id, context_id=first.context_id)
            with pytest.raises(UnsupportedOperationError):
                await send_blocking(client, again)


async def test_return_immediately_list_subscribe_cancel(sdk: SdkServer, binding: Binding) -> None:
    with anyio.fail_after(TIMEOUT):
        context_id = uuid.uuid4().hex
        async with client_for(sdk, binding, streaming=False) as unary:
            request = send_request("sleep", context_id=context_id, return_immediately=True)
            task = (await send_blocking(unary, request)).task
            assert task.context_id == context_id
            assert task.status.state in {
                TaskState.TASK_STATE_SUBMITTED,
                TaskState.TASK_STATE_WORKING,
            }

            listed = await unary.list_tasks(ListTasksRequest(context_id=context_id))
            assert [t.id for t in listed.tasks] == [task.id]
            assert listed.total_size == 1
            assert listed.next_page_token == ""

        async with client_for(sdk, binding) as client:
            send, receive = anyio.create_memory_object_stream[StreamResponse](16)

            async def subscriber() -> None:
                async with send:
                    async for event in client.subscribe(SubscribeToTaskRequest(id=task.id)):
                        await send.send(event)

            async with anyio.create_task_group() as tg, receive:
                tg.start_soon(subscriber)
                snapshot = await receive.receive()
                assert snapshot.HasField("task")
                assert snapshot.task.id == task.id
                assert snapshot.task.status.state not in TERMINAL

                canceled = await client.cancel_task(CancelTaskRequest(id=task.id))
                assert canceled.status.state == TaskState.TASK_STATE_CANCELED
                rest = [event async for event in receive]  # ends when the server closes

            assert rest, "the subscription saw no event after the snapshot"
            last = rest[-1]
            assert last.status_update.status.state == TaskState.TASK_STATE_CANCELED

            got = await client.get_task(GetTaskRequest(id=task.id))
            assert got.status.state == TaskState.TASK_STATE_CANCELED
            with pytest.raises(TaskNotCancelableError):  # -32002
                await client.cancel_task(CancelTaskRequest(id=task.id))
            with pytest.raises(UnsupportedOperationError):  # -32004
                await collect(client.subscribe(SubscribeToTaskRequest(id=task.id)))


async def test_push_config_crud(sdk: SdkServer, binding: Binding) -> None:
    with anyio.fail_after(TIMEOUT):
        async with client_for(sdk, binding, streaming=False) as client:
            task = (await send_blocking(client, send_request("push target"))).task
            config = TaskPushNotificationConfig(
                task_id=task.id,
                id="cfg-1",
                url="http://127.0.0.1:9/hook",
                token="tok-1",
                authentication=AuthenticationInfo(scheme="Bearer", credentials="secret"),
            )
            created = await client.create_task_push_notification_config(config)
            assert created == config

            # An empty id becomes the task id (SDK behaviour).
            unnamed = TaskPushNotificationConfig(task_id=task.id, url="http://127.0.0.1:9/b")
            created2 = await client.create_task_push_notification_config(unnamed)
            assert created2.id == task.id

            got = await client.get_task_push_notification_config(
                GetTaskPushNotificationConfigRequest(task_id=task.id, id="cfg-1")
            )
            assert got == config

            listed = await client.list_task_push_notification_configs(
                ListTaskPushNotificationConfigsRequest(task_id=task.id)
            )
            assert sorted(c.id for c in listed.configs) == sorted(["cfg-1", task.id])

            for _ in range(2):  # delete is idempotent
                await client.delete_task_push_notification_config(
                    DeleteTaskPushNotificationConfigRequest(task_id=task.id, id="cfg-1")
                )

            with pytest.raises(TaskNotFoundError):  # unknown config id is -32001
                await client.get_task_push_notification_config(
                    GetTaskPushNotificationConfigRequest(task_id=task.id, id="cfg-1")
                )
            with pytest.raises(TaskNotFoundError):
                await client.list_task_push_notification_configs(
                    ListTaskPushNotificationConfigsRequest(task_id="no-such-task")
                )


async def test_extended_card_with_client_built_from_card(sdk: SdkServer, binding: Binding) -> None:
    with anyio.fail_after(TIMEOUT):
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            client = await sdk_client(sdk.card, binding=binding, httpx_client=http)
            card = await client.get_extended_agent_card(GetExtendedAgentCardRequest())
            assert card.name == "sdk-interop-agent (extended)"
            assert [s.id for s in card.skills] == ["echo", "secret"]
            await client.close()


async def test_errors(sdk: SdkServer, binding: Binding) -> None:
    with anyio.fail_after(TIMEOUT):
        async with client_for(sdk, binding, streaming=False) as client:
            with pytest.raises(TaskNotFoundError) as not_found:  # -32001
                await client.get_task(GetTaskRequest(id="no-such-task"))
            assert not_found.value.message == "Task not found"

            with pytest.raises(TaskNotFoundError):  # a client cannot pick a new task's id
                await send_blocking(client, send_request("hello", task_id="client-made-id"))

            old = ClientCallContext(service_parameters={"A2A-Version": "0.3"})
            with pytest.raises(VersionNotSupportedError):  # -32009
                await client.get_task(GetTaskRequest(id="whatever"), context=old)


async def test_flags_off(sdk_plain: SdkServer, binding: Binding) -> None:
    with anyio.fail_after(TIMEOUT):
        async with client_for(sdk_plain, binding, streaming=False) as client:
            task = (await send_blocking(client, send_request("hello"))).task
            with pytest.raises(PushNotificationNotSupportedError):  # -32003
                await client.create_task_push_notification_config(
                    TaskPushNotificationConfig(task_id=task.id, url="http://127.0.0.1:9/x")
                )
            # Without capabilities.extendedAgentCard the SDK client does not call; it
            # returns the public card.
            card = await client.get_extended_agent_card(GetExtendedAgentCardRequest())
            assert card == sdk_plain.card


# --------------------------------------------------------------------------- raw wire


async def test_wire_jsonrpc_send_message(sdk: SdkServer) -> None:
    with anyio.fail_after(TIMEOUT):
        async with httpx.AsyncClient(timeout=TIMEOUT, headers=V1) as http:
            body = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendMessage",
                "params": {
                    "message": {
                        "messageId": "m-1",
                        "role": "ROLE_USER",
                        "parts": [{"text": "wire hello"}],
                    }
                },
            }
            response = await http.post(sdk.jsonrpc_url, json=body)
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("application/json")
            reply = response.json()
            assert reply["jsonrpc"] == "2.0"
            assert reply["id"] == 1
            assert set(reply["result"]) == {"task"}
            task = reply["result"]["task"]
            assert set(task) == {"id", "contextId", "status", "artifacts", "history"}
            assert task["status"]["state"] == "TASK_STATE_COMPLETED"
            assert task["status"]["timestamp"].endswith("Z")
            assert task["artifacts"] == [
                {"artifactId": "echo", "name": "echo", "parts": [{"text": "wire hello"}]}
            ]
            assert task["history"][0] == {
                "messageId": "m-1",
                "contextId": task["contextId"],
                "taskId": task["id"],
                "role": "ROLE_USER",
                "parts": [{"text": "wire hello"}],
            }
            assert "kind" not in json.dumps(reply)

            # GetTask returns the bare Task.
            get = {"jsonrpc": "2.0", "id": "g", "method": "GetTask", "params": {"id": task["id"]}}
            got = (await http.post(sdk.jsonrpc_url, json=get)).json()
            assert got["result"]["id"] == task["id"]


async def test_wire_rest_send_message(sdk: SdkServer) -> None:
    with anyio.fail_after(TIMEOUT):
        async with httpx.AsyncClient(timeout=TIMEOUT, headers=V1) as http:
            body = {"message": {"messageId": "m-2", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}
            response = await http.post(f"{sdk.rest_url}/message:send", json=body)
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("application/a2a+json")
            task = response.json()["task"]
            assert task["status"]["state"] == "TASK_STATE_COMPLETED"
            got = await http.get(f"{sdk.rest_url}/tasks/{task['id']}")
            assert got.json()["id"] == task["id"]


async def test_wire_jsonrpc_stream(sdk: SdkServer) -> None:
    with anyio.fail_after(TIMEOUT):
        async with httpx.AsyncClient(timeout=TIMEOUT, headers=V1) as http:
            body = {
                "jsonrpc": "2.0",
                "id": "s1",
                "method": "SendStreamingMessage",
                "params": {
                    "message": {
                        "messageId": "m-3",
                        "role": "ROLE_USER",
                        "parts": [{"text": "stream"}],
                    }
                },
            }
            async with http.stream("POST", sdk.jsonrpc_url, json=body) as response:
                assert response.status_code == 200
                assert response.headers["content-type"].startswith("text/event-stream")
                frames = [json.loads(d) for d in await sse_data(response)]
        for frame in frames:
            assert frame["jsonrpc"] == "2.0"
            assert frame["id"] == "s1"
            assert len(frame["result"]) == 1
        results = [f["result"] for f in frames]
        assert [next(iter(r)) for r in results] == [
            "task",
            "statusUpdate",
            "artifactUpdate",
            "artifactUpdate",
            "artifactUpdate",
            "statusUpdate",
        ]
        first_chunk, second_chunk, last_chunk = (r["artifactUpdate"] for r in results[2:5])
        # ProtoJSON omits false booleans.
        assert "append" not in first_chunk
        assert "lastChunk" not in first_chunk
        assert second_chunk["append"] is True
        assert last_chunk["lastChunk"] is True
        assert "final" not in results[-1]["statusUpdate"]
        assert results[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_wire_rest_stream(sdk: SdkServer) -> None:
    with anyio.fail_after(TIMEOUT):
        async with httpx.AsyncClient(timeout=TIMEOUT, headers=V1) as http:
            body = {"message": {"messageId": "m-4", "role": "ROLE_USER", "parts": [{"text": "yo"}]}}
            url = f"{sdk.rest_url}/message:stream"
            async with http.stream("POST", url, json=body) as response:
                assert response.status_code == 200
                assert response.headers["content-type"].startswith("text/event-stream")
                events = [json.loads(d) for d in await sse_data(response)]
        assert [next(iter(e)) for e in events] == [
            "task",
            "statusUpdate",
            "artifactUpdate",
            "statusUpdate",
        ]
        assert all(len(e) == 1 for e in events)  # bare StreamResponse, no envelope


async def test_wire_errors(sdk: SdkServer) -> None:
    with anyio.fail_after(TIMEOUT):
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            get = {"jsonrpc": "2.0", "id": 7, "method": "GetTask", "params": {"id": "nope"}}
            reply = (await http.post(sdk.jsonrpc_url, json=get, headers=V1)).json()
            error = reply["error"]
            assert error["code"] == -32001
            assert error["data"][0]["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"
            assert error["data"][0]["reason"] == "TASK_NOT_FOUND"
            assert error["data"][0]["domain"] == "a2a-protocol.org"

            no_version = (await http.post(sdk.jsonrpc_url, json=get)).json()
            assert no_version["error"]["code"] == -32009

            rest = await http.get(f"{sdk.rest_url}/tasks/nope", headers=V1)
            assert rest.status_code == 404
            status = rest.json()["error"]
            assert status["code"] == 404
            assert status["status"] == "NOT_FOUND"
            assert status["details"][0]["reason"] == "TASK_NOT_FOUND"
