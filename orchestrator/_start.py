"""Starting (and resuming) one delegated child, so that the parent always learns its id.

Theory of operation ------------------- A :class:`Plan` is a delegation ready to start: the parent's
hop, the link to the child agent, the child's correlation and the message (its target resolved and
depth and cycles checked already). :class:`ChildStarter`, the first half of a
:class:`~orchestrator._child.ChildStream`, starts the child from it. An orchestrated child (every
local one, and a remote one whose card declares streaming and the correlation extension with
``startsAtOnce``) is started and followed with one SendStreamingMessage: its wrapper starts the task
at once, so the stream's first event, the Task, names it before it does anything. Any other
streaming agent's first event could be delayed until it first acts, so it is started with
``returnImmediately`` (the stream then follows it with SubscribeToTask, or, when its agent does not
stream, by polling GetTask). Either start (up to the first event) is shielded from cancellation
(bounded by the start timeout), so the parent always learns the child's task id; the child is
recorded in the parent's hop record and becomes *outstanding* before anything else can be
interrupted. Resuming an interrupted child (the answer to its question) is shielded the same way.

A server that ignores ``returnImmediately`` answers only once the child settled. For an
agent that does not stream (the kind most likely to be that simple), the start is shielded
for at most the start timeout and then waited for *unshielded*, as the blocking call it has
become (:func:`shielded_at_first`), rather than failed: such a child cannot be cancelled
before it settles anyway, as its id is unknown until then.

The starter's state (the plan, the outstanding child, the events not yet handed out, the open event
stream) belongs to the :class:`~orchestrator._child.ChildStream` built on it, which follows the
child and closes what the start opened.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime as _dt
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, TypeVar
from uuid import uuid4

import anyio

from a2a_actors.protocol._errors import A2AError
from a2a_actors.protocol._models import Message, Role, StreamResponse, Task, TaskState, utc_now
from a2a_actors.runtime import SubscriberDropped
from orchestrator._correlation import CORRELATION_URI, ChildRecord, Correlation, traceparent
from orchestrator._errors import DelegationError
from orchestrator._hop import Hop, Outstanding

if TYPE_CHECKING:
    from orchestrator._links import Link

__all__ = ("ChildStarter", "Plan", "shielded_at_first")

T = TypeVar("T")


async def shielded_at_first(call: Callable[[], Awaitable[T]], limit: float) -> T:
    """Await ``call()`` shielded from cancellation for at most ``limit`` seconds, then not.

    A cancellation that arrives in the first ``limit`` seconds waits for the call to answer
    (or for ``limit`` to pass); after that, it interrupts the call at once.
    """
    outcome: list[T] = []
    failure: list[BaseException] = []
    with anyio.CancelScope(shield=True) as shield:

        async def unshield() -> None:
            await anyio.sleep(limit)
            shield.shield = False

        async with anyio.create_task_group() as tg:
            tg.start_soon(unshield)
            try:
                outcome.append(await call())
            except BaseException as exc:  # re-raised below, not wrapped in a group
                failure.append(exc)
            tg.cancel_scope.cancel()
    if failure:
        raise failure[0]
    return outcome[0]


@dataclasses.dataclass(frozen=True, slots=True)
class Plan:
    """A delegation ready to start (or, with ``child``, to continue)."""

    hop: Hop
    link: Link
    correlation: Correlation
    message: Message
    child: Outstanding | None = None


class ChildStarter:
    """The state of one delegation and the calls that start or resume its child.

    Subclassed by :class:`~orchestrator._child.ChildStream`, which sets :attr:`_plan` before
    starting and owns everything opened here (it closes :attr:`_stack` and cancels the outstanding
    child when it is left early).
    """

    def __init__(self, *, start_timeout: float) -> None:
        self._start_timeout = start_timeout
        self._plan: Plan | None = None
        self._child: Outstanding | None = None
        self._pending: collections.deque[StreamResponse] = collections.deque()
        self._stack: AsyncExitStack | None = None
        self._events: AsyncIterator[StreamResponse] | None = None
        #: The delegation's CLIENT span id, named in ``traceparent`` (None: tracing off).
        self._span_id: str | None = None

    def _headers(self) -> dict[str, str]:
        plan = self._plan
        assert plan is not None
        headers = {"traceparent": traceparent(plan.correlation.trace_id, span_id=self._span_id)}
        state = plan.hop.ctx.headers.get("tracestate")
        if state:
            headers["tracestate"] = state
        return headers

    async def _send(self, send: Callable[[], Awaitable[Task | Message]]) -> Task | Message:
        """Start or resume, shielded (bounded by the start timeout), so the id is known.

        A polled child (its agent does not stream) is waited for past the start timeout,
        unshielded: its server may be ignoring ``returnImmediately`` and answering only once
        the child settled, as a blocking SendMessage does.
        """
        plan = self._plan
        assert plan is not None
        link = plan.link
        try:
            if link.polls:
                return await shielded_at_first(send, self._start_timeout)
            with anyio.fail_after(self._start_timeout, shield=True):
                return await send()
        except TimeoutError as exc:
            raise DelegationError(
                f"{link.name} did not answer within {self._start_timeout:g} s",
                origin_agent=link.name,
                path=plan.correlation.path,
            ) from exc
        except A2AError as exc:
            raise DelegationError(
                f"could not delegate to {link.name}: {exc}",
                origin_agent=link.name,
                path=plan.correlation.path,
            ) from exc

    async def _start(self, plan: Plan) -> None:
        link = plan.link
        headers = self._headers()
        # The child's start, as its parent records it, is when it was sent: a child that
        # settles before its start returns would otherwise show no duration at all.
        began = utc_now()
        if link.streams_start:
            await self._start_streaming(plan, headers, began)
            return
        reply = await self._send(lambda: link.start(plan.message, headers))
        if isinstance(reply, Message):
            self._pending.append(StreamResponse(message=reply))
            return
        await self._record(plan, StreamResponse(task=reply), began)

    async def _start_streaming(
        self, plan: Plan, headers: dict[str, str], began: _dt.datetime
    ) -> None:
        """One SendStreamingMessage; the child is known from its first event (the Task).

        Opening the stream and reading that event are shielded from cancellation (bounded
        by the start timeout), as a ``returnImmediately`` start is: an orchestrated child
        starts its task at once, so the event comes before it does anything, and the
        parent always learns the id before a cancellation can reach this delegation.
        """
        link = plan.link
        stack = AsyncExitStack()
        try:
            try:
                with anyio.fail_after(self._start_timeout, shield=True):
                    events = await stack.enter_async_context(link.open(plan.message, headers))
                    first = await events.__anext__()
            except TimeoutError as exc:
                raise DelegationError(
                    f"{link.name} did not answer within {self._start_timeout:g} s",
                    origin_agent=link.name,
                    path=plan.correlation.path,
                ) from exc
            except (A2AError, SubscriberDropped, StopAsyncIteration) as exc:
                why = str(exc) or "its stream ended before any event"
                raise DelegationError(
                    f"could not delegate to {link.name}: {why}",
                    origin_agent=link.name,
                    path=plan.correlation.path,
                ) from exc
        except BaseException:
            with anyio.CancelScope(shield=True):
                await stack.aclose()
            raise
        self._stack, self._events = stack, events  # closed by _close from here on
        if first.message is not None:
            self._pending.append(first)
            return
        await self._record(plan, first, began)

    async def _record(self, plan: Plan, first: StreamResponse, began: _dt.datetime) -> None:
        """Record the child its first event (Task, or update) names; it is outstanding."""
        link = plan.link
        if first.task is not None:
            task_id, context_id = first.task.id, first.task.context_id
            state = first.task.status.state.value
        else:  # a server that skips the snapshot: the update still names the task
            update = first.status_update or first.artifact_update
            if update is None:
                raise DelegationError(
                    f"{link.name} sent an empty first event",
                    origin_agent=link.name,
                    path=plan.correlation.path,
                )
            task_id, context_id = update.task_id, update.context_id
            state = TaskState.SUBMITTED.value
        record = ChildRecord(
            agent=link.name,
            task_id=task_id,
            context_id=context_id,
            state=state,
            depth=plan.correlation.depth,
            url=link.url,
            local=link.local,
            started_at=began,
        )
        self._child = Outstanding(link, record, plan.correlation)
        plan.hop.outstanding[task_id] = self._child  # cancellable from here on
        plan.hop.record.children.append(record)
        self._pending.append(first)
        await plan.hop.save()

    async def _forward(self, answer: Message) -> None:
        """Send ``answer`` to the interrupted child task."""
        plan, child = self._plan, self._child
        assert plan is not None
        assert child is not None
        message = Message(
            message_id=uuid4().hex,
            role=Role.USER,
            parts=answer.parts,
            task_id=child.record.task_id,
            context_id=child.record.context_id,
            metadata={CORRELATION_URI: plan.correlation.to_metadata()},
            extensions=(CORRELATION_URI,),
        )
        headers = self._headers()
        reply = await self._send(lambda: plan.link.resume(message, headers))
        if isinstance(reply, Task):
            self._pending.append(StreamResponse(task=reply))
