"""``null`` means absent in everything the client decodes: cards, results, stream events.

A 1.0 agent here answers every method on both JSON bindings with the official SDK's JSON
plus a ``null`` for every field it left out (``tests.null_fields.nulled``: the SDK's own
parser reads those as absent), its card included; each result must equal what the SDK's
plain JSON decodes to. A 0.3 agent answers with the SDK's 0.3 pydantic objects dumped as
0.3 Python agents send them (a null for every unset field), its card at the well-known
path included; each result must equal what the same dump without nulls reads as. A card
whose 1.0 members are null is read from its 0.3 ones, and the ``tasks/send`` fallback reads a
0.1 answer whose unset members are null.
"""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
import httpx
import pytest
from a2a import types as sdk
from a2a.compat.v0_3 import types as v03

from a2a_actors.client import (
    A2AClient,
    JSONRPCTransport,
    LegacyTransport,
    RESTTransport,
    TasksSendTransport,
)
from a2a_actors.client._discovery import parse_card
from a2a_actors.protocol import _legacy_v0_3 as legacy_v0_3, _requests as rq, codec
from a2a_actors.protocol._card import AgentCard
from a2a_actors.protocol._errors import TaskNotFoundError
from a2a_actors.protocol._jsonrpc import METHODS
from a2a_actors.protocol._models import Message, Part, Role, StreamResponse, Task, TaskState
from tests.client.stub_server import StubApp, StubRequest, StubResponse, json_response, serve_stub
from tests.null_fields import (
    bare_v0_3,
    card_v0_3,
    card_v1,
    dump_v0_3,
    nulled,
    plain,
    task_v0_3,
    task_v1,
)

TIMEOUT = 10.0
BASE = "http://agent.test"
HOOK = "https://hooks.example.com"
TASK = "task-1"


def _config() -> Any:
    return sdk.TaskPushNotificationConfig(task_id=TASK, id="cfg", url=HOOK)


def _event(**member: Any) -> Any:
    return sdk.StreamResponse(**member)


#: The SDK's answer to each unary method (``None``: an empty result).
RESULTS: dict[str, Any] = {
    "SendMessage": sdk.SendMessageResponse(task=task_v1()),
    "GetTask": task_v1(),
    "ListTasks": sdk.ListTasksResponse(tasks=[task_v1()], page_size=50, total_size=1),
    "CancelTask": task_v1(state=sdk.TaskState.TASK_STATE_CANCELED),
    "CreateTaskPushNotificationConfig": _config(),
    "GetTaskPushNotificationConfig": _config(),
    "ListTaskPushNotificationConfigs": sdk.ListTaskPushNotificationConfigsResponse(
        configs=[_config()]
    ),
    "DeleteTaskPushNotificationConfig": None,
    "GetExtendedAgentCard": card_v1(f"{BASE}/rpc", f"{BASE}/rest"),
}
#: The SDK's events of either streaming method.
EVENTS = [
    _event(task=task_v1(state=sdk.TaskState.TASK_STATE_SUBMITTED)),
    _event(
        status_update=sdk.TaskStatusUpdateEvent(
            task_id=TASK,
            context_id="ctx-1",
            status=sdk.TaskStatus(state=sdk.TaskState.TASK_STATE_WORKING),
        )
    ),
    _event(
        artifact_update=sdk.TaskArtifactUpdateEvent(
            task_id=TASK,
            context_id="ctx-1",
            artifact=sdk.Artifact(artifact_id="a-1", parts=[sdk.Part(text="chunk")]),
        )
    ),
    _event(
        status_update=sdk.TaskStatusUpdateEvent(
            task_id=TASK,
            context_id="ctx-1",
            status=sdk.TaskStatus(state=sdk.TaskState.TASK_STATE_COMPLETED),
        )
    ),
]
#: Our params of each method (what the client sends; only the route matters here).
PARAMS: dict[str, object] = {
    "SendMessage": rq.SendMessageRequest(
        message=Message(message_id="m", role=Role.USER, parts=(Part(text="hi"),))
    ),
    "GetTask": rq.GetTaskRequest(id=TASK),
    "ListTasks": rq.ListTasksRequest(),
    "CancelTask": rq.CancelTaskRequest(id=TASK),
    "SubscribeToTask": rq.SubscribeToTaskRequest(id=TASK),
    "CreateTaskPushNotificationConfig": rq.TaskPushNotificationConfig(task_id=TASK, url=HOOK),
    "GetTaskPushNotificationConfig": rq.GetTaskPushNotificationConfigRequest(
        task_id=TASK, id="cfg"
    ),
    "ListTaskPushNotificationConfigs": rq.ListTaskPushNotificationConfigsRequest(task_id=TASK),
    "DeleteTaskPushNotificationConfig": rq.DeleteTaskPushNotificationConfigRequest(
        task_id=TASK, id="cfg"
    ),
    "GetExtendedAgentCard": rq.GetExtendedAgentCardRequest(),
}
PARAMS["SendStreamingMessage"] = PARAMS["SendMessage"]

#: REST route -> method (the verb and path the client's HTTP+JSON transport uses).
_REST = [
    ("POST", r"/rest/message:send", "SendMessage"),
    ("POST", r"/rest/message:stream", "SendStreamingMessage"),
    ("GET", r"/rest/tasks/[^/:]+", "GetTask"),
    ("GET", r"/rest/tasks", "ListTasks"),
    ("POST", r"/rest/tasks/[^/]+:cancel", "CancelTask"),
    ("POST", r"/rest/tasks/[^/]+:subscribe", "SubscribeToTask"),
    ("POST", r"/rest/tasks/[^/]+/pushNotificationConfigs", "CreateTaskPushNotificationConfig"),
    ("GET", r"/rest/tasks/[^/]+/pushNotificationConfigs/[^/]+", "GetTaskPushNotificationConfig"),
    ("GET", r"/rest/tasks/[^/]+/pushNotificationConfigs", "ListTaskPushNotificationConfigs"),
    (
        "DELETE",
        r"/rest/tasks/[^/]+/pushNotificationConfigs/[^/]+",
        "DeleteTaskPushNotificationConfig",
    ),
    ("GET", r"/rest/extendedAgentCard", "GetExtendedAgentCard"),
]


def _sse(items: list[Any]) -> httpx.Response:
    body = b"".join(f"data: {json.dumps(item)}\n\n".encode() for item in items)
    return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})


def agent_v1(request: httpx.Request) -> httpx.Response:
    """A 1.0 agent whose every answer has a null for each unset field."""
    path = request.url.path
    if path == "/.well-known/agent-card.json":
        return httpx.Response(200, json=nulled(card_v1(f"{BASE}/rpc", f"{BASE}/rest")))
    if path == "/rpc":
        call = json.loads(request.content)
        method, rid = call["method"], call["id"]

        def envelope(result: Any) -> dict[str, Any]:
            return {"jsonrpc": "2.0", "id": rid, "result": result, "error": None}

        if METHODS[method].streaming:
            return _sse([envelope(nulled(e)) for e in EVENTS])
        result = RESULTS[method]
        return httpx.Response(200, json=envelope(None if result is None else nulled(result)))
    for verb, pattern, method in _REST:
        if request.method == verb and re.fullmatch(pattern, path):
            if METHODS[method].streaming:
                # an "error" member of null is no error event
                return _sse([{**nulled(e), "error": None} for e in EVENTS])
            result = RESULTS[method]
            return httpx.Response(200, json={} if result is None else nulled(result))
    return httpx.Response(404)  # pragma: no cover


def _expected(method: str) -> object:
    """What the SDK's plain JSON (no nulls) decodes to."""
    result, spec = RESULTS[method], METHODS[method]
    return None if result is None else codec.decode(plain(result), spec.result or type(None))


@pytest.mark.parametrize(
    ("binding", "transport"),
    [("JSONRPC", JSONRPCTransport), ("HTTP+JSON", RESTTransport)],
)
async def test_every_result_and_event_with_nulls(binding: str, transport: type[object]) -> None:
    with anyio.fail_after(TIMEOUT):
        async with (
            httpx.AsyncClient(transport=httpx.MockTransport(agent_v1)) as http,
            await A2AClient.connect(
                BASE, bindings=(binding,), card_cache=None, http_client=http
            ) as client,
        ):
            assert isinstance(client.transport, transport)
            card = client.card
            assert card == codec.decode(plain(card_v1(f"{BASE}/rpc", f"{BASE}/rest")), AgentCard)
            assert card.capabilities.push_notifications is None
            assert card.security_schemes == {}
            for method, spec in METHODS.items():
                if spec.streaming:
                    async with client.transport.stream(method, PARAMS[method]) as events:
                        seen = [event async for event in events]
                    assert seen == [codec.decode(plain(e), StreamResponse) for e in EVENTS]
                    continue
                result_type: type[object] = spec.result or type(None)
                got = await client.transport.call(method, PARAMS[method], result_type)
                assert got == _expected(method), method


# -- A2A 0.3 ---------------------------------------------------------------------------------


def _push_v0_3(config_id: str = "cfg") -> v03.TaskPushNotificationConfig:
    return v03.TaskPushNotificationConfig(
        task_id="t-03",
        push_notification_config=v03.PushNotificationConfig(id=config_id, url=HOOK),
    )


_STATUS_V0_3 = v03.TaskStatusUpdateEvent(
    task_id="t-03",
    context_id="c-03",
    status=v03.TaskStatus(state=v03.TaskState.completed),
    final=True,
)
#: The 0.3 agent's result of each 1.0 method (a list: the events of a stream).
RESULTS_V0_3: dict[str, Any] = {
    "SendMessage": task_v0_3(),
    "SendStreamingMessage": [task_v0_3(state=v03.TaskState.working), _STATUS_V0_3],
    "GetTask": task_v0_3(),
    "CancelTask": task_v0_3(state=v03.TaskState.canceled),
    "SubscribeToTask": [_STATUS_V0_3],
    "CreateTaskPushNotificationConfig": _push_v0_3(),
    "GetTaskPushNotificationConfig": _push_v0_3(),
    "ListTaskPushNotificationConfigs": [_push_v0_3(), _push_v0_3("c2")],
    "DeleteTaskPushNotificationConfig": None,
    "GetExtendedAgentCard": card_v0_3("https://legacy.example.com/rpc"),
}


class LegacyAgent:
    """A 0.3 Python agent as the interop kit has it: a null for every unset field."""

    def __init__(self) -> None:
        self.url = ""
        self.app = StubApp(
            {("GET", "/.well-known/agent-card.json"): self.card, ("POST", "/rpc"): self.rpc}
        )

    async def card(self, request: StubRequest) -> StubResponse:
        return json_response(dump_v0_3(card_v0_3(f"{self.url}/rpc")))

    async def rpc(self, request: StubRequest) -> StubResponse:
        call = request.json()
        method, rid = legacy_v0_3.V0_3_METHODS[call["method"]], call["id"]
        if method == "GetTask" and call["params"]["id"] == "nope":
            error = v03.JSONRPCErrorResponse(id=rid, error=v03.TaskNotFoundError())
            return json_response(dump_v0_3(error))
        result = RESULTS_V0_3[method]
        if METHODS[method].streaming:  # one SDK success response per event
            responses = [v03.SendStreamingMessageSuccessResponse(id=rid, result=r) for r in result]
            chunks = [f"data: {json.dumps(dump_v0_3(r))}\n\n".encode() for r in responses]
            return StubResponse(200, {"content-type": "text/event-stream"}, chunks=chunks)
        if method == "ListTaskPushNotificationConfigs":
            listed = v03.ListTaskPushNotificationConfigSuccessResponse(id=rid, result=result)
            return json_response(dump_v0_3(listed))
        if result is None:
            deleted = v03.DeleteTaskPushNotificationConfigSuccessResponse(id=rid, result=None)
            return json_response(dump_v0_3(deleted))
        return json_response({"jsonrpc": "2.0", "id": rid, "result": dump_v0_3(result)})


def _bare(result: Any) -> Any:
    return [bare_v0_3(r) for r in result] if isinstance(result, list) else bare_v0_3(result)


async def test_a_0_3_agent_writing_null_for_every_unset_field() -> None:
    agent = LegacyAgent()
    with anyio.fail_after(TIMEOUT):
        async with serve_stub(agent.app) as url:
            agent.url = url
            async with await A2AClient.connect(url, card_cache=None) as client:
                assert isinstance(client.transport, LegacyTransport)
                card = client.card
                assert card is not None
                assert card.supported_interfaces[0].url == f"{url}/rpc"
                assert card.capabilities.streaming is True
                assert [e.uri for e in card.capabilities.extensions] == ["urn:ext"]
                assert sorted(card.security_schemes) == ["key", "oauth"]

                for method, spec in METHODS.items():
                    if method == "ListTasks":
                        continue  # no 0.3 method
                    result = RESULTS_V0_3[method]
                    if spec.streaming:
                        async with client.transport.stream(method, PARAMS[method]) as events:
                            seen = [event async for event in events]
                        expected = [legacy_v0_3.result_from_v0_3(method, r) for r in _bare(result)]
                        assert seen == expected, method
                        continue
                    result_type: type[object] = spec.result or type(None)
                    got = await client.transport.call(method, PARAMS[method], result_type)
                    bare = None if result is None else _bare(result)
                    assert got == legacy_v0_3.result_from_v0_3(method, bare), method

                task = await client.get_task("t-03")
                assert task.status.state is TaskState.COMPLETED
                assert task.status.message is not None
                assert task.status.message.parts[1].data == {"kept": None, "list": [None]}
                with pytest.raises(TaskNotFoundError):
                    await client.get_task("nope")


def test_a_card_with_null_1_0_members_is_read_as_0_3() -> None:
    card = dump_v0_3(card_v0_3("https://legacy.example.com/rpc"))
    parsed = parse_card(json.dumps({**card, "supportedInterfaces": None}).encode())
    assert [i.url for i in parsed.supported_interfaces] == ["https://legacy.example.com/rpc"]
    bare = bare_v0_3(card_v0_3("https://legacy.example.com/rpc"))
    assert parsed == parse_card(json.dumps(bare).encode())


async def test_a_tasks_send_agent_writing_nulls() -> None:
    """The ``tasks/send`` fallback: a 0.1 answer whose unset members are null."""
    card = {
        "name": "ancient",
        "description": "tasks/send only",
        "version": "0.0.1",
        "supportedInterfaces": [
            {"url": f"{BASE}/agent", "protocolBinding": "urn:x:custom", "protocolVersion": "0.1"}
        ],
        "capabilities": {"streaming": None, "extensions": None},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
        "documentationUrl": None,
        "provider": None,
    }
    answer = {
        "id": "t-01",
        "sessionId": "s-01",
        "contextId": None,
        "kind": None,
        "status": {
            "state": "completed",
            "message": {
                "role": "agent",
                "messageId": None,
                "parts": [{"type": None, "text": "ok"}],
            },
            "timestamp": None,
        },
        "artifacts": [
            {"name": "answer", "artifactId": None, "parts": [{"type": "text", "text": "X"}]}
        ],
        "history": None,
        "metadata": None,
    }

    def agent(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/.well-known/agent-card.json":
            return httpx.Response(200, json=card)
        assert request.url.path == "/agent/tasks/send"
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": 1, "result": answer})

    with anyio.fail_after(TIMEOUT):
        async with (
            httpx.AsyncClient(transport=httpx.MockTransport(agent)) as http,
            await A2AClient.connect(BASE, card_cache=None, http_client=http) as client,
        ):
            assert isinstance(client.transport, TasksSendTransport)
            task = await client.send_message("hi")
    assert isinstance(task, Task)
    assert (task.id, task.context_id, task.status.state) == ("t-01", "s-01", TaskState.COMPLETED)
    assert task.status.message is not None
    assert task.status.message.text == "ok"
    assert task.status.message.message_id  # generated, as for a 0.1 message without one
    assert (task.artifacts[0].artifact_id, task.artifacts[0].parts[0].text) == ("answer", "X")
    assert task.history == ()
