"""What the runtime keeps for resuming, and what a subscription ``after`` a version gets."""

from __future__ import annotations

import anyio
import pytest

from a2a_actors.protocol._models import (
    StreamResponse,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_actors.runtime import InProcessClient, ResumeOptions, Subscription, Supervisor
from a2a_actors.runtime._replay import EventHistory, SettledHistories

from .agents import Chunks

pytestmark = pytest.mark.anyio

TIMEOUT = 10.0


def update(state: TaskState = TaskState.WORKING) -> StreamResponse:
    status = TaskStatusUpdateEvent(task_id="t", context_id="c", status=TaskStatus(state=state))
    return StreamResponse(status_update=status)


def history(start: int, *versions: int, window: int = 3) -> EventHistory:
    kept = EventHistory(window, start)
    for version in versions:
        kept.events.append((version, update(), False))
    return kept


def versions_of(items: list[tuple[int, StreamResponse, bool]] | None) -> list[int] | None:
    return None if items is None else [item[0] for item in items]


def test_a_history_covers_from_its_start_until_it_is_full() -> None:
    kept = history(5, 6, 7)
    assert versions_of(kept.after(5)) == [6, 7]
    assert versions_of(kept.after(6)) == [7]
    assert versions_of(kept.after(7)) == []
    assert kept.after(4) is None  # recorded from 5 on: what came before is unknown


def test_a_full_history_covers_from_its_oldest_event() -> None:
    kept = history(5, 6, 7, 8, 9)  # window 3: 7, 8, 9
    assert versions_of(kept.after(6)) == [7, 8, 9]
    assert kept.after(5) is None  # 6 was pushed out


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_settled_histories_expire_and_stay_within_their_event_budget() -> None:
    clock = Clock()
    settled = SettledHistories(ResumeOptions(keep_for=10.0, max_settled_events=5), clock=clock)
    settled.keep("a", history(0, 1, 2), 2)
    settled.keep("b", history(0, 1, 2), 3)
    assert settled.get("a", 2) is not None
    assert settled.get("a", 3) is None  # the task changed since: dropped
    assert settled.get("a", 2) is None
    settled.keep("c", history(0, 1, 2, 3), 3)  # 5 events kept: b (2) and c (3)
    settled.keep("d", history(0, 1), 1)  # over budget: the oldest (b) goes
    assert settled.get("b", 3) is None
    assert (len(settled), settled.events) == (2, 4)
    clock.now += 10.0
    assert settled.get("c", 3) is None  # expired
    settled.keep("e", history(0, 1), 1)  # adding drops what expired (d)
    assert (len(settled), settled.events) == (1, 1)
    assert settled.take("e", 1) is not None
    assert (len(settled), settled.events) == (0, 0)


async def drain(sub: Subscription) -> list[tuple[int, StreamResponse]]:
    out = []
    async for event in sub:
        out.append((sub.version, event))
    return out


def state_of(event: StreamResponse) -> TaskState | None:
    if event.task is not None:
        return event.task.status.state
    return event.status_update.status.state if event.status_update is not None else None


async def test_a_parked_task_keeps_its_history_across_its_resumption() -> None:
    chunks = Chunks(gated=False)
    with anyio.fail_after(TIMEOUT):
        async with Supervisor(chunks.agent) as sup:
            client = InProcessClient(sup)
            async with client.stream("2 chunks, ask") as events:
                first = await drain(events)
            task = first[0][1].task
            assert task is not None
            parked = first[-1][0]
            assert state_of(first[-1][1]) is TaskState.INPUT_REQUIRED
            assert sup.statistics().subscribers == 0
            # parked: the history left the task for the settled ones, and comes back
            async with client.stream("x", task_id=task.id, context_id=task.context_id) as more:
                second = await drain(more)
            assert state_of(second[-1][1]) is TaskState.COMPLETED
            async with sup.subscribe(task.id, after=parked - 1) as sub:
                replay = await drain(sub)
            assert replay == [first[-1]]  # up to the question, then the end (as the stream)
            async with sup.subscribe(task.id, after=parked) as sub:
                tail = await drain(sub)
            assert [version for version, _ in tail] == [v for v, _ in second if v > parked]
            assert tail[0][1].task is None
            async with sup.subscribe(task.id, after=tail[-1][0]) as sub:
                assert await drain(sub) == []


async def test_without_a_window_a_resume_gets_the_snapshot() -> None:
    chunks = Chunks()
    with anyio.fail_after(TIMEOUT):
        async with Supervisor(chunks.agent, resume=ResumeOptions(window=0)) as sup:
            client = InProcessClient(sup)
            started = await client.send_message("4 chunks", return_immediately=True)
            assert isinstance(started, Task)
            await chunks.waiting.wait()
            async with sup.subscribe(started.id) as probe:
                current = probe.version
                assert (await anext(probe)).task is not None
                current = probe.version
            async with sup.subscribe(started.id, after=current - 1) as sub:
                assert (await anext(sub)).task is not None
                assert sub.version == current
            async with sup.subscribe(started.id, after=current) as sub:
                chunks.gate.set()  # at the current version: nothing to replay, no snapshot
                rest = await drain(sub)
            assert rest[0][0] == current + 1
            assert all(event.task is None for _, event in rest)


async def test_an_ended_task_resumed_when_its_events_expired_gets_its_final_snapshot() -> None:
    chunks = Chunks(gated=False)
    clock = Clock()
    options = ResumeOptions(keep_for=5.0)
    with anyio.fail_after(TIMEOUT):
        async with Supervisor(chunks.agent, resume=options, clock=clock) as sup:
            client = InProcessClient(sup)
            async with client.stream("2 chunks") as events:
                seen = await drain(events)
            final = seen[-1][0]
            task_id = seen[0][1].task.id if seen[0][1].task else ""
            async with sup.subscribe(task_id, after=seen[1][0]) as sub:
                assert await drain(sub) == seen[2:]
            clock.now += 5.0
            async with sup.subscribe(task_id, after=seen[1][0]) as sub:
                (only,) = await drain(sub)
            assert only[0] == final
            assert only[1].task is not None
            assert only[1].task.status.state is TaskState.COMPLETED
            async with sup.subscribe(task_id, after=final + 5) as sub:  # ahead: the snapshot
                assert [v for v, _ in await drain(sub)] == [final]
