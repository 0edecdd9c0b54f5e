"""Agents that do not speak 1.0: a 0.3 agent, and one with no standard interface at all.

Both are scripted stubs on Hypercorn. The 0.3 agent serves its card only at the legacy
``/.well-known/agent.json`` and speaks 0.3 JSON-RPC (slash method names, ``kind`` tags,
lower-case states, ``final`` on the last status update). The other advertises only a custom
binding, so the client falls back to ``POST {url}/tasks/send`` with a 0.1-style answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from a2a_actors.client import A2AClient, LegacyTransport, RemoteAgent, TasksSendTransport
from a2a_actors.protocol._errors import A2AError, TaskNotFoundError, UnsupportedOperationError
from a2a_actors.protocol._models import Message, Task, TaskState
from tests.client.sdk_v0_3 import run_sdk_v0_3_server
from tests.client.stub_server import (
    StubApp,
    StubRequest,
    StubResponse,
    json_response,
    serve_stub,
    sse,
)

TIMEOUT = 10.0


def legacy_card(url: str) -> dict[str, Any]:
    return {
        "name": "legacy-agent",
        "description": "speaks A2A 0.3",
        "version": "0.3.0",
        "url": f"{url}/rpc",
        "preferredTransport": "JSONRPC",
        "protocolVersion": "0.3.0",
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "echo", "name": "Echo", "description": "echoes", "tags": ["echo"]}],
    }


def task_v0_3(text: str, state: str = "completed") -> dict[str, Any]:
    return {
        "kind": "task",
        "id": "t-03",
        "contextId": "c-03",
        "status": {"state": state, "timestamp": "2026-01-01T00:00:00Z"},
        "artifacts": [{"artifactId": "a", "parts": [{"kind": "text", "text": text}]}],
        "history": [
            {
                "kind": "message",
                "messageId": "m-1",
                "role": "user",
                "parts": [{"kind": "text", "text": text}],
                "contextId": "c-03",
                "taskId": "t-03",
            }
        ],
    }


class LegacyAgent:
    def __init__(self) -> None:
        self.url = ""
        self.app = StubApp(
            {
                ("GET", "/.well-known/agent.json"): self.card,
                ("POST", "/rpc"): self.rpc,
            }
        )

    @property
    def calls(self) -> list[StubRequest]:
        return [r for r in self.app.requests if r.path == "/rpc"]

    async def card(self, request: StubRequest) -> StubResponse:
        return json_response(legacy_card(self.url))

    async def rpc(self, request: StubRequest) -> StubResponse:
        body = request.json()
        method, params, rid = body["method"], body.get("params", {}), body["id"]

        def result(value: Any) -> dict[str, Any]:
            return {"jsonrpc": "2.0", "id": rid, "result": value}

        if method == "message/send":
            text = params["message"]["parts"][0]["text"]
            return json_response(result(task_v0_3(text)))
        if method == "message/stream":
            working = {
                "kind": "status-update",
                "taskId": "t-03",
                "contextId": "c-03",
                "status": {"state": "working"},
                "final": False,
            }
            done = {**working, "status": {"state": "input-required"}, "final": True}
            return sse(result(task_v0_3("s", "submitted")), result(working), result(done))
        if method == "tasks/get":
            if params["id"] != "t-03":
                error = {"code": -32001, "message": "Task not found", "data": None}
                return json_response({"jsonrpc": "2.0", "id": rid, "error": error})
            return json_response(result(task_v0_3("again")))
        raise AssertionError(method)  # pragma: no cover


async def test_v0_3_agent_via_legacy_card_path() -> None:
    agent = LegacyAgent()
    with anyio.fail_after(TIMEOUT):
        async with serve_stub(agent.app) as url:
            agent.url = url
            async with await A2AClient.connect(url, card_cache=None) as client:
                assert isinstance(client.transport, LegacyTransport)
                assert client.interface.protocol_version == "0.3"
                assert client.interface.url == f"{url}/rpc"

                task = await client.send_message("hello legacy", return_immediately=True)
                assert isinstance(task, Task)
                assert task.status.state is TaskState.COMPLETED
                assert task.artifacts[0].parts[0].text == "hello legacy"

                got = await client.get_task("t-03", history_length=0)
                assert got.history == ()  # 0.3 reads 0 as "all": trimmed client-side
                with pytest.raises(TaskNotFoundError) as missing:
                    await client.get_task("nope")
                assert missing.value.code == -32001
                assert missing.value.remote

                async with client.stream_message("stream legacy") as events:
                    seen = [event async for event in events]
                assert [type(e.payload).__name__ for e in seen] == [
                    "Task",
                    "TaskStatusUpdateEvent",
                    "TaskStatusUpdateEvent",
                ]
                assert events.state is TaskState.INPUT_REQUIRED

                with pytest.raises(UnsupportedOperationError, match="ListTasks"):
                    await client.list_tasks()

    paths = [r.path for r in agent.app.requests if r.method == "GET"]
    assert paths == ["/.well-known/agent-card.json", "/.well-known/agent.json"]
    send, get, _, stream = agent.calls
    assert send.headers["a2a-version"] == "0.3"
    wire = send.json()
    assert wire["method"] == "message/send"
    message = wire["params"]["message"]
    assert message["kind"] == "message"
    assert message["role"] == "user"
    assert message["parts"] == [{"kind": "text", "text": "hello legacy"}]
    assert wire["params"]["configuration"]["blocking"] is False
    assert get.json()["method"] == "tasks/get"
    assert stream.json()["method"] == "message/stream"


def tasks_send_card(url: str) -> dict[str, Any]:
    return {
        "name": "ancient-agent",
        "description": "speaks only tasks/send",
        "version": "0.0.1",
        "supportedInterfaces": [
            {
                "url": f"{url}/agent",
                "protocolBinding": "urn:example:custom-binding",
                "protocolVersion": "0.1",
            }
        ],
        "capabilities": {},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
    }


class AncientAgent:
    def __init__(self, *, bare: bool) -> None:
        self.url = ""
        self.bare = bare
        self.app = StubApp(
            {
                ("GET", "/.well-known/agent-card.json"): self.card,
                ("POST", "/agent/tasks/send"): self.send,
            }
        )

    async def card(self, request: StubRequest) -> StubResponse:
        return json_response(tasks_send_card(self.url))

    async def send(self, request: StubRequest) -> StubResponse:
        body = request.json()
        params = body["params"]
        text = params["message"]["parts"][0]["text"]
        if text == "reply":
            result: dict[str, Any] = {"role": "agent", "parts": [{"type": "text", "text": "hi"}]}
        else:
            result = {
                "id": params["id"],
                "sessionId": params["sessionId"],
                "status": {
                    "state": "completed",
                    "message": {
                        "role": "agent",
                        "parts": [{"type": "text", "text": "status note"}],
                    },
                },
                "artifacts": [
                    {
                        "name": "answer",
                        "index": 0,
                        "parts": [{"type": "text", "text": text.upper()}],
                    }
                ],
            }
        if self.bare:
            return json_response(result)
        return json_response({"jsonrpc": "2.0", "id": body["id"], "result": result})


@pytest.mark.parametrize("bare", [False, True])
async def test_tasks_send_fallback(bare: bool) -> None:
    agent = AncientAgent(bare=bare)
    with anyio.fail_after(TIMEOUT):
        async with serve_stub(agent.app) as url:
            agent.url = url
            async with await A2AClient.connect(url, card_cache=None) as client:
                assert isinstance(client.transport, TasksSendTransport)
                task = await client.send_message("shout", context_id="session-1")
                assert isinstance(task, Task)
                assert task.context_id == "session-1"
                assert task.status.state is TaskState.COMPLETED
                assert task.artifacts[0].artifact_id == "answer"
                assert task.artifacts[0].parts[0].text == "SHOUT"
                reply = await client.send_message("reply")
                assert isinstance(reply, Message)
                assert reply.text == "hi"
                with pytest.raises(UnsupportedOperationError):
                    await client.get_task(task.id)

                remote = RemoteAgent(client)
                assert not remote.streaming
                assert (await remote.call("via remote agent")).text == "VIA REMOTE AGENT"
                async with client.stream_message("streamed") as events:
                    (only,) = [event async for event in events]
                assert only.task is not None

    wire = agent.app.requests[1].json()
    assert wire["method"] == "tasks/send"
    params = wire["params"]
    assert params["sessionId"] == "session-1"
    assert params["id"]
    assert params["message"]["role"] == "user"
    assert params["message"]["parts"] == [{"kind": "text", "text": "shout", "type": "text"}]


@pytest.fixture(scope="module")
def sdk_v0_3() -> Iterator[str]:
    with run_sdk_v0_3_server() as url:
        yield url


async def test_against_the_sdk_v0_3_compat_server(sdk_v0_3: str) -> None:
    """Our 0.3 transport against the official SDK's 0.3 JSON-RPC, every 0.3 method."""
    with anyio.fail_after(TIMEOUT):
        async with await A2AClient.connect(sdk_v0_3, card_cache=None) as client:
            assert isinstance(client.transport, LegacyTransport)
            task = await client.send_message("hello legacy sdk")
            assert isinstance(task, Task)
            assert task.status.state is TaskState.COMPLETED
            assert task.artifacts[0].parts[0].text == "hello legacy sdk"
            assert (await client.get_task(task.id)).id == task.id

            reply = await client.send_message("message hi")
            assert isinstance(reply, Message)
            assert reply.text == "message hi"

            asked = await client.send_message("input please")
            assert isinstance(asked, Task)
            assert asked.status.state is TaskState.INPUT_REQUIRED
            done = await client.send_message("Ada", task_id=asked.id)
            assert isinstance(done, Task)
            assert done.status.state is TaskState.COMPLETED

            async with client.stream_message("stream please") as events:
                seen = [event async for event in events]
            assert events.state is TaskState.COMPLETED
            assert events.task is not None
            assert "".join(p.text or "" for p in events.task.artifacts[0].parts) == (
                "alpha beta gamma"
            )
            assert seen[0].task is not None

            sleeper = await client.send_message("sleep", return_immediately=True)
            assert isinstance(sleeper, Task)
            canceled = await client.cancel_task(sleeper.id)
            assert canceled.status.state is TaskState.CANCELED
            with pytest.raises(TaskNotFoundError):
                await client.get_task("no-such-task")
            with pytest.raises(A2AError):
                await client.cancel_task(sleeper.id)  # terminal: -32002
