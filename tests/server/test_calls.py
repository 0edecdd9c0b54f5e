"""The call observers' contract (server/_calls.py): order, what a call saw, its error, its
context; and the streams of server/_events.py."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest

from a2a_actors.protocol._errors import InternalError, TaskNotFoundError
from a2a_actors.protocol._models import (
    Message,
    Part,
    Role,
    StreamResponse,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_actors.server._calls import CallObservers, ObservedCall
from a2a_actors.server._events import EventStream, Single, UntilSettled
from a2a_actors.server._methods import CallContext

pytestmark = pytest.mark.anyio


class Recorder:
    """A call observer that notes what it is told, and puts a header into the context."""

    def __init__(self, name: str, log: list[str]) -> None:
        self.name = name
        self.log = log

    def call_started(self, call: ObservedCall) -> str:
        self.log.append(f"start {self.name} {call.method} {call.binding}")
        call.ctx = dataclasses.replace(call.ctx, headers={**call.ctx.headers, self.name: "1"})
        return f"token-{self.name}"

    def call_ended(self, call: ObservedCall, started: str) -> None:
        error = "" if call.error is None else call.error.reason
        self.log.append(
            f"end {self.name} {started} {call.task_id}/{call.context_id} {call.state} {error}"
        )


def task(state: TaskState, task_id: str = "t1") -> Task:
    return Task(id=task_id, context_id="c1", status=TaskStatus(state=state))


def update(state: TaskState) -> StreamResponse:
    event = TaskStatusUpdateEvent(task_id="t1", context_id="c1", status=TaskStatus(state=state))
    return StreamResponse(status_update=event)


async def test_a_unary_call_is_observed_in_order_with_what_it_answered() -> None:
    log: list[str] = []
    calls = CallObservers([Recorder("a", log), Recorder("b", log)])
    seen: list[CallContext] = []

    async def run(ctx: CallContext) -> Task:
        seen.append(ctx)
        return task(TaskState.COMPLETED)

    ctx = CallContext(binding="rest")
    result = await calls.unary("GetTask", ctx, run, "t1")
    assert result.id == "t1"
    assert dict(seen[0].headers) == {"a": "1", "b": "1"}  # the method ran with both changes
    assert log == [
        "start a GetTask rest",
        "start b GetTask rest",
        "end b token-b t1/c1 TASK_STATE_COMPLETED ",
        "end a token-a t1/c1 TASK_STATE_COMPLETED ",
    ]


async def test_a_failed_call_is_observed_with_the_error_it_answers() -> None:
    log: list[str] = []
    calls = CallObservers([Recorder("a", log)])

    async def missing(ctx: CallContext) -> Task:
        raise TaskNotFoundError("t9")

    async def broken(ctx: CallContext) -> Task:
        raise RuntimeError("a bug")

    with pytest.raises(TaskNotFoundError):
        await calls.unary("GetTask", CallContext(), missing, "t9")
    with pytest.raises(RuntimeError):  # the binding answers it as -32603
        await calls.unary("CancelTask", CallContext(), broken, "t8")
    assert log[1] == "end a token-a t9/  TASK_NOT_FOUND"
    assert log[3] == f"end a token-a t8/  {InternalError().reason}"


async def test_a_stream_is_observed_from_opening_to_end_and_sees_every_event() -> None:
    log: list[str] = []
    calls = CallObservers([Recorder("a", log)])
    events = [
        StreamResponse(task=task(TaskState.SUBMITTED)),
        update(TaskState.WORKING),
        update(TaskState.INPUT_REQUIRED),
        update(TaskState.COMPLETED),  # after the settled state: not reached
    ]

    @asynccontextmanager
    async def open_stream(ctx: CallContext) -> AsyncIterator[EventStream]:
        assert ctx.headers == {"a": "1"}
        yield UntilSettled(Buffered(events))

    with anyio.fail_after(5):
        async with calls.stream("SendStreamingMessage", CallContext(), open_stream) as stream:
            first = await anext(stream)
            assert log == ["start a SendStreamingMessage jsonrpc"]
            rest = [event async for event in stream]
    assert [first, *rest] == events[:3]
    assert log[-1] == "end a token-a t1/c1 TASK_STATE_INPUT_REQUIRED "


class Buffered:
    """Every event buffered from the start, versions 1, 2, ..."""

    def __init__(self, events: list[StreamResponse]) -> None:
        self._events = list(events)
        self.version: int | None = 0

    def __aiter__(self) -> Buffered:
        return self

    async def __anext__(self) -> StreamResponse:
        event = self.next_nowait()
        if event is None:
            raise StopAsyncIteration
        return event

    def ready(self) -> bool:
        return True

    def next_nowait(self) -> StreamResponse | None:
        if not self._events:
            return None
        assert self.version is not None
        self.version += 1
        return self._events.pop(0)


async def test_until_settled_ends_after_the_first_settled_event_on_either_path() -> None:
    events = [update(TaskState.WORKING), update(TaskState.COMPLETED)]
    after = [update(TaskState.WORKING)]
    stream = UntilSettled(Buffered([*events, *after]))
    assert stream.next_nowait() == events[0]
    assert stream.version == 1
    assert await anext(stream) == events[1]
    assert stream.version == 2
    assert stream.ready()  # ended: __anext__ would not wait
    assert stream.next_nowait() is None
    assert await anext(stream, None) is None


async def test_single_is_one_event_without_versions() -> None:
    message = Message(role=Role.AGENT, parts=(Part(text="hi"),), message_id="m1")
    stream = Single(StreamResponse(message=message))
    assert stream.version is None
    assert stream.ready()
    assert [event.message async for event in stream] == [message]
    assert stream.next_nowait() is None
