"""Small helpers shared by the runtime tests: a recording observer and result checks."""

from __future__ import annotations

from dataclasses import dataclass, field

from a2a_actors.protocol import Message, StreamResponse, Task, TaskState


@dataclass
class Recorder:
    """An EventObserver that keeps every event it is given."""

    events: list[tuple[str, str | None, StreamResponse, bool]] = field(default_factory=list)
    versions: list[tuple[str, int]] = field(default_factory=list)  # (task id, version)

    def task_event(
        self,
        task_id: str,
        owner: str | None,
        event: StreamResponse,
        *,
        terminal: bool,
        version: int = 0,
    ) -> None:
        self.events.append((task_id, owner, event, terminal))
        self.versions.append((task_id, version))

    def for_task(self, task_id: str) -> list[StreamResponse]:
        return [event for tid, _, event, _ in self.events if tid == task_id]


def as_task(result: Task | Message) -> Task:
    """``result``, which must be a Task."""
    assert isinstance(result, Task), f"expected a Task, got {result!r}"
    return result


def state_of(event: StreamResponse) -> TaskState | None:
    """The state an event reports (None for artifact updates and messages)."""
    if event.task is not None:
        return event.task.status.state
    if event.status_update is not None:
        return event.status_update.status.state
    return None


def texts(task: Task) -> list[str]:
    """The text of every history message, oldest first."""
    return [m.text for m in task.history]


def status_text(task: Task) -> str:
    """The text of the task's status message ("" when there is none)."""
    return task.status.message.text if task.status.message is not None else ""
