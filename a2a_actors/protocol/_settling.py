"""What becomes of a live task when what runs it goes away: the lifecycle's two ending
rules, stated once beside the state table (:mod:`a2a_actors.protocol._state`) and applied by every
store, node and supervisor.

**Shutdown** (a server stopping its own tasks): a live task ends CANCELED with the status
message :data:`SHUTDOWN_TEXT`, except that a server keeping interrupted tasks
(``keep_interrupted``, for a durable store a later process reads) leaves a task waiting
for its client as it is stored (:func:`kept_at_shutdown`).

**Orphans** (a task whose runner is gone without ending it: a restart on a durable store,
a lost cluster node): a SUBMITTED or WORKING task cannot go on, and becomes FAILED with an
agent status message saying why (in its history too, its version one higher); a task
waiting for its client (INPUT_REQUIRED, AUTH_REQUIRED) is kept as it is, resumable by the
client's next message on whichever process receives it; a final task is not touched
(:func:`settle_orphan`).

Pure, like :mod:`a2a_actors.protocol._state`: no I/O, no clock (the caller passes ``now``).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from uuid import uuid4

from a2a_actors.protocol._models import Message, Part, Role, Task, TaskState, TaskStatusUpdateEvent
from a2a_actors.protocol._state import INTERRUPTED_STATES, TERMINAL_STATES, TaskMachine

__all__ = ("SHUTDOWN_TEXT", "FailedOrphan", "kept_at_shutdown", "settle_orphan")

#: The status message of a task a stopping server cancels.
SHUTDOWN_TEXT = "server shutting down"


def kept_at_shutdown(state: TaskState, *, keep_interrupted: bool) -> bool:
    """Whether a live task in ``state`` stays as it is stored when its server stops
    (rather than ending CANCELED with :data:`SHUTDOWN_TEXT`)."""
    return keep_interrupted and state in INTERRUPTED_STATES


@dataclass(frozen=True, slots=True)
class FailedOrphan:
    """An orphan :func:`settle_orphan` failed: its new snapshot, version and status update."""

    task: Task
    version: int
    update: TaskStatusUpdateEvent


def settle_orphan(
    task: Task, version: int, *, now: _dt.datetime, reason: str
) -> FailedOrphan | None:
    """Apply the orphan rule to ``task`` (stored at ``version``).

    Returns:
        The FAILED task (status message ``reason``, an agent message, at ``now``) when it
        was SUBMITTED or WORKING; None when it is kept: waiting for its client (resumable)
        or final.
    """
    state = task.status.state
    if state in INTERRUPTED_STATES or state in TERMINAL_STATES:
        return None
    machine = TaskMachine.restore(task, version=version)
    note = Message(message_id=str(uuid4()), role=Role.AGENT, parts=(Part(text=reason),))
    update = machine.set_status(TaskState.FAILED, timestamp=now, message=note)
    return FailedOrphan(machine.snapshot(), machine.version, update)
