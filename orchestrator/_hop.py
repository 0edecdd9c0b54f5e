"""The orchestrator's state of one running task that delegates (a *hop*).

Theory of operation ------------------- A :class:`Hop` exists while a task of an orchestrated agent
runs (or while a delegation of an unwrapped agent is in flight). It holds the task's
:class:`~orchestrator._correlation.HopRecord` (what the task metadata shows under the correlation
URI), the children that are still *outstanding* (started and not yet seen terminal), and two locks:

* ``write_lock`` serialises metadata writes: a fan-out records its children from several
  tasks of one handler, and each write stores the whole record;
* ``ask_lock`` serialises relayed questions: two children asking at once are relayed to the
  caller one after the other (a task can wait for one answer at a time).

Cancel cascade. A child being followed is cancelled by its own
:class:`~orchestrator._child.ChildStream` when the delegation is left early (the parent was
cancelled, failed, or stopped reading). Children that are outstanding but not followed (a question
handed to the agent with ``relay_input=False`` and never answered) are cancelled by the orchestrated
wrapper when the task ends. Both use :meth:`Hop.cancel_child`: shielded, each attempt bounded by the
cancel timeout, retried once; the child's final state is recorded and, when it ended CANCELED, its
task id goes into ``canceledChildren``.

:class:`HopRegistry` maps task ids to hops (reference-counted) so that concurrent
delegations of one task share one record.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Protocol, runtime_checkable

import anyio

from a2a_actors.protocol._errors import TaskNotCancelableError, TaskNotFoundError
from a2a_actors.protocol._models import Task, TaskState, utc_now
from a2a_actors.protocol._state import TERMINAL_STATES
from a2a_actors.runtime import TaskContext, TaskRunner
from orchestrator._correlation import (
    CORRELATION_URI,
    ChildRecord,
    Correlation,
    HopRecord,
    traceparent,
)
from orchestrator._links import Link
from orchestrator._tracing import span_id_for

__all__ = ("Hop", "HopHost", "HopRegistry", "Outstanding")

logger = logging.getLogger("orchestrator")


@runtime_checkable
class HopHost(Protocol):
    """What the orchestrated wrapper needs from the supervisor's delegator."""

    max_depth: int
    cancel_timeout: float

    @property
    def hops(self) -> HopRegistry:
        """The registry of running hops."""
        ...

    def url_of(self, supervisor: TaskRunner) -> str:
        """The base URL ``supervisor`` is served at ("" when unknown)."""
        ...


@dataclasses.dataclass(slots=True, eq=False)
class Outstanding:
    """A started child that has not been seen terminal."""

    link: Link
    record: ChildRecord
    correlation: Correlation
    last: Task | None = None


class Hop:
    """The delegation state of one task (see the module docstring).

    Args:
        ctx: The task's context (metadata writes go through it).
        record: The hop record to keep in the task metadata.
    """

    def __init__(self, ctx: TaskContext, record: HopRecord) -> None:
        self.ctx = ctx
        self.record = record
        self.outstanding: dict[str, Outstanding] = {}
        self.write_lock = anyio.Lock()
        self.ask_lock = anyio.Lock()
        self.refs = 0

    @property
    def task_id(self) -> str:
        """The hop's task id."""
        return self.ctx.task_id

    @property
    def agent(self) -> str:
        """The hop's agent name."""
        return self.record.agent

    @property
    def correlation(self) -> Correlation:
        """The hop's correlation."""
        return self.record.correlation

    async def save(self) -> None:
        """Store the record in the task metadata (one write at a time)."""
        async with self.write_lock:
            await self.ctx.update_task_metadata({CORRELATION_URI: self.record.to_metadata()})

    def child_settled(self, task_id: str, task: Task) -> None:
        """Record the state ``task`` shows for the child ``task_id`` (no write)."""
        found = self.outstanding.get(task_id)
        if found is None:
            return
        state = task.status.state
        found.last = task
        found.record.state = state.value
        if state in TERMINAL_STATES:
            found.record.ended_at = task.status.timestamp or utc_now()
            del self.outstanding[task_id]
            if state is TaskState.CANCELED and task_id not in self.record.canceled_children:
                self.record.canceled_children.append(task_id)

    async def cancel_child(self, task_id: str, *, timeout: float) -> None:
        """Cancel an outstanding child and record how it ended; never raises an Exception.

        Shielded from the caller's cancellation; each attempt is bounded by ``timeout`` and
        a failed attempt is retried once. A child that already ended is recorded as it
        ended.
        """
        found = self.outstanding.get(task_id)
        if found is None:
            return
        trace_id = found.correlation.trace_id
        headers = {"traceparent": traceparent(trace_id, span_id=span_id_for(trace_id))}
        why = {CORRELATION_URI: {"canceledBy": self.agent, "parentTaskId": self.task_id}}
        with anyio.CancelScope(shield=True):
            task: Task | None = None
            for attempt in (1, 2):
                try:
                    with anyio.fail_after(timeout):
                        task = await found.link.cancel(task_id, why, headers)
                    break
                except TaskNotCancelableError:
                    try:
                        with anyio.fail_after(timeout):
                            task = await found.link.get_task(task_id, headers)
                    except Exception:
                        logger.warning("child %s of %s ended; state unknown", task_id, self.task_id)
                    break
                except TaskNotFoundError:
                    break
                except Exception:
                    logger.warning(
                        "cancel of child %s (%s) of task %s failed (attempt %d)",
                        task_id,
                        found.link.name,
                        self.task_id,
                        attempt,
                        exc_info=True,
                    )
            if task is not None:
                self.child_settled(task_id, task)
            if task_id in self.outstanding:  # unknown outcome: stop tracking it anyway
                del self.outstanding[task_id]
                found.record.ended_at = utc_now()
            try:
                with anyio.fail_after(timeout):
                    await self.save()
            except Exception:
                logger.warning("task %s: could not record its canceled children", self.task_id)

    async def cancel_outstanding(self, *, timeout: float) -> None:
        """Cancel every outstanding child, concurrently (shielded, see :meth:`cancel_child`)."""
        if not self.outstanding:
            return
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as tg:
                for task_id in list(self.outstanding):
                    tg.start_soon(_cancel_one, self, task_id, timeout)


async def _cancel_one(hop: Hop, task_id: str, timeout: float) -> None:
    await hop.cancel_child(task_id, timeout=timeout)


class HopRegistry:
    """The hops of running tasks, by task id, reference-counted."""

    def __init__(self) -> None:
        self._hops: dict[str, Hop] = {}

    def __len__(self) -> int:
        return len(self._hops)

    def get(self, task_id: str) -> Hop | None:
        """The hop of ``task_id``, if one is open."""
        return self._hops.get(task_id)

    def open(self, hop: Hop) -> Hop:
        """Register ``hop`` (or return the one already open for its task) and hold it."""
        current = self._hops.setdefault(hop.task_id, hop)
        current.refs += 1
        return current

    def close(self, hop: Hop) -> None:
        """Release one hold on ``hop``; the last one forgets it."""
        hop.refs -= 1
        if hop.refs <= 0 and self._hops.get(hop.task_id) is hop:
            del self._hops[hop.task_id]
