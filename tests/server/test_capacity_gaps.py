"""Capacity refusals (429) on every way of starting a task, and caps that hold under a burst.

``max_live_tasks`` refuses a *new* task with HTTP 429, ``Retry-After`` and the binding's
busy error (JSON-RPC -32050, REST ``RESOURCE_EXHAUSTED``), before anything exists: on the
streaming methods too (a JSON answer, not a stream), on the 0.3 methods and aliases, and
whatever the concurrency. ``max_running`` queues handlers instead of refusing them.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from quart.testing import QuartClient

from a2a_actors.runtime import Agent, TaskContext
from a2a_actors.server import ServerConfig

from .helpers import (
    JSON_HEADERS,
    TIMEOUT,
    envelope,
    rpc_result,
    running_app,
    send_params,
    served,
    sse_data,
    stream,
)

pytestmark = pytest.mark.anyio

LEGACY = {"Content-Type": "application/json"}  # no A2A-Version: the 0.3 protocol


def _legacy_params(text: str, task_id: str = "") -> dict[str, Any]:
    message: dict[str, Any] = {
        "kind": "message",
        "messageId": uuid.uuid4().hex,
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
    }
    if task_id:
        message["taskId"] = task_id
    return {"message": message}


def _assert_busy(status: int, headers: dict[str, str], raw: bytes, binding: str, what: Any) -> None:
    """A capacity refusal: 429, Retry-After of at least a second, the binding's busy error.

    0.3 has no busy code: its error is the generic -32603 with the reason, and the 429 and
    Retry-After say the rest.
    """
    lower = {k.lower(): v for k, v in headers.items()}
    assert status == 429, (what, status, raw)
    assert lower["content-type"] == "application/json", what
    assert int(lower["retry-after"]) >= 1, what
    error = json.loads(raw)["error"]
    assert "too many live tasks" in error["message"], what
    if binding == "rest":
        assert (error["code"], error["status"]) == (429, "RESOURCE_EXHAUSTED"), what
    elif binding == "rpc":
        assert error["code"] == -32050, what
    else:
        assert (error["code"], error["data"]) == (-32603, None), what


async def _fill(client: QuartClient) -> dict[str, Any]:
    """The one live task the cap allows: waiting for input, so it holds no running slot."""
    task: dict[str, Any] = (await rpc_result(client, "SendMessage", send_params("input")))["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    return task


async def test_streaming_calls_are_refused_with_429_before_any_stream() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=ServerConfig(max_live_tasks=1)) as client:
            held = await _fill(client)
            for path, body, binding in (
                ("/", envelope("SendStreamingMessage", send_params("stream")), "rpc"),
                ("/rest/message:stream", json.dumps(send_params("stream")).encode(), "rest"),
                ("/rest/acme/message:stream", json.dumps(send_params("stream")).encode(), "rest"),
            ):
                status, headers, raw = await stream(client, path, body)
                _assert_busy(status, headers, raw, binding, path)
            listed = await rpc_result(client, "ListTasks", {})
            assert [t["id"] for t in listed["tasks"]] == [held["id"]]  # nothing was created

            # a follow-up of the live task is no new task: it streams, and frees the slot
            status, headers, raw = await stream(
                client,
                "/rest/message:stream",
                json.dumps(send_params("Ada", task_id=held["id"])).encode(),
            )
            assert status == 200
            events = sse_data(raw)
            assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
            status, _, raw = await stream(
                client, "/", envelope("SendStreamingMessage", send_params("stream"))
            )
            assert status == 200
            last = sse_data(raw)[-1]["result"]["statusUpdate"]
            assert last["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_0_3_calls_are_refused_with_429() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=ServerConfig(max_live_tasks=1)) as client:
            held = await _fill(client)
            for method in ("message/send", "message/stream"):
                response = await client.post(
                    "/", data=envelope(method, _legacy_params("x")), headers=LEGACY
                )
                raw = await response.get_data(as_text=False)
                headers = dict(response.headers)
                _assert_busy(response.status_code, headers, raw, "0.3", method)
            for alias in ("/message:send", "/tasks/send"):
                response = await client.post(
                    alias, data=json.dumps(_legacy_params("x")).encode(), headers=LEGACY
                )
                raw = await response.get_data(as_text=False)
                _assert_busy(response.status_code, dict(response.headers), raw, "0.3", alias)
            listed = await rpc_result(client, "ListTasks", {})
            assert [t["id"] for t in listed["tasks"]] == [held["id"]]
            # the 0.3 follow-up of the live task goes through
            response = await client.post(
                "/",
                data=envelope("message/send", _legacy_params("Ada", held["id"])),
                headers=LEGACY,
            )
            answer = json.loads(await response.get_data(as_text=False))
            assert answer["result"]["status"]["state"] == "completed"
            response = await client.post(
                "/", data=envelope("message/send", _legacy_params("x")), headers=LEGACY
            )
            answer = json.loads(await response.get_data(as_text=False))
            assert answer["result"]["status"]["state"] == "completed"


class _Gate:
    """What the burst's handlers did: how many ran at once, at most, and how many got going."""

    def __init__(self) -> None:
        self.running = self.peak = self.started = 0
        self.release = anyio.Event()
        self._changed = anyio.Event()

    async def handle(self, ctx: TaskContext) -> str:
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            await ctx.update("gated")  # commits the task: a stream's first event comes now
            self.started += 1
            self._changed.set()
            self._changed = anyio.Event()
            await self.release.wait()
        finally:
            self.running -= 1
        return f"done {ctx.text}"

    async def wait_started(self, count: int) -> None:
        while self.started < count:
            await self._changed.wait()


@asynccontextmanager
async def _client(url: str) -> AsyncIterator[httpx.AsyncClient]:
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=TIMEOUT) as http:
        yield http


async def _start(http: httpx.AsyncClient, kind: str, n: int) -> tuple[str, Any]:
    """Start one task of the burst; ("accepted", task id) or ("refused", the refusal)."""
    params = send_params(f"burst {n}", configuration={"returnImmediately": True})
    binding = "rest" if kind.startswith("rest") else "rpc"
    if kind == "rpc-send":
        request = http.build_request(
            "POST", "/", content=envelope("SendMessage", params), headers=JSON_HEADERS
        )
    elif kind == "rpc-stream":
        request = http.build_request(
            "POST", "/", content=envelope("SendStreamingMessage", params), headers=JSON_HEADERS
        )
    else:
        path = "/rest/message:send" if kind == "rest-send" else "/rest/message:stream"
        request = http.build_request("POST", path, json=params, headers=JSON_HEADERS)
    response = await http.send(request, stream=True)
    try:
        if response.status_code != 200:
            raw = await response.aread()
            return "refused", (response.status_code, dict(response.headers), raw, binding, kind)
        if kind.endswith("stream"):
            lines = response.aiter_lines()
            async for line in lines:  # the first event: the Task, then leave the stream
                if line.startswith("data:"):
                    event = json.loads(line[5:])
                    task = event.get("result", event)["task"]
                    break
            await lines.aclose()  # type: ignore[attr-defined]
        else:
            body = json.loads(await response.aread())
            task = body.get("result", body)["task"]
        return "accepted", task["id"]
    finally:
        await response.aclose()


@pytest.mark.filterwarnings(
    r"ignore:Async generator '(httpx|httpcore)\..*' was garbage collected:ResourceWarning"
)
async def test_a_concurrent_burst_never_exceeds_the_caps() -> None:
    live_cap, running_cap, burst = 6, 2, 24
    kinds = ("rpc-send", "rpc-stream", "rest-send", "rest-stream")
    gate = _Gate()
    agent = Agent(handler=gate.handle, name="gated")
    config = ServerConfig(max_live_tasks=live_cap, max_running=running_cap)
    with anyio.fail_after(TIMEOUT * 3):
        async with served(agent, config) as url, _client(url) as http:
            outcomes: list[tuple[str, Any]] = []

            async def one(n: int) -> None:
                outcomes.append(await _start(http, kinds[n % len(kinds)], n))

            async with anyio.create_task_group() as tg:
                for n in range(burst):
                    tg.start_soon(one, n)
            accepted = [value for outcome, value in outcomes if outcome == "accepted"]
            refused = [value for outcome, value in outcomes if outcome == "refused"]
            # No task ends before the release, so exactly the cap was admitted.
            assert (len(accepted), len(refused)) == (live_cap, burst - live_cap)
            assert len(set(accepted)) == live_cap
            for refusal in refused:
                _assert_busy(*refusal)

            # Handlers beyond max_running wait their turn, SUBMITTED; none is refused.
            await gate.wait_started(running_cap)
            states: dict[str, int] = {}
            for task_id in accepted:
                reply = await http.post(
                    "/", content=envelope("GetTask", {"id": task_id}), headers=JSON_HEADERS
                )
                state = reply.json()["result"]["status"]["state"]
                states[state] = states.get(state, 0) + 1
            assert states == {
                "TASK_STATE_WORKING": running_cap,
                "TASK_STATE_SUBMITTED": live_cap - running_cap,
            }
            assert (gate.running, gate.peak) == (running_cap, running_cap)

            # Still full: one more is refused; released, every admitted task completes.
            late = await _start(http, "rpc-send", burst)
            assert late[0] == "refused"
            _assert_busy(*late[1])
            gate.release.set()
            for task_id in accepted:
                async with http.stream(
                    "POST",
                    "/",
                    content=envelope("SubscribeToTask", {"id": task_id}),
                    headers=JSON_HEADERS,
                ) as response:
                    body = await response.aread()
                if response.headers["content-type"].startswith("text/event-stream"):
                    last = sse_data(body)[-1]["result"]
                    state = (last.get("statusUpdate") or last["task"])["status"]["state"]
                    assert state == "TASK_STATE_COMPLETED", last
                else:  # ended before the subscription: a terminal task is not subscribable
                    assert json.loads(body)["error"]["code"] == -32004
                reply = await http.post(
                    "/", content=envelope("GetTask", {"id": task_id}), headers=JSON_HEADERS
                )
                assert reply.json()["result"]["status"]["state"] == "TASK_STATE_COMPLETED"
            assert gate.started == live_cap
            assert gate.peak == running_cap
            # The slots are free again.
            assert (await _start(http, "rest-send", burst + 1))[0] == "accepted"
