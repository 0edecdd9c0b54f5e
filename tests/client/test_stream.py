"""EventStream and TaskView without a network: folding events, misuse, early exit."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import anyio
import pytest

from a2a_actors.client import EventStream
from a2a_actors.client._stream import TaskView
from a2a_actors.protocol._models import (
    Artifact,
    Part,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

TIMEOUT = 5.0


def chunk(text: str, *, artifact_id: str = "a", append: bool = False) -> StreamResponse:
    return StreamResponse(
        artifact_update=TaskArtifactUpdateEvent(
            task_id="t",
            context_id="c",
            artifact=Artifact(artifact_id=artifact_id, parts=(Part(text=text),)),
            append=append,
        )
    )


def status(state: TaskState) -> StreamResponse:
    return StreamResponse(
        status_update=TaskStatusUpdateEvent(
            task_id="t", context_id="c", status=TaskStatus(state=state)
        )
    )


def texts(task: Task | None) -> dict[str, str]:
    assert task is not None
    return {a.artifact_id: "".join(p.text or "" for p in a.parts) for a in task.artifacts}


def test_task_view_folds_events() -> None:
    view = TaskView()
    view.apply(chunk("x"))  # before any task event: a task is made up from the chunk
    assert view.task is not None
    assert view.task.id == "t"
    view.apply(
        StreamResponse(
            task=Task(id="t", context_id="c", status=TaskStatus(state=TaskState.SUBMITTED))
        )
    )
    view.apply(status(TaskState.WORKING))
    view.apply(chunk("al"))
    view.apply(chunk("pha", append=True))
    view.apply(chunk("beta", artifact_id="b"))
    view.apply(chunk("ALPHA"))  # without append: replaces artifact "a"
    assert texts(view.task) == {"a": "ALPHA", "b": "beta"}
    view.apply(status(TaskState.COMPLETED))
    assert view.task is not None
    assert view.task.status.state is TaskState.COMPLETED
    assert view.repeats(view.task)
    assert not view.repeats(Task(id="t", status=TaskStatus(state=TaskState.COMPLETED)))


class Source:
    """An EventSource over a fixed list of events; records whether it was closed."""

    def __init__(self, events: list[StreamResponse]) -> None:
        self.events = events
        self.closed = False

    @contextlib.asynccontextmanager
    async def open(self) -> AsyncIterator[AsyncIterator[StreamResponse]]:
        try:
            yield _Iter(list(self.events))
        finally:
            self.closed = True


class _Iter:
    def __init__(self, events: list[StreamResponse]) -> None:
        self.events = events

    def __aiter__(self) -> _Iter:
        return self

    async def __anext__(self) -> StreamResponse:
        if not self.events:
            raise StopAsyncIteration
        return self.events.pop(0)


async def test_stream_stops_at_a_terminal_state() -> None:
    trailing = chunk("after the end")
    source = Source([status(TaskState.WORKING), status(TaskState.COMPLETED), trailing])
    with anyio.fail_after(TIMEOUT):
        async with EventStream(source.open) as events:
            seen = [event async for event in events]
            assert source.closed  # closed at the terminal state, not at leaving the block
    assert seen == source.events[:2]
    assert events.done


async def test_stream_reads_on_after_an_interrupted_state() -> None:
    source = Source(
        [status(TaskState.INPUT_REQUIRED), status(TaskState.WORKING), status(TaskState.COMPLETED)]
    )
    with anyio.fail_after(TIMEOUT):
        async with EventStream(source.open) as events:
            seen = [event async for event in events]
    assert len(seen) == 3


async def test_stream_misuse() -> None:
    source = Source([status(TaskState.COMPLETED)])
    stream = EventStream(source.open)
    with pytest.raises(RuntimeError, match="inside `async with`"):
        await stream.__anext__()
    with anyio.fail_after(TIMEOUT):
        async with stream:
            with pytest.raises(RuntimeError, match="only once"):
                await stream.__aenter__()
        with pytest.raises(RuntimeError, match="only once"):
            await stream.__aenter__()
    assert source.closed


async def test_breaking_out_early_closes_the_source() -> None:
    source = Source([status(TaskState.WORKING), status(TaskState.WORKING)])
    with anyio.fail_after(TIMEOUT):
        async with EventStream(source.open) as events:
            async for _ in events:
                break
            assert not source.closed
    assert source.closed
