"""The inspector's event feed: per-owner lanes, drop-and-resync, bounded logs."""

from __future__ import annotations

import datetime as _dt
import json

from a2a_actors.protocol._models import (
    StreamResponse,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_actors.server._observability.inspector import InspectorFeed

NOW = _dt.datetime(2026, 12, 1, 12, 0, tzinfo=_dt.UTC)


def created(task_id: str) -> StreamResponse:
    status = TaskStatus(state=TaskState.SUBMITTED, timestamp=NOW)
    return StreamResponse(task=Task(id=task_id, context_id="c", status=status))


def status(task_id: str, state: TaskState) -> StreamResponse:
    update = TaskStatusUpdateEvent(
        task_id=task_id, context_id="c", status=TaskStatus(state=state, timestamp=NOW)
    )
    return StreamResponse(status_update=update)


async def test_a_lane_gets_its_owners_updates_only() -> None:
    feed = InspectorFeed(agent="a")
    with feed.subscribe("alice") as alices, feed.subscribe(None) as anonymous:
        feed.task_event("t1", "alice", created("t1"), terminal=False, version=1)
        feed.task_event("t2", "bob", created("t2"), terminal=False, version=1)
        feed.task_event("t3", None, created("t3"), terminal=False, version=1)
        feed.task_event("t1", "alice", status("t1", TaskState.WORKING), terminal=False, version=2)
        updates, resync = await alices.receive()
        assert not resync
        rows = [json.loads(update)["row"] for update in updates]
        assert [(row["id"], row["state"]) for row in rows] == [
            ("t1", "submitted"),
            ("t1", "working"),
        ]
        updates, _ = await anonymous.receive()
        assert [json.loads(update)["row"]["id"] for update in updates] == ["t3"]
        assert feed.statistics().lanes == 2
    assert feed.statistics().lanes == 0


async def test_a_lane_that_falls_behind_is_told_to_resync_and_goes_on() -> None:
    feed = InspectorFeed(agent="a", buffer=2)
    with feed.subscribe(None) as lane:
        for n in range(3):  # the third overflows: what was queued is dropped
            feed.task_event(f"t{n}", None, created(f"t{n}"), terminal=False, version=1)
        assert await lane.receive() == ([], True)
        feed.task_event("t9", None, created("t9"), terminal=False, version=1)
        updates, resync = await lane.receive()
        assert not resync
        assert [json.loads(update)["row"]["id"] for update in updates] == ["t9"]
    assert feed.statistics().resyncs == 1


def test_logs_are_bounded_per_task_and_in_number() -> None:
    feed = InspectorFeed(agent="a", max_tasks=2, max_events=3)
    for task_id in ("t1", "t2"):
        feed.task_event(task_id, None, created(task_id), terminal=False, version=1)
    for version, state in enumerate((TaskState.WORKING, TaskState.WORKING, TaskState.COMPLETED)):
        feed.task_event("t1", None, status("t1", state), terminal=False, version=version + 2)
    log = feed.log("t1", None)
    assert log is not None
    assert [entry["version"] for entry in log.entries] == [2, 3, 4]  # the oldest dropped
    feed.task_event("t3", None, created("t3"), terminal=False, version=1)
    assert feed.log("t2", None) is None  # the least recently changed task is forgotten
    assert feed.log("t1", None) is not None
    assert feed.log("t1", "someone else") is None
    assert feed.statistics().tasks == 2
