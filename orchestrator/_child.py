"""One delegation, followed to its end: :class:`ChildStream`.

Theory of operation
-------------------
Entering a :class:`ChildStream` *plans* the delegation (target resolved, child correlation
computed: a depth or cycle violation raises here, before anything is sent), then *starts*
the child (:mod:`._start`: the start is shielded up to the child's first event, so the
parent always learns the child's task id, and the child is recorded in the parent's hop
record and becomes *outstanding* before anything else can be interrupted). A child that
was not started with a stream is followed with SubscribeToTask; one whose agent does not
stream is *polled*: GetTask after a pause that starts at the poll interval and doubles up
to the maximum poll interval, for each turn of the child (it starts again from the
shortest pause once the child is resumed). Iterating yields the child's events: the Task
snapshot, then the rest of the stream or each polled snapshot that changed (repeated
snapshots are skipped), until the child ends.

* COMPLETED (or a Message reply): iteration stops; :meth:`ChildStream.result` is the
  outcome, a :class:`~orchestrator._outcome.DelegationResult`.
* FAILED, REJECTED, CANCELED: the final event is yielded, then the next step raises a
  :class:`~orchestrator._errors.DelegationError` naming the origin agent and task and the relay path
  (read from the child's own hop record when the child relayed someone else's failure:
  :func:`~orchestrator._outcome.failure_of`).
* INPUT_REQUIRED / AUTH_REQUIRED: with ``relay_input`` (the default) the question is asked
  of the parent's own caller (``ctx.ask``), and the answer is sent to the same child task; following
  goes on. Without it, :class:`~orchestrator._errors.InputRequired` is raised: the child stays
  outstanding and ``await exc.answer(...)`` continues it.

Leaving the stream before the child ended (the parent was cancelled, an error, or the
consumer stopped reading) cancels the child: shielded, bounded by the cancel timeout,
retried once (:meth:`~._hop.Hop.cancel_child`). The child's own orchestrated wrapper does the
same for its children, so the cancel cascades down the whole subtree, and the cancel call of
each level returns only once everything below it is CANCELED.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from types import TracebackType
from typing import TYPE_CHECKING
from uuid import uuid4

import anyio

from a2a_actors.client._stream import TaskView
from a2a_actors.protocol._errors import A2AError, UnsupportedOperationError
from a2a_actors.protocol._models import Message, Part, Role, StreamResponse, Task, TaskState
from a2a_actors.protocol._state import INTERRUPTED_STATES, TERMINAL_STATES
from a2a_actors.runtime import SubscriberDropped
from orchestrator._correlation import CORRELATION_URI, Correlation
from orchestrator._errors import CycleError, DelegationError, DepthLimitError, InputRequired
from orchestrator._outcome import DelegationResult as DelegationResult, failure_of
from orchestrator._start import ChildStarter, Plan as Plan
from orchestrator._tracing import DelegationSpan, Outcomes

if TYPE_CHECKING:
    from orchestrator._hop import HopRegistry

__all__ = ("ChildStream", "DelegationResult", "Plan")

logger = logging.getLogger("orchestrator")

_REOPENS = 3
_TERMINAL_VALUES = frozenset(state.value for state in TERMINAL_STATES)


class ChildStream(ChildStarter):
    """The events of one delegation (see the module docstring).

    ``async with orch.stream(ctx, target, message) as events: async for event in events``.
    Made by :meth:`~orchestrator._delegator.Orchestrator.stream`; not meant to be built by users.

    Raises (entering):
        DepthLimitError, CycleError: Refused before anything was sent.
        DelegationError: The child could not be started.

    Raises (iterating):
        DelegationError: The child ended FAILED, REJECTED or CANCELED (after its final event).
        InputRequired: The child asks for input and ``relay_input`` is off.
    """

    def __init__(
        self,
        plan: Callable[[], Awaitable[Plan]],
        *,
        outcomes: Outcomes | None = None,
        registry: HopRegistry,
        relay_input: bool,
        cancel_timeout: float,
        start_timeout: float,
        poll_interval: float,
        max_poll_interval: float,
    ) -> None:
        super().__init__(start_timeout=start_timeout)
        self._make_plan = plan
        self._outcomes = outcomes
        self._span: DelegationSpan | None = None
        self._registry = registry
        self._relay = relay_input
        self._cancel_timeout = cancel_timeout
        self._poll_interval = self._pause = poll_interval
        self._max_poll_interval = max_poll_interval
        self._view = TaskView()
        self._interrupted = False
        self._ended = False
        self._error: DelegationError | None = None
        self._handed_off = False
        self._reopens = _REOPENS
        self._closed = False

    # -- what the consumer sees ------------------------------------------------------------

    @property
    def agent(self) -> str:
        """The child agent's name ("" before entering)."""
        return self._plan.link.name if self._plan is not None else ""

    @property
    def task_id(self) -> str:
        """The child's task id ("" before it exists)."""
        return self._child.record.task_id if self._child is not None else ""

    @property
    def correlation(self) -> Correlation | None:
        """The child's correlation (None before entering)."""
        return self._plan.correlation if self._plan is not None else None

    @property
    def task(self) -> Task | None:
        """The child task as its events so far describe it."""
        return self._view.task

    def result(self) -> DelegationResult:
        """The outcome, once the child completed.

        Raises:
            DelegationError: The child ended FAILED, REJECTED or CANCELED.
            RuntimeError: The child has not ended.
        """
        plan = self._plan
        assert plan is not None, "result() before entering"
        link = plan.link
        if self._view.message is not None:
            return DelegationResult(link.name, None, self._view.message, link.url)
        task = self._view.task
        if task is None or task.status.state not in TERMINAL_STATES:
            raise RuntimeError("the delegation has not ended")
        if task.status.state is not TaskState.COMPLETED:
            raise failure_of(task, link.name, plan.correlation)
        return DelegationResult(link.name, task, task.status.message, link.url)

    async def __aenter__(self) -> ChildStream:
        try:
            plan = self._plan = await self._make_plan()  # holds plan.hop until __aexit__
        except (DepthLimitError, CycleError):
            if self._outcomes is not None:
                self._outcomes.count("refused")
            raise
        span = self._span = DelegationSpan.open(plan.link.name, plan.correlation, plan.link.url)
        try:
            if span is None:
                await self._begin(plan)
            else:
                self._span_id = span.span_id
                with span.current():  # a local child's actor is spawned here: its child
                    await self._begin(plan)
                if self._child is not None:
                    span.child(self._child.record.task_id, self._child.record.context_id)
        except BaseException:
            await self._close()
            raise
        return self

    async def _begin(self, plan: Plan) -> None:
        """Start the child, or resume it with the answer ``plan`` carries."""
        if plan.child is None:
            await self._start(plan)
            return
        self._child = plan.child
        if plan.child.last is not None:
            self._view.apply(StreamResponse(task=plan.child.last))
        await self._forward(plan.message)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._close()

    def __aiter__(self) -> ChildStream:
        return self

    async def __anext__(self) -> StreamResponse:
        while True:
            if self._pending:
                event = self._pending.popleft()
                if self._repeats(event):
                    continue
                await self._observe(event)
                return event
            if self._error is not None:
                error, self._error = self._error, None
                self._ended = True
                raise error
            if self._ended:
                raise StopAsyncIteration
            if self._interrupted:
                await self._on_interrupted()
                continue
            if self._events is None:
                polls = self._plan is not None and self._plan.link.polls
                await (self._poll() if polls else self._open())
                continue
            try:
                event = await self._events.__anext__()
            except StopAsyncIteration:
                await self._close_subscription()
                await self._refresh()
                continue
            except (SubscriberDropped, A2AError) as exc:
                logger.info("child %s: event stream lost (%s); re-reading", self.task_id, exc)
                await self._close_subscription()
                await self._refresh()
                continue
            if self._repeats(event):
                continue
            await self._observe(event)
            return event

    # -- the steps ---------------------------------------------------------------------------

    async def _open(self) -> None:
        plan, child = self._plan, self._child
        assert plan is not None
        assert child is not None
        stack = AsyncExitStack()
        try:
            events = await stack.enter_async_context(
                plan.link.subscribe(child.record.task_id, self._headers())
            )
        except UnsupportedOperationError:  # it ended (or settled) in between: read it
            await stack.aclose()
            await self._refresh()
            return
        except A2AError as exc:
            await stack.aclose()
            raise self._lost(f"could not follow {plan.link.name}: {exc}") from exc
        self._stack, self._events = stack, events

    async def _poll(self) -> None:
        """GetTask after a pause (doubling up to the maximum); failures retried 3 times."""
        plan, child = self._plan, self._child
        assert plan is not None
        assert child is not None
        await anyio.sleep(self._pause)
        self._pause = min(self._pause * 2, self._max_poll_interval)
        try:
            task = await plan.link.get_task(child.record.task_id, self._headers())
        except A2AError as exc:
            self._reopens -= 1
            if self._reopens < 0:
                raise self._lost(f"lost track of {plan.link.name}: {exc}") from exc
            logger.info("child %s: GetTask failed (%s); polling again", self.task_id, exc)
            return
        self._reopens = _REOPENS
        if not self._view.repeats(task):
            self._pending.append(StreamResponse(task=task))

    async def _refresh(self) -> None:
        """Read the child with GetTask after its event stream ended early."""
        plan, child = self._plan, self._child
        assert plan is not None
        assert child is not None
        self._reopens -= 1
        try:
            task = await plan.link.get_task(child.record.task_id, self._headers())
        except A2AError as exc:
            raise self._lost(f"lost track of {plan.link.name}: {exc}") from exc
        settled = task.status.state in TERMINAL_STATES or task.status.state in INTERRUPTED_STATES
        if settled and not self._view.repeats(task):
            self._pending.append(StreamResponse(task=task))
        elif self._reopens < 0:
            raise self._lost(f"lost the event stream of {plan.link.name}")

    def _lost(self, reason: str) -> DelegationError:
        """The error of a child that can no longer be followed."""
        plan = self._plan
        assert plan is not None
        return DelegationError(
            reason,
            origin_agent=plan.link.name,
            origin_task_id=self.task_id,
            path=plan.correlation.path,
        )

    def _repeats(self, event: StreamResponse) -> bool:
        """A snapshot that adds nothing (the start reply again, or a stale question)."""
        return event.task is not None and self._view.repeats(event.task)

    async def _observe(self, event: StreamResponse) -> None:
        plan = self._plan
        assert plan is not None
        self._view.apply(event)
        if event.message is not None:
            self._ended = True
            return
        task = self._view.task
        child = self._child
        if task is None or child is None or (event.task is None and event.status_update is None):
            return
        state = task.status.state
        child.last = task
        # a start that answered terminal recorded its state already, yet it must still end
        ends = state in TERMINAL_STATES and child.record.task_id in plan.hop.outstanding
        if child.record.state != state.value or ends:
            plan.hop.child_settled(child.record.task_id, task)
            await plan.hop.save()
        if state in TERMINAL_STATES:
            if state is TaskState.COMPLETED:
                self._ended = True
            else:
                self._error = failure_of(task, plan.link.name, plan.correlation)
        elif state in INTERRUPTED_STATES:
            self._interrupted = True

    async def _on_interrupted(self) -> None:
        plan, child, task = self._plan, self._child, self._view.task
        assert plan is not None
        assert child is not None
        assert task is not None
        self._interrupted = False
        await self._close_subscription()
        question = task.status.message
        if not self._relay:
            self._handed_off = self._ended = True
            raise InputRequired(
                question,
                agent=plan.link.name,
                task_id=child.record.task_id,
                context_id=child.record.context_id,
                state=task.status.state.value,
                answer=self._answer_later,
            )
        relayed = Message(
            message_id=uuid4().hex,
            role=Role.AGENT,
            parts=question.parts
            if question is not None
            else (Part(text=f"{plan.link.name} needs input"),),
            metadata={
                CORRELATION_URI: {
                    "inputFor": {"agent": plan.link.name, "taskId": child.record.task_id}
                }
            },
        )
        ctx = plan.hop.ctx
        async with plan.hop.ask_lock:
            if task.status.state is TaskState.AUTH_REQUIRED:
                answer = await ctx.require_auth(relayed)
            else:
                answer = await ctx.ask(relayed)
        await self._forward(answer)
        self._pause = self._poll_interval  # a new turn: poll it closely again

    async def _answer_later(self, reply: str | Message) -> DelegationResult:
        """``InputRequired.answer``: continue the same child in a new stream."""
        plan, child = self._plan, self._child
        assert plan is not None
        assert child is not None
        answer = reply if isinstance(reply, Message) else _user_text(reply)
        registry = self._registry

        async def again() -> Plan:
            return dataclasses.replace(
                plan, hop=registry.open(plan.hop), message=answer, child=child
            )

        stream = ChildStream(
            again,
            outcomes=self._outcomes,
            registry=registry,
            relay_input=False,
            cancel_timeout=self._cancel_timeout,
            start_timeout=self._start_timeout,
            poll_interval=self._poll_interval,
            max_poll_interval=self._max_poll_interval,
        )
        async with stream:
            async for _ in stream:
                pass
            return stream.result()

    async def _close_subscription(self) -> None:
        stack, self._stack, self._events = self._stack, None, None
        if stack is not None:
            with anyio.CancelScope(shield=True):
                await stack.aclose()

    async def _close(self) -> None:
        plan = self._plan
        if plan is None or self._closed:
            return
        self._closed = True
        try:
            await self._close_subscription()
            child = self._child
            if (
                child is not None
                and not self._handed_off
                and child.record.task_id in plan.hop.outstanding
            ):
                await plan.hop.cancel_child(child.record.task_id, timeout=self._cancel_timeout)
        finally:
            self._registry.close(plan.hop)
            self._count()

    def _count(self) -> None:
        """Count the delegation's outcome and end its span (see :mod:`._tracing`)."""
        child = self._child
        state = child.record.state if child is not None else ""
        if self._view.message is not None:
            outcome = "completed"
        elif self._handed_off:
            outcome = "input_required"
        elif state in _TERMINAL_VALUES:
            outcome = state.removeprefix("TASK_STATE_").lower()
        else:
            outcome = "error"
        if self._outcomes is not None:
            self._outcomes.count(outcome)
        if self._span is not None:
            self._span.end(outcome, state)


def _user_text(text: str) -> Message:
    return Message(message_id=uuid4().hex, role=Role.USER, parts=(Part(text=text),))
