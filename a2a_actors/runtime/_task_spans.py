"""A span per task actor's life, its state changes as span events: :class:`TaskSpans`.

An :class:`~a2a_actors.runtime._environment.EventObserver` that a supervisor gets only when tracing
is on (the server adds it; in process: ``Supervisor(agent, observers=[TaskSpans(tracing)])``).

The span (``a2a.task``, kind INTERNAL) starts at the task's first published event and ends
with its terminal one; it carries the task and context ids and the agent, gets an event
``a2a.task.state`` (attribute ``a2a.task.state``) for every state change, ends with the
final state as attribute, and with status ERROR when the task FAILED.

Parenting: an actor is spawned from the task of the request that created it, so it runs
in a copy of that request's context, where the request's SERVER span (or, for a local
delegation, the parent's CLIENT span) is current; the first event is published from the
actor's own task, so the task span is a child of that span, and it is then made current in
the actor's task: a delegation the handler makes is a child of its task span. A task
resumed by a later request keeps the span of its actor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from a2a_actors.protocol._models import StreamResponse, TaskState
from a2a_actors.runtime._tracing import ATTRIBUTES, Tracing

if TYPE_CHECKING:
    from opentelemetry.trace import Span

    from a2a_actors.runtime._supervisor import Supervisor

__all__ = ("TaskSpans",)

_STATE = ATTRIBUTES["state"]


class TaskSpans:
    """Task spans of one supervisor (see the module docstring).

    Args:
        tracing: The process's tracing.
        agent: The supervisor's agent name (attribute ``a2a.agent`` of a task whose actor
            is not known: see :meth:`bind`).
    """

    __slots__ = ("_agent", "_spans", "_supervisor", "_tracing")

    def __init__(self, tracing: Tracing, agent: str) -> None:
        self._tracing = tracing
        self._agent = agent
        self._supervisor: Supervisor | None = None
        self._spans: dict[str, tuple[Span, TaskState | None]] = {}

    def bind(self, supervisor: Supervisor) -> None:
        """Name each task's agent from its actor in ``supervisor`` (a local child runs
        another agent than the supervisor's own)."""
        self._supervisor = supervisor

    @property
    def open_spans(self) -> int:
        """Spans of tasks that have not ended."""
        return len(self._spans)

    def task_event(
        self,
        task_id: str,
        owner: str | None,
        event: StreamResponse,
        *,
        terminal: bool,
        version: int = 0,
    ) -> None:
        """Start the task's span on its first event; add state changes; end it at the end."""
        state = _state_of(event)
        found = self._spans.get(task_id)
        if found is None:
            span = self._start(task_id, event)
            last: TaskState | None = None
        else:
            span, last = found
        if state is not None and state is not last:
            span.add_event(_STATE, {_STATE: state.value})
            last = state
        if not terminal:
            self._spans[task_id] = (span, last)
            return
        self._spans.pop(task_id, None)
        if last is not None:
            span.set_attribute(_STATE, last.value)
            if last is TaskState.FAILED:
                from opentelemetry.trace import Status, StatusCode

                span.set_status(Status(StatusCode.ERROR, "task failed"))
        span.end()

    def _start(self, task_id: str, event: StreamResponse) -> Span:
        from opentelemetry.trace import SpanKind

        payload = event.payload
        context_id = getattr(payload, "context_id", "") or ""
        agent = self._agent
        actor = self._supervisor.get_actor(task_id) if self._supervisor is not None else None
        if actor is not None:
            agent = actor.agent.name
        span = self._tracing.start_span(
            "a2a.task",
            SpanKind.INTERNAL,
            {
                ATTRIBUTES["task_id"]: task_id,
                ATTRIBUTES["context_id"]: context_id,
                ATTRIBUTES["agent"]: agent,
            },
        )
        self._tracing.make_current(span)
        return span


def _state_of(event: StreamResponse) -> TaskState | None:
    if event.task is not None:
        return event.task.status.state
    if event.status_update is not None:
        return event.status_update.status.state
    return None
