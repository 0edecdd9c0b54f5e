"""The task lifecycle: every state rule of A2A 1.0 lives in this file.

Rule 1: everything that decides whether a task may change lives here, as data
(:data:`TRANSITIONS`, :data:`TERMINAL_STATES`, :data:`INTERRUPTED_STATES`,
:data:`SETTLED_STATES`), as pure checks (:func:`accepts_input`, :func:`check_cancelable`)
and in :class:`TaskMachine`, which applies one change at a time to one task. The runtime
and the server use these definitions; neither restates them.

Rule 2: this file knows nothing about actors, HTTP or time sources. It takes typed inputs
(a user message, a status change, an artifact chunk) and returns the typed events those
inputs produce, ready to fan out to subscribers and push receivers.

Theory of operation
-------------------
A :class:`TaskMachine` owns the mutable record of one task: status, history, artifacts,
metadata and a ``version`` that increases by one with every applied change. Each method
either applies its change completely and returns the resulting wire event(s), or raises
and leaves the record exactly as it was (the tests assert both). Readers never see the
mutable record: :meth:`TaskMachine.snapshot` builds an immutable :class:`Task`, cached per
version, so publishing a snapshot costs nothing until somebody reads it.

Transitions (from → allowed targets)::

    SUBMITTED       → WORKING, INPUT_REQUIRED, AUTH_REQUIRED, any terminal
    WORKING         → WORKING (progress update), INPUT_REQUIRED, AUTH_REQUIRED, any terminal
    INPUT_REQUIRED  → WORKING (resumed), CANCELED, FAILED, REJECTED
    AUTH_REQUIRED   → WORKING (resumed), CANCELED, FAILED, REJECTED
    terminal        → nothing (terminal states absorb)

Artifacts: a chunk without ``append`` creates (or replaces) the artifact of its id; a chunk
with ``append`` extends an existing, still-open artifact; ``last_chunk`` closes it.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

import msgspec

from a2a_actors.protocol._errors import (
    IllegalTransitionError,
    InvalidParamsError,
    TaskNotCancelableError,
    UnsupportedOperationError,
)
from a2a_actors.protocol._models import (
    Artifact,
    JSONObject,
    Message,
    Role,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

__all__ = (
    "ACTIVE_STATES",
    "INTERRUPTED_STATES",
    "SETTLED_STATES",
    "TERMINAL_STATES",
    "TRANSITIONS",
    "TaskMachine",
    "accepts_input",
    "apply_history_length",
    "check_cancelable",
    "is_terminal",
    "settles",
)

S = TaskState

TERMINAL_STATES: frozenset[TaskState] = frozenset({S.COMPLETED, S.FAILED, S.CANCELED, S.REJECTED})
INTERRUPTED_STATES: frozenset[TaskState] = frozenset({S.INPUT_REQUIRED, S.AUTH_REQUIRED})
ACTIVE_STATES: frozenset[TaskState] = frozenset({S.SUBMITTED, S.WORKING})
#: States at which a task waits for its client or is over: a blocking SendMessage returns
#: and a stream of the task ends.
SETTLED_STATES: frozenset[TaskState] = TERMINAL_STATES | INTERRUPTED_STATES

TRANSITIONS: dict[TaskState, frozenset[TaskState]] = {
    S.SUBMITTED: frozenset({S.WORKING, *INTERRUPTED_STATES, *TERMINAL_STATES}),
    S.WORKING: frozenset({S.WORKING, *INTERRUPTED_STATES, *TERMINAL_STATES}),
    S.INPUT_REQUIRED: frozenset({S.WORKING, S.CANCELED, S.FAILED, S.REJECTED}),
    S.AUTH_REQUIRED: frozenset({S.WORKING, S.CANCELED, S.FAILED, S.REJECTED}),
    S.COMPLETED: frozenset(),
    S.FAILED: frozenset(),
    S.CANCELED: frozenset(),
    S.REJECTED: frozenset(),
    S.UNSPECIFIED: frozenset(),
}


def is_terminal(state: TaskState) -> bool:
    """Whether ``state`` is terminal (the task can never change again)."""
    return state in TERMINAL_STATES


def settles(event: StreamResponse) -> bool:
    """Whether ``event`` shows its task settled: terminal, or waiting for its client (a
    stream of the task ends after it)."""
    if event.status_update is not None:
        return event.status_update.status.state in SETTLED_STATES
    return event.task is not None and event.task.status.state in SETTLED_STATES


def accepts_input(state: TaskState) -> bool:
    """Whether a task in ``state`` takes a client message: only while it is interrupted.

    A2A 1.0 allows messages to a SUBMITTED or WORKING task (MAY); we refuse them, because an
    agent reads input only when it asks for it (INPUT_REQUIRED / AUTH_REQUIRED), and a
    message it never reads would be silently lost. A terminal task takes nothing.
    """
    return state in INTERRUPTED_STATES


def check_cancelable(task_id: str, state: TaskState) -> None:
    """Refuse to cancel a task in ``state`` unless it can be: every non-terminal state can.

    Raises:
        TaskNotCancelableError: ``state`` is terminal.
    """
    if state in TERMINAL_STATES:
        raise TaskNotCancelableError(
            f"Task {task_id} is in terminal state: {state.value}", metadata={"taskId": task_id}
        )


def apply_history_length(task: Task, history_length: int | None) -> Task:
    """Return ``task`` with at most the ``history_length`` most recent messages.

    ``None`` keeps all history; ``0`` removes it (the field is then omitted on the wire).
    """
    if history_length is None or len(task.history) <= history_length:
        return task
    history = task.history[len(task.history) - history_length :] if history_length else ()
    return Task(
        id=task.id,
        context_id=task.context_id,
        status=task.status,
        artifacts=task.artifacts,
        history=history,
        metadata=task.metadata,
    )


class TaskMachine:
    """The mutable record of one task and the only code allowed to change it.

    Not thread-safe and not shared: exactly one owner (the task's actor) calls its methods.
    """

    __slots__ = (
        "_artifact_index",
        "_artifacts",
        "_closed_artifacts",
        "_history",
        "_metadata",
        "_snapshot",
        "context_id",
        "status",
        "task_id",
        "version",
    )

    def __init__(
        self,
        task_id: str,
        context_id: str,
        *,
        timestamp: _dt.datetime,
        metadata: JSONObject | None = None,
    ) -> None:
        self.task_id = task_id
        self.context_id = context_id
        self.status = TaskStatus(state=S.SUBMITTED, timestamp=timestamp)
        self.version = 1
        self._history: list[Message] = []
        self._artifacts: list[Artifact] = []
        self._artifact_index: dict[str, int] = {}
        self._closed_artifacts: set[str] = set()
        self._metadata: JSONObject | None = dict(metadata) if metadata else None
        self._snapshot: Task | None = None

    @classmethod
    def restore(cls, task: Task, *, version: int = 1) -> TaskMachine:
        """Rebuild a machine from a stored snapshot (e.g. after a restart)."""
        machine = cls(task.id, task.context_id, timestamp=task.status.timestamp or _epoch())
        cls._load(machine, task, version)
        return machine

    def rollback(self, task: Task, version: int) -> None:
        """Return to ``task`` at ``version``, the last snapshot that was stored, dropping
        every change made since (the store refused them, so nobody saw them). The only way
        out of a terminal state: one that was never stored did not happen."""
        if version > self.version:
            raise ValueError(f"cannot roll back to version {version} from {self.version}")
        self._load(task, version)

    def _load(self, task: Task, version: int) -> None:
        self.status = task.status
        self._history = list(task.history)
        self._artifacts = list(task.artifacts)
        self._artifact_index = {a.artifact_id: i for i, a in enumerate(task.artifacts)}
        self._metadata = dict(task.metadata) if task.metadata else None
        self.version = version

    # -- reading ---------------------------------------------------------------------

    @property
    def state(self) -> TaskState:
        """The current state."""
        return self.status.state

    @property
    def terminal(self) -> bool:
        """Whether the task is terminal."""
        return self.status.state in TERMINAL_STATES

    @property
    def interrupted(self) -> bool:
        """Whether the task waits for its client (INPUT_REQUIRED or AUTH_REQUIRED), the
        only states that accept client input (:func:`accepts_input`)."""
        return self.status.state in INTERRUPTED_STATES  # accepts_input, inlined: hot

    @property
    def metadata(self) -> JSONObject | None:
        """A copy of the task's metadata."""
        return dict(self._metadata) if self._metadata is not None else None

    def snapshot(self) -> Task:
        """An immutable Task for the current version (cached until the next change)."""
        snap = self._snapshot
        if snap is None:
            snap = Task(
                id=self.task_id,
                context_id=self.context_id,
                status=self.status,
                artifacts=tuple(self._artifacts),
                history=tuple(self._history),
                metadata=dict(self._metadata) if self._metadata is not None else None,
            )
            self._snapshot = snap
        return snap

    # -- changing --------------------------------------------------------------------

    def _changed(self) -> None:
        self.version += 1
        self._snapshot = None

    def check_user_message(self, message: Message) -> Message:
        """Validate a client message addressed to this task and bind it to the task.

        Returns:
            The message with ``task_id`` and ``context_id`` filled in from the task.

        Raises:
            UnsupportedOperationError: The task is terminal.
            InvalidParamsError: The message names another context, or is not from the user.
        """
        if self.terminal:
            raise UnsupportedOperationError(
                f"Task {self.task_id} is in terminal state: {self.status.state.value}",
                metadata={"taskId": self.task_id},
            )
        if message.context_id and message.context_id != self.context_id:
            raise InvalidParamsError(
                f"contextId {message.context_id!r} does not match the context of task "
                f"{self.task_id}",
                field="message.contextId",
            )
        if message.role is not Role.USER:
            raise InvalidParamsError(
                "client messages must have role ROLE_USER", field="message.role"
            )
        return _bind(message, self.task_id, self.context_id)

    def add_user_message(self, message: Message) -> Message:
        """Append a client message to the history (after :meth:`check_user_message`).

        Repeated ``messageId`` values are kept: history is never de-duplicated.
        """
        bound = self.check_user_message(message)
        self._history.append(bound)
        self._changed()
        return bound

    def set_status(
        self,
        state: TaskState,
        *,
        timestamp: _dt.datetime,
        message: Message | None = None,
        metadata: JSONObject | None = None,
    ) -> TaskStatusUpdateEvent:
        """Move the task to ``state`` (with an optional agent message for the status).

        The status message, if any, is bound to the task and appended to the history.

        Raises:
            IllegalTransitionError: ``state`` is not reachable from the current state;
                nothing changed.
        """
        current = self.status.state
        if state not in TRANSITIONS[current]:
            raise IllegalTransitionError(
                f"Task {self.task_id}: illegal transition {current.value} -> {state.value}",
                metadata={"taskId": self.task_id},
            )
        bound = _bind(message, self.task_id, self.context_id) if message is not None else None
        self.status = TaskStatus(state=state, message=bound, timestamp=timestamp)
        if bound is not None:
            self._history.append(bound)
        self._changed()
        return TaskStatusUpdateEvent(
            task_id=self.task_id, context_id=self.context_id, status=self.status, metadata=metadata
        )

    def cancel(
        self, *, timestamp: _dt.datetime, message: Message | None = None
    ) -> TaskStatusUpdateEvent:
        """Move the task to CANCELED.

        Raises:
            TaskNotCancelableError: The task is already terminal; nothing changed.
        """
        check_cancelable(self.task_id, self.status.state)
        return self.set_status(S.CANCELED, timestamp=timestamp, message=message)

    def add_artifact(
        self,
        artifact: Artifact,
        *,
        append: bool = False,
        last_chunk: bool = False,
        metadata: JSONObject | None = None,
    ) -> TaskArtifactUpdateEvent:
        """Add an artifact, or a chunk of one.

        Raises:
            IllegalTransitionError: The task is terminal, ``append`` names an artifact that
                does not exist or was closed by an earlier ``last_chunk``, or a new chunk
                reuses the id of a closed artifact. Nothing changed.
        """
        aid = artifact.artifact_id
        if self.terminal:
            raise IllegalTransitionError(
                f"Task {self.task_id} is terminal; artifact {aid!r} refused",
                metadata={"taskId": self.task_id},
            )
        if aid in self._closed_artifacts:
            raise IllegalTransitionError(
                f"Task {self.task_id}: artifact {aid!r} was closed by lastChunk",
                metadata={"taskId": self.task_id},
            )
        index = self._artifact_index.get(aid)
        if append:
            if index is None:
                raise IllegalTransitionError(
                    f"Task {self.task_id}: cannot append to unknown artifact {aid!r}",
                    metadata={"taskId": self.task_id},
                )
            old = self._artifacts[index]
            merged = Artifact(
                artifact_id=aid,
                parts=old.parts + artifact.parts,
                name=artifact.name or old.name,
                description=artifact.description or old.description,
                metadata=_merge(old.metadata, artifact.metadata),
                extensions=old.extensions
                + tuple(e for e in artifact.extensions if e not in old.extensions),
            )
            self._artifacts[index] = merged
        elif index is None:
            self._artifact_index[aid] = len(self._artifacts)
            self._artifacts.append(artifact)
        else:
            self._artifacts[index] = artifact
        if last_chunk:
            self._closed_artifacts.add(aid)
        self._changed()
        return TaskArtifactUpdateEvent(
            task_id=self.task_id,
            context_id=self.context_id,
            artifact=artifact,
            append=append,
            last_chunk=last_chunk,
            metadata=metadata,
        )

    def update_metadata(self, values: dict[str, Any]) -> None:
        """Merge ``values`` into the task metadata (allowed in every state)."""
        self._metadata = _merge(self._metadata, values)
        self._changed()


def _merge(a: JSONObject | None, b: JSONObject | None) -> JSONObject | None:
    if not b:
        return a
    if not a:
        return dict(b)
    return {**a, **b}


def _bind(message: Message, task_id: str, context_id: str) -> Message:
    if message.task_id == task_id and message.context_id == context_id:
        return message
    return msgspec.structs.replace(message, task_id=task_id, context_id=context_id)


def _epoch() -> _dt.datetime:
    return _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
