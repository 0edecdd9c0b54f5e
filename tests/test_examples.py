"""Every example, served on loopback Hypercorn, answers as its docstring says."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx

from a2a_actors.protocol._sse import SSEParser
from examples import conformance, echo, multi_turn, sleeper, streaming
from tests.server.helpers import served

TIMEOUT = 15.0
V1 = {"A2A-Version": "1.0", "Content-Type": "application/json"}


class Peer:
    """A tiny JSON-RPC caller for one served example."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http = http
        self.url = url

    async def call(self, method: str, params: Any, **headers: str) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        response = await self.http.post(f"{self.url}/", json=body, headers={**V1, **headers})
        answer: dict[str, Any] = response.json()
        return answer

    async def result(self, method: str, params: Any) -> Any:
        answer = await self.call(method, params)
        assert "result" in answer, answer
        return answer["result"]

    async def stream(self, method: str, params: Any) -> list[dict[str, Any]]:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        response = await self.http.post(f"{self.url}/", json=body, headers=V1)
        assert response.headers["content-type"].startswith("text/event-stream"), response.text
        events = SSEParser().feed(response.content)
        return [json.loads(e.data)["result"] for e in events]


@asynccontextmanager
async def peer(target: object) -> AsyncIterator[Peer]:
    async with served(target) as url, httpx.AsyncClient(timeout=TIMEOUT) as http:
        yield Peer(http, url)


def send(text: str, *, mid: str = "", task_id: str = "", **configuration: Any) -> dict[str, Any]:
    message: dict[str, Any] = {
        "messageId": mid or uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    }
    if task_id:
        message["taskId"] = task_id
    params: dict[str, Any] = {"message": message}
    if configuration:
        params["configuration"] = configuration
    return params


def status_text(task: dict[str, Any]) -> str:
    return "".join(p.get("text", "") for p in task["status"]["message"]["parts"])


async def test_echo() -> None:
    with anyio.fail_after(TIMEOUT):
        async with peer(echo.agent) as agent:
            task = (await agent.result("SendMessage", send("hello")))["task"]
            assert task["status"]["state"] == "TASK_STATE_COMPLETED"
            assert task["artifacts"] == [
                {"artifactId": "echo", "name": "echo", "parts": [{"text": "hello"}]}
            ]


async def test_streaming() -> None:
    with anyio.fail_after(TIMEOUT):
        async with peer(streaming.agent) as agent:
            events = await agent.stream("SendStreamingMessage", send("the quick brown fox"))
            assert [next(iter(e)) for e in events] == [
                "task",
                "statusUpdate",
                *["artifactUpdate"] * 4,
                "statusUpdate",
            ]
            chunks = [e["artifactUpdate"] for e in events[2:-1]]
            assert {c["artifact"]["artifactId"] for c in chunks} == {"words"}
            assert [c.get("append", False) for c in chunks] == [False, True, True, True]
            assert [c.get("lastChunk", False) for c in chunks] == [False, False, False, True]
            text = "".join(c["artifact"]["parts"][0]["text"] for c in chunks)
            assert text == "the quick brown fox"
            assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_multi_turn() -> None:
    with anyio.fail_after(TIMEOUT):
        async with peer(multi_turn.agent) as agent:
            first = (await agent.result("SendMessage", send("hi")))["task"]
            assert first["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
            assert status_text(first) == multi_turn.QUESTION
            done = (await agent.result("SendMessage", send("Ada", task_id=first["id"])))["task"]
            assert done["status"]["state"] == "TASK_STATE_COMPLETED"
            assert status_text(done) == "Hello, Ada!"


async def test_sleeper() -> None:
    with anyio.fail_after(TIMEOUT):
        async with peer(sleeper.agent) as agent:
            short = (await agent.result("SendMessage", send("0.01")))["task"]
            assert short["status"]["state"] == "TASK_STATE_COMPLETED"
            assert status_text(short) == "done after 0.01 s"
            events = await agent.stream("SendStreamingMessage", send("1"))
            updates = [e["statusUpdate"] for e in events if "statusUpdate" in e]
            texts = ["".join(p["text"] for p in u["status"]["message"]["parts"]) for u in updates]
            assert texts == ["sleeping 1 s", "slept 1 s", "done after 1 s"]

            forever = (await agent.result("SendMessage", send("forever", returnImmediately=True)))[
                "task"
            ]
            canceled = await agent.result("CancelTask", {"id": forever["id"]})
            assert canceled["status"]["state"] == "TASK_STATE_CANCELED"

            nonsense = (await agent.result("SendMessage", send("soon")))["task"]
            assert nonsense["status"]["state"] == "TASK_STATE_REJECTED"


def test_conformance_prefixes_longest_first() -> None:
    behaviour = conformance.behaviour_of
    assert behaviour("tck-artifact-file-url-1") == "artifact-url"
    assert behaviour("tck-artifact-file-1") == "artifact-file"
    assert behaviour("tck-stream-artifact-chunked-1") == "stream-chunked"
    assert behaviour("tck-stream-001-x") == "stream"
    assert behaviour("test-resubscribe-message-id-9") == "slow"
    assert behaviour("tck-send-003") == "echo"


async def test_conformance_full_profile_behaviours() -> None:
    with anyio.fail_after(TIMEOUT):
        async with peer(conformance.agent) as agent:
            done = (await agent.result("SendMessage", send("x", mid="tck-complete-task-1")))["task"]
            assert done["status"]["state"] == "TASK_STATE_COMPLETED"
            assert status_text(done) == "Hello from TCK"

            # input-required stays input-required on follow-ups, then completes
            waiting = (await agent.result("SendMessage", send("x", mid="tck-input-required-1")))[
                "task"
            ]
            assert waiting["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
            again = (
                await agent.result(
                    "SendMessage", send("y", mid="tck-input-required-1", task_id=waiting["id"])
                )
            )["task"]
            assert again["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
            finished = (
                await agent.result(
                    "SendMessage", send("z", mid="tck-complete-task-1", task_id=waiting["id"])
                )
            )["task"]
            assert finished["status"]["state"] == "TASK_STATE_COMPLETED"
            assert [
                m["parts"][0]["text"] for m in finished["history"] if m["role"] == "ROLE_USER"
            ] == [
                "x",
                "y",
                "z",
            ]

            parts = {}
            for mid in (
                "tck-artifact-text",
                "tck-artifact-file",
                "tck-artifact-file-url",
                "tck-artifact-data",
            ):
                task = (await agent.result("SendMessage", send("x", mid=f"{mid}-1")))["task"]
                assert task["status"]["state"] == "TASK_STATE_COMPLETED"
                parts[mid] = task["artifacts"][0]["parts"][0]
            assert parts["tck-artifact-text"] == {"text": "Generated text content"}
            assert parts["tck-artifact-file"]["mediaType"] == "text/plain"
            assert parts["tck-artifact-file"]["filename"] == "output.txt"
            assert base64.b64decode(parts["tck-artifact-file"]["raw"]) == conformance.FILE_BYTES
            assert parts["tck-artifact-file-url"] == {
                "url": "https://example.com/output.txt",
                "mediaType": "text/plain",
                "filename": "output.txt",
            }
            assert parts["tck-artifact-data"]["data"] == {"key": "value", "count": 42}

            reply = await agent.result("SendMessage", send("x", mid="tck-message-response-1"))
            assert reply["message"]["parts"] == [{"text": "Direct message response"}]

            events = await agent.stream("SendStreamingMessage", send("x", mid="tck-stream-001"))
            assert [next(iter(e)) for e in events] == [
                "task",
                "statusUpdate",
                "artifactUpdate",
                "statusUpdate",
            ]
            assert events[1]["statusUpdate"]["status"]["state"] == "TASK_STATE_WORKING"
            assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
            events = await agent.stream(
                "SendStreamingMessage", send("x", mid="tck-stream-artifact-chunked-1")
            )
            chunks = [e["artifactUpdate"] for e in events if "artifactUpdate" in e]
            assert [c.get("lastChunk", False) for c in chunks] == [False, False, True]

            rejected = (await agent.result("SendMessage", send("x", mid="tck-reject-task-1")))[
                "task"
            ]
            assert rejected["status"]["state"] == "TASK_STATE_REJECTED"
            echoed = (await agent.result("SendMessage", send("plain", mid="tck-send-003")))["task"]
            assert echoed["artifacts"][0]["parts"] == [{"text": "plain"}]

            refused = await agent.call("SendMessage", send("x", mid="tck-cap-ext-004-jsonrpc"))
            assert refused["error"]["code"] == -32008
            ok = await agent.call(
                "SendMessage",
                send("x", mid="tck-cap-ext-004-jsonrpc"),
                **{"A2A-Extensions": conformance.TCK_EXTENSION},
            )
            assert ok["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            rest = await agent.http.post(
                f"{agent.url}/rest/message:send",
                json=send("x", mid="tck-cap-ext-004-http-json"),
                headers=V1,
            )
            assert rest.status_code == 400
            assert rest.json()["error"]["details"][0]["reason"] == "EXTENSION_SUPPORT_REQUIRED"


async def test_conformance_minimal_profile() -> None:
    with anyio.fail_after(TIMEOUT):
        async with peer(conformance.minimal) as agent:
            done = (await agent.result("SendMessage", send("x", mid="tck-complete-task-2")))["task"]
            assert status_text(done) == "Hello from TCK"
            error = await agent.call("SendStreamingMessage", send("x", mid="tck-stream-001"))
            assert error["error"]["code"] == -32004
            card = (await agent.http.get(f"{agent.url}/.well-known/agent-card.json")).json()
            assert card["capabilities"] == {
                "streaming": False,
                "pushNotifications": False,
                "extendedAgentCard": False,
            }
