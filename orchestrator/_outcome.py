"""What a delegation ends with: a :class:`DelegationResult`, or the error of a failed child.

A child that COMPLETED (or answered with a Message) gives a :class:`DelegationResult`, the
value of ``ctx.delegate(...)`` and the input of a pipeline's next step. A child task that
ended FAILED, REJECTED or CANCELED gives the typed :class:`~orchestrator._errors.DelegationError` of
:func:`failure_of`: the error the child's own hop record (or status message) carries when
it relayed someone else's failure, else one naming the child as the origin.
"""

from __future__ import annotations

import dataclasses
from uuid import uuid4

from a2a_actors.client import CallResult
from a2a_actors.protocol._models import Artifact, Message, Part, Role, Task, TaskState
from orchestrator._correlation import CORRELATION_URI, Correlation, hop_record
from orchestrator._errors import DelegationError

__all__ = ("DelegationResult", "failure_of")


@dataclasses.dataclass(frozen=True, slots=True)
class DelegationResult:
    """What a delegation produced.

    Attributes:
        agent: The child agent's name.
        task: The child task as it ended (None for a Message reply, or a failed branch
            that never started).
        message: The child's Message reply, or its final status message.
        url: The child server's base URL ("" for a local child).
        error: Set only for a failed branch of ``fan_out(..., cancel_on_failure=False)``.
    """

    agent: str
    task: Task | None
    message: Message | None
    url: str = ""
    error: DelegationError | None = None

    @property
    def state(self) -> TaskState | None:
        """The child task's final state (None for a Message reply)."""
        return self.task.status.state if self.task is not None else None

    @property
    def ok(self) -> bool:
        """Whether the child completed (or answered with a Message)."""
        return self.error is None and (self.task is None or self.state is TaskState.COMPLETED)

    @property
    def task_id(self) -> str:
        """The child's task id ("" for a Message reply)."""
        return self.task.id if self.task is not None else ""

    @property
    def context_id(self) -> str:
        """The child's context id."""
        if self.task is not None:
            return self.task.context_id
        return self.message.context_id if self.message is not None else ""

    @property
    def artifacts(self) -> tuple[Artifact, ...]:
        """The child's artifacts."""
        return self.task.artifacts if self.task is not None else ()

    @property
    def text(self) -> str:
        """The answer as text: the artifacts' text, else the status or reply message."""
        if self.error is not None and self.task is None:
            return ""
        return CallResult(task=self.task, message=self.message).text

    @property
    def parts(self) -> tuple[Part, ...]:
        """The answer as parts (the artifacts' parts, else the message's), for the next step."""
        parts = tuple(p for a in self.artifacts for p in a.parts)
        if parts:
            return parts
        if self.message is not None:
            return self.message.parts
        return (Part(text=self.text),)

    @property
    def output(self) -> tuple[Artifact, ...] | str:
        """What a handler returns to finish with this result: the artifacts, else the text."""
        return self.artifacts or self.text

    def as_message(self) -> Message:
        """The answer as a user Message (the input of a next step)."""
        return Message(message_id=uuid4().hex, role=Role.USER, parts=self.parts)


def failure_of(task: Task, agent: str, correlation: Correlation) -> DelegationError:
    """The typed error of ``task``, a child task that ended FAILED, REJECTED or CANCELED.

    Args:
        task: The child task as it ended.
        agent: The child agent's name.
        correlation: The child's correlation (its relay path is used when the task carries
            no hop record).

    Returns:
        The error carried in the task's hop record or status message metadata (rebuilt with its
        class), else a :class:`~orchestrator._errors.DelegationError` whose origin is ``task``.
    """
    record = hop_record(task.metadata)
    data = record.error if record is not None else None
    status_message = task.status.message
    if data is None and status_message is not None and status_message.metadata:
        carried = status_message.metadata.get(CORRELATION_URI)
        if isinstance(carried, dict) and isinstance(carried.get("error"), dict):
            data = carried["error"]
    if data is not None:
        return DelegationError.from_metadata(data)
    reason = status_message.text if status_message is not None else ""
    state = task.status.state
    return DelegationError(
        reason or f"{agent} ended {state.value.removeprefix('TASK_STATE_')}",
        origin_agent=agent,
        origin_task_id=task.id,
        state=state.value,
        path=record.path if record is not None else correlation.path,
    )
