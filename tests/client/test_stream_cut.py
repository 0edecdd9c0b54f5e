"""A stream cut before the task is done: the typed error, and resuming with SubscribeToTask.

The agent is a scripted JSON-RPC stub on Hypercorn: its SendStreamingMessage sends the task
and a WORKING update, then drops the connection mid-body (or closes it cleanly, which is as
much a cut: A2A streams have no end marker). Its SubscribeToTask sends the snapshot and the
rest of the task.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from a2a_actors.client import (
    A2AClient,
    A2AConnectionError,
    EventStream,
    StreamInterruptedError,
)
from a2a_actors.protocol._models import StreamResponse, TaskState
from tests.client.stub_server import (
    StubApp,
    StubRequest,
    StubResponse,
    json_response,
    jsonrpc_result,
    serve_stub,
    sse,
)

TIMEOUT = 10.0
TASK_ID = "task-1"
CONTEXT_ID = "ctx-1"


def status(state: str, timestamp: str) -> dict[str, Any]:
    return {"state": state, "timestamp": timestamp}


WORKING = status("TASK_STATE_WORKING", "2026-01-01T00:00:01Z")
COMPLETED = status("TASK_STATE_COMPLETED", "2026-01-01T00:00:03Z")
SUBMITTED_TASK = {
    "id": TASK_ID,
    "contextId": CONTEXT_ID,
    "status": {"state": "TASK_STATE_SUBMITTED"},
}
ARTIFACT = {"artifactId": "a", "parts": [{"text": "done"}]}


def frame(request: StubRequest, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request.json()["id"], "result": result}


def update(state: dict[str, Any]) -> dict[str, Any]:
    return {"statusUpdate": {"taskId": TASK_ID, "contextId": CONTEXT_ID, "status": state}}


class CutAgent:
    """The stub's JSON-RPC endpoint.

    Args:
        clean_close: End the first stream cleanly instead of dropping the connection.
        first_events: How many events the first stream sends before the cut (0..2).
        snapshot_status: The status in the SubscribeToTask snapshot.
        terminal: SubscribeToTask answers -32004 (the task ended during the gap).
    """

    def __init__(
        self,
        *,
        clean_close: bool = False,
        first_events: int = 2,
        snapshot_status: dict[str, Any] = WORKING,
        terminal: bool = False,
    ) -> None:
        self.clean_close = clean_close
        self.first_events = first_events
        self.snapshot_status = snapshot_status
        self.terminal = terminal
        self.app = StubApp({("POST", "/"): self.handle})

    @property
    def methods(self) -> list[str]:
        return [r.json()["method"] for r in self.app.requests]

    async def handle(self, request: StubRequest) -> StubResponse:
        method = request.json()["method"]
        if method == "SendStreamingMessage":
            events = [frame(request, {"task": SUBMITTED_TASK}), frame(request, update(WORKING))]
            return sse(*events[: self.first_events], then_fail=not self.clean_close)
        if method == "SubscribeToTask":
            if self.terminal:
                error = {"code": -32004, "message": "Task is in terminal state"}
                return json_response({"jsonrpc": "2.0", "id": request.json()["id"], "error": error})
            snapshot = {**SUBMITTED_TASK, "status": self.snapshot_status}
            chunk = {"taskId": TASK_ID, "contextId": CONTEXT_ID, "artifact": ARTIFACT}
            return sse(
                frame(request, {"task": snapshot}),
                frame(request, {"artifactUpdate": chunk}),
                frame(request, update(COMPLETED)),
            )
        if method == "GetTask":
            task = {**SUBMITTED_TASK, "status": COMPLETED, "artifacts": [ARTIFACT]}
            return jsonrpc_result(request, task)
        raise AssertionError(method)  # pragma: no cover


async def collect_into(stream: EventStream, seen: list[StreamResponse]) -> None:
    async with stream:
        async for event in stream:
            seen.append(event)


def kinds(events: list[StreamResponse]) -> list[str]:
    return [type(e.payload).__name__ for e in events]


@pytest.mark.parametrize("clean_close", [False, True])
async def test_cut_raises_stream_interrupted(clean_close: bool) -> None:
    agent = CutAgent(clean_close=clean_close)
    seen: list[StreamResponse] = []
    with anyio.fail_after(TIMEOUT):
        async with serve_stub(agent.app) as url, A2AClient(url) as client:
            with pytest.raises(StreamInterruptedError) as caught:
                await collect_into(client.stream_message("work"), seen)
    assert kinds(seen) == ["Task", "TaskStatusUpdateEvent"]
    error = caught.value
    assert error.task_id == TASK_ID
    assert error.last_state is TaskState.WORKING
    assert not error.remote
    assert f"stream of task {TASK_ID} ended before a terminal or interrupted state" in str(error)
    assert agent.methods == ["SendStreamingMessage"]
    if clean_close:
        assert error.__cause__ is None
    else:  # the body was cut mid-chunk: the broken connection is the cause
        assert isinstance(error.__cause__, A2AConnectionError)


async def test_resubscribe_continues_and_skips_the_repeated_snapshot() -> None:
    agent = CutAgent()
    with anyio.fail_after(TIMEOUT):
        async with serve_stub(agent.app) as url, A2AClient(url, resubscribe=True) as client:
            stream = client.stream_message("work")
            async with stream:
                seen = [event async for event in stream]
    # The snapshot only repeated the WORKING status already seen: not yielded again.
    assert kinds(seen) == [
        "Task",
        "TaskStatusUpdateEvent",
        "TaskArtifactUpdateEvent",
        "TaskStatusUpdateEvent",
    ]
    assert agent.methods == ["SendStreamingMessage", "SubscribeToTask"]
    assert agent.app.requests[1].json()["params"] == {"id": TASK_ID}
    assert stream.resubscribes == 1
    assert stream.state is TaskState.COMPLETED
    assert stream.task is not None
    assert [a.artifact_id for a in stream.task.artifacts] == ["a"]


async def test_resubscribe_yields_a_snapshot_that_shows_progress() -> None:
    progressed = status("TASK_STATE_WORKING", "2026-01-01T00:00:02Z")
    agent = CutAgent(snapshot_status=progressed)
    with anyio.fail_after(TIMEOUT):
        async with (
            serve_stub(agent.app) as url,
            A2AClient(url) as client,
            client.stream_message("work", resubscribe=True) as events,
        ):
            seen = [event async for event in events]
    assert kinds(seen) == [
        "Task",
        "TaskStatusUpdateEvent",
        "Task",  # the snapshot: newer than what the stream had delivered
        "TaskArtifactUpdateEvent",
        "TaskStatusUpdateEvent",
    ]


async def test_resubscribe_after_the_task_ended() -> None:
    agent = CutAgent(terminal=True)
    with anyio.fail_after(TIMEOUT):
        async with (
            serve_stub(agent.app) as url,
            A2AClient(url, resubscribe=True) as client,
            client.stream_message("work") as events,
        ):
            seen = [event async for event in events]
    assert agent.methods == ["SendStreamingMessage", "SubscribeToTask", "GetTask"]
    assert kinds(seen) == ["Task", "TaskStatusUpdateEvent", "Task"]
    final = seen[-1].task
    assert final is not None
    assert final.status.state is TaskState.COMPLETED


async def test_cut_before_any_task_cannot_resubscribe() -> None:
    agent = CutAgent(first_events=0)
    with anyio.fail_after(TIMEOUT):
        async with serve_stub(agent.app) as url, A2AClient(url, resubscribe=True) as client:
            with pytest.raises(StreamInterruptedError) as caught:
                await collect_into(client.stream_message("work"), [])
    assert caught.value.task_id == ""
    assert agent.methods == ["SendStreamingMessage"]


async def test_resubscribe_budget() -> None:
    """A subscription that is cut again is resumed again, up to ``max_resubscribes``."""

    class AlwaysCut(CutAgent):
        async def handle(self, request: StubRequest) -> StubResponse:
            if request.json()["method"] == "SubscribeToTask":
                snapshot = {**SUBMITTED_TASK, "status": WORKING}
                return sse(frame(request, {"task": snapshot}), then_fail=True)
            return await super().handle(request)

    agent = AlwaysCut()
    with anyio.fail_after(TIMEOUT):
        async with (
            serve_stub(agent.app) as url,
            A2AClient(url, resubscribe=True, max_resubscribes=2) as client,
        ):
            with pytest.raises(StreamInterruptedError):
                await collect_into(client.stream_message("work"), [])
    assert agent.methods == ["SendStreamingMessage", "SubscribeToTask", "SubscribeToTask"]
