"""The cancel cascade when cancelling a child goes wrong, across real loopback servers.

A parent (served with an Orchestrator whose ``cancel_timeout`` is :data:`CANCEL_TIMEOUT`)
delegates to a child agent on a server of its own, and is then cancelled. In front of the
child's app sits :class:`CallLog`, an ASGI middleware that records every call and can
script what happens to each CancelTask: passed on, stalled (never answered: a hop that
hangs), or answered 503 (a proxy failing). Each failure branch of the cancel is driven:

* an attempt that times out is retried, and the retry cancels the child;
* an attempt that fails is retried, likewise;
* a child that ended before the cancel reached it (TaskNotCancelable) is read back with
  GetTask, and recorded as it ended;
* a child server that is gone: both attempts fail, the parent still ends CANCELED at once,
  and the child is recorded as last seen, not as canceled;
* a child that never answers: ``cancel_timeout`` bounds each of the two attempts, and the
  parent's own cancel returns after them.

The same branches hold for the cascade's second half: a child whose question the parent
left unanswered (``relay_input=False``) is canceled when the parent's task ends.

No sleeps: the tests wait on the agents' events and on the middleware's.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.abc
import pytest

from a2a_actors.client import A2AClient
from a2a_actors.protocol._models import StreamResponse, Task, TaskState
from a2a_actors.runtime import Agent, TaskContext
from a2a_actors.server import ServerConfig, create_app, serve
from orchestrator import (
    ChildRecord,
    HopRecord,
    InputRequired,
    Orchestrator,
    delegate,
    stream_delegate,
)

from .helpers import TIMEOUT, get_task, record_of, served

pytestmark = pytest.mark.filterwarnings(
    # a stalled or refused call leaves httpx's body generators to trio's GC hook
    r"ignore:Async generator '(httpx|httpcore)\..*' was garbage collected:ResourceWarning"
)

CANCEL_TIMEOUT = 2.0

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class CallLog:
    """ASGI middleware: records the A2A method of every call; scripts each CancelTask.

    ``script[i]`` says what happens to the (i+1)-th CancelTask: ``"pass"`` (served), ``"stall"``
    (never answered) or ``"fail"`` (answered 503 without reaching the app); later ones pass.
    """

    def __init__(self, app: ASGIApp, script: Sequence[str]) -> None:
        self._app = app
        self._script = list(script)
        self.methods: list[str] = []
        self._changed = anyio.Event()

    @property
    def cancels(self) -> int:
        return self.methods.count("CancelTask")

    async def wait_for(self, method: str, count: int) -> None:
        while self.methods.count(method) < count:
            await self._changed.wait()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        messages: list[Message] = []
        body = b""
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        method = _method_of(scope, body)
        self.methods.append(method)
        self._changed.set()
        self._changed = anyio.Event()
        if method == "CancelTask":
            nth = self.cancels
            action = self._script[nth - 1] if nth <= len(self._script) else "pass"
            if action == "stall":
                await anyio.sleep_forever()
            if action == "fail":
                await send(
                    {
                        "type": "http.response.start",
                        "status": 503,
                        "headers": [(b"content-type", b"text/plain")],
                    }
                )
                await send({"type": "http.response.body", "body": b"proxy hiccup"})
                return
        replay = iter(messages)

        async def replayed() -> Message:
            return next(replay, None) or await receive()

        await self._app(scope, replayed, send)


def _method_of(scope: Scope, body: bytes) -> str:
    """The A2A method of a request: JSON-RPC's ``method``, else the REST route's."""
    path: str = scope["path"]
    if path.endswith(":cancel"):
        return "CancelTask"
    if scope["method"] == "POST" and path == "/":
        try:
            return str(json.loads(body).get("method"))
        except (ValueError, AttributeError):
            return "?"
    if scope["method"] == "GET" and "/tasks/" in path and ":" not in path.rsplit("/", 1)[-1]:
        return "GetTask"
    return f"{scope['method']} {path}"


@dataclass
class ChildServer:
    url: str
    calls: CallLog
    stop: Callable[[], Awaitable[None]]


@asynccontextmanager
async def child_server(agent: Agent, script: Sequence[str] = ()) -> AsyncIterator[ChildServer]:
    """``agent`` served on loopback behind a :class:`CallLog`; ``stop()`` shuts it down."""
    app = create_app(agent, ServerConfig(graceful_timeout=0.5), backend="trio")
    inner: Any = app.asgi_app  # Quart's precise ASGI types, for our generic ones
    calls = CallLog(inner, script)
    app.asgi_app = calls  # type: ignore[method-assign,assignment]
    server_scope = anyio.CancelScope()
    stopped = anyio.Event()

    async def run(*, task_status: anyio.abc.TaskStatus[str]) -> None:
        try:
            with server_scope:
                await serve(app, task_status=task_status)
        finally:
            stopped.set()

    async def stop() -> None:
        server_scope.cancel()
        await stopped.wait()

    async with anyio.create_task_group() as tg:
        url: str = await tg.start(run)
        try:
            yield ChildServer(url, calls, stop)
        finally:
            tg.cancel_scope.cancel()


class Child:
    """The child agent: says WORKING, then works until released (or cancelled)."""

    def __init__(self) -> None:
        self.release = anyio.Event()
        self.exited = anyio.Event()
        self.task_id = ""
        self.agent = Agent(handler=self._handle, name="child")

    async def _handle(self, ctx: TaskContext) -> str:
        try:
            self.task_id = ctx.task_id
            await ctx.update("working")
            await self.release.wait()
            return "child done"
        finally:
            self.exited.set()


class Parent:
    """A parent that delegates to the child and signals once it has seen the child work.

    It follows the child to its end, or with ``leave_early`` stops reading the child there
    and leaves the delegation when released (or cancelled): leaving a delegation early
    cancels the child.
    """

    def __init__(self, child_url: str, *, leave_early: bool = False) -> None:
        self.saw_working = anyio.Event()
        self.leave = anyio.Event()
        self.agent = Agent(handler=self._handle, name="parent")
        self._child_url = child_url
        self._leave_early = leave_early

    async def _handle(self, ctx: TaskContext) -> str:
        async with stream_delegate(ctx, self._child_url, ctx.text) as events:
            async for event in events:
                if _state(event) is TaskState.WORKING:
                    self.saw_working.set()  # recorded in the parent's hop record by now
                    if self._leave_early:
                        break
            if self._leave_early:
                await self.leave.wait()
                return "left"
            return events.result().text


def _state(event: StreamResponse) -> TaskState | None:
    if event.task is not None:
        return event.task.status.state
    if event.status_update is not None:
        return event.status_update.status.state
    return None


@asynccontextmanager
async def parent_client(parent: Agent) -> AsyncIterator[tuple[str, A2AClient]]:
    """``parent`` served (orchestrated, with the test's cancel timeout); a client of it."""
    async with (
        served(parent, orchestrator=lambda: Orchestrator(cancel_timeout=CANCEL_TIMEOUT)) as urls,
        await A2AClient.connect(urls[0]) as client,
    ):
        yield urls[0], client


async def start(client: A2AClient) -> Task:
    task = await client.send_message("go", return_immediately=True)
    assert isinstance(task, Task)
    return task


def only_child(record: HopRecord) -> ChildRecord:
    (child,) = record.children
    return child


async def test_a_cancel_attempt_that_times_out_is_retried() -> None:
    child = Child()
    with anyio.fail_after(TIMEOUT):
        async with child_server(child.agent, ["stall"]) as server:
            parent = Parent(server.url)
            async with parent_client(parent.agent) as (_, client):
                task = await start(client)
                await parent.saw_working.wait()
                began = anyio.current_time()
                canceled = await client.cancel_task(task.id)
                elapsed = anyio.current_time() - began
            assert canceled.status.state is TaskState.CANCELED
            assert elapsed >= CANCEL_TIMEOUT  # the first attempt waited out its timeout
            assert server.calls.cancels == 2
            record = record_of(canceled)
            entry = only_child(record)
            assert (entry.task_id, entry.state) == (child.task_id, "TASK_STATE_CANCELED")
            assert entry.ended_at is not None
            assert record.canceled_children == [child.task_id]
            assert child.exited.is_set()
            assert (await get_task(server.url, child.task_id)).status.state is TaskState.CANCELED


async def test_a_cancel_attempt_that_fails_is_retried() -> None:
    child = Child()
    with anyio.fail_after(TIMEOUT):
        async with child_server(child.agent, ["fail"]) as server:
            parent = Parent(server.url)
            async with parent_client(parent.agent) as (_, client):
                task = await start(client)
                await parent.saw_working.wait()
                canceled = await client.cancel_task(task.id)
            assert canceled.status.state is TaskState.CANCELED
            assert server.calls.cancels == 2
            record = record_of(canceled)
            assert only_child(record).state == "TASK_STATE_CANCELED"
            assert record.canceled_children == [child.task_id]
            assert child.exited.is_set()
            assert (await get_task(server.url, child.task_id)).status.state is TaskState.CANCELED


async def test_a_child_that_ended_first_is_read_back_not_canceled() -> None:
    """TaskNotCancelable: the parent reads the child with GetTask and records how it ended."""
    child = Child()
    with anyio.fail_after(TIMEOUT):
        async with child_server(child.agent) as server:
            parent = Parent(server.url, leave_early=True)
            async with parent_client(parent.agent) as (parent_url, client):
                task = await start(client)
                await parent.saw_working.wait()  # it no longer reads the child's events
                # the child completes; the parent has not seen it
                async with (
                    await A2AClient.connect(server.url) as direct,
                    direct.subscribe(child.task_id) as events,
                ):
                    child.release.set()
                    async for event in events:
                        if _state(event) is TaskState.COMPLETED:
                            break
                # leaving the delegation cancels the child; then the parent completes
                async with client.subscribe(task.id) as parent_events:
                    parent.leave.set()
                    async for event in parent_events:
                        if _state(event) is TaskState.COMPLETED:
                            break
                done = await get_task(parent_url, task.id)
            assert server.calls.cancels == 1
            after_cancel = server.calls.methods[server.calls.methods.index("CancelTask") :]
            assert "GetTask" in after_cancel  # the fallback read
            record = record_of(done)
            entry = only_child(record)
            assert (entry.task_id, entry.state) == (child.task_id, "TASK_STATE_COMPLETED")
            assert entry.ended_at is not None
            assert record.canceled_children == []


async def test_an_unreachable_child_server_does_not_hold_up_the_parents_cancel() -> None:
    child = Child()
    with anyio.fail_after(TIMEOUT):
        async with child_server(child.agent) as server:
            parent = Parent(server.url, leave_early=True)
            async with parent_client(parent.agent) as (_, client):
                task = await start(client)
                await parent.saw_working.wait()
                await server.stop()  # the hop is gone: connections are refused
                began = anyio.current_time()
                canceled = await client.cancel_task(task.id)
                elapsed = anyio.current_time() - began
            assert canceled.status.state is TaskState.CANCELED
            assert elapsed < 2 * CANCEL_TIMEOUT  # refused at once: no attempt timed out
            assert server.calls.cancels == 0  # nothing reached the stopped server
            record = record_of(canceled)
            entry = only_child(record)
            # recorded as last seen, with the time the parent stopped tracking it
            assert (entry.task_id, entry.state) == (child.task_id, "TASK_STATE_WORKING")
            assert entry.ended_at is not None
            assert record.canceled_children == []


async def test_cancel_timeout_bounds_both_attempts_on_a_child_that_never_answers() -> None:
    child = Child()
    with anyio.fail_after(TIMEOUT):
        async with child_server(child.agent, ["stall", "stall"]) as server:
            parent = Parent(server.url)
            async with parent_client(parent.agent) as (_, client):
                task = await start(client)
                await parent.saw_working.wait()
                began = anyio.current_time()
                canceled = await client.cancel_task(task.id)
                elapsed = anyio.current_time() - began
            assert canceled.status.state is TaskState.CANCELED
            assert elapsed >= 2 * CANCEL_TIMEOUT
            assert server.calls.cancels == 2
            record = record_of(canceled)
            entry = only_child(record)
            assert (entry.task_id, entry.state) == (child.task_id, "TASK_STATE_WORKING")
            assert entry.ended_at is not None
            assert record.canceled_children == []
            # the child was never reached: it still works
            assert not child.exited.is_set()
            assert (await get_task(server.url, child.task_id)).status.state is TaskState.WORKING


# -- the cascade's second half: children left waiting for input, canceled as the task ends --


def asking_child() -> Agent:
    async def ask(ctx: TaskContext) -> str:
        answer = await ctx.ask("which one?")
        return answer.text

    return Agent(handler=ask, name="child")


def leaving_a_question_unanswered(child_url: str) -> Agent:
    """A parent that hands a child's question to itself and ends without answering it."""

    async def parent(ctx: TaskContext) -> str:
        try:
            await delegate(ctx, child_url, ctx.text, relay_input=False)
        except InputRequired as question:
            return f"left {question.task_id} unanswered"
        raise AssertionError("the child was expected to ask")

    return Agent(handler=parent, name="parent")


@pytest.mark.parametrize(
    ("script", "child_state"),
    [
        (["stall"], "TASK_STATE_CANCELED"),
        (["fail"], "TASK_STATE_CANCELED"),
        (["stall", "stall"], "TASK_STATE_INPUT_REQUIRED"),
    ],
    ids=["timed-out-then-retried", "failed-then-retried", "never-answers"],
)
async def test_an_unanswered_child_is_canceled_when_the_parent_ends(
    script: list[str], child_state: str
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with child_server(asking_child(), script) as server:
            parent = leaving_a_question_unanswered(server.url)
            async with parent_client(parent) as (_, client):
                began = anyio.current_time()
                done = await client.send_message("go")
                elapsed = anyio.current_time() - began
            assert isinstance(done, Task)
            assert done.status.state is TaskState.COMPLETED
            timeouts = script.count("stall")
            assert elapsed >= timeouts * CANCEL_TIMEOUT
            assert server.calls.cancels == 2
            record = record_of(done)
            entry = only_child(record)
            assert done.status.message is not None
            assert done.status.message.text == f"left {entry.task_id} unanswered"
            assert entry.state == child_state
            assert entry.ended_at is not None
            canceled = child_state == "TASK_STATE_CANCELED"
            assert record.canceled_children == ([entry.task_id] if canceled else [])
            child_now = await get_task(server.url, entry.task_id)
            assert child_now.status.state.value == child_state
