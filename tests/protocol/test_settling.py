"""The lifecycle's two ending rules (protocol/_settling.py), state by state: what a stopping
server does with its live tasks, and what becomes of an orphan. The stores and the cluster
apply them (tests/stores: recovery; tests/cluster: a lost node's tasks)."""

from __future__ import annotations

import datetime as dt

import pytest

from a2a_actors.protocol._models import Message, Part, Role, Task, TaskState, TaskStatus
from a2a_actors.protocol._settling import SHUTDOWN_TEXT, kept_at_shutdown, settle_orphan
from a2a_actors.protocol._state import INTERRUPTED_STATES, TERMINAL_STATES

S = TaskState
NOW = dt.datetime(2026, 12, 3, 9, 0, tzinfo=dt.UTC)
LIVE = (S.SUBMITTED, S.WORKING, S.INPUT_REQUIRED, S.AUTH_REQUIRED)


def task(state: TaskState) -> Task:
    asked = Message(message_id="m1", role=Role.USER, parts=(Part(text="hi"),))
    return Task(
        id="t1",
        context_id="c1",
        status=TaskStatus(state=state, timestamp=NOW - dt.timedelta(minutes=1)),
        history=(asked,),
    )


@pytest.mark.parametrize("state", LIVE)
def test_at_shutdown_only_waiting_tasks_are_kept_and_only_when_asked(state: TaskState) -> None:
    assert kept_at_shutdown(state, keep_interrupted=False) is False
    assert kept_at_shutdown(state, keep_interrupted=True) is (state in INTERRUPTED_STATES)
    assert SHUTDOWN_TEXT == "server shutting down"


@pytest.mark.parametrize("state", [S.SUBMITTED, S.WORKING])
def test_an_active_orphan_fails_saying_why(state: TaskState) -> None:
    settled = settle_orphan(task(state), 7, now=NOW, reason="node n1 was lost")
    assert settled is not None
    assert settled.version == 8
    status = settled.task.status
    assert status.state is S.FAILED
    assert status.timestamp == NOW
    assert status.message is not None
    assert status.message.role is Role.AGENT
    assert status.message.text == "node n1 was lost"
    assert status.message.task_id == "t1"
    assert settled.task.history[-1] == status.message  # in the history too
    assert settled.task.history[0].text == "hi"  # nothing else changed
    assert settled.update.status == status
    assert settled.update.task_id == "t1"


KEPT = sorted(INTERRUPTED_STATES | TERMINAL_STATES, key=lambda s: s.value)


@pytest.mark.parametrize("state", KEPT)
def test_waiting_and_final_orphans_are_kept_as_they_are(state: TaskState) -> None:
    assert settle_orphan(task(state), 3, now=NOW, reason="restarted") is None
