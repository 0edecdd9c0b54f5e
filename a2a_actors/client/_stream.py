"""Event streams: cut detection, optional re-subscription, and the task they describe.

Theory of operation
-------------------
An A2A stream has no end marker: the server closes the connection after a Message, after a
terminal state, or (SDK behaviour, S§11.7) after an interrupted state. So the only way to
tell a finished stream from a cut one is to watch the states go by. :class:`EventStream`
does that: it marks itself *done* once it has seen a Message, or a task/status whose state is
terminal or interrupted. After a Message or a terminal state nothing may follow, so the
stream ends there and closes the response without waiting for the server to close it; after
an interrupted state it reads on until the server closes (an agent may resume an
AUTH_REQUIRED task by itself). When the underlying source ends (cleanly or with a broken
connection) before the stream is done, it was cut:

* without ``resubscribe`` it raises :class:`~a2a_actors.client._errors.StreamInterruptedError`;
* with ``resubscribe`` and a known task id, it opens SubscribeToTask for the task and goes
  on. When the stream's events carried SSE ids, the subscription sends the last one it
  delivered as ``Last-Event-ID``: a server that still holds the later events (ours does,
  for a while) sends exactly those, so the consumer sees every event once, none twice.
  Otherwise the first event of a subscription is a Task snapshot; it is skipped when it only
  repeats what this stream already delivered (same status, same artifacts), and yielded
  otherwise, so the consumer can resynchronise (a ``task`` event is a whole snapshot: replace,
  do not append). If the server refuses the subscription because the task is already
  terminal (-32004), the final Task is fetched with GetTask and yielded the same way.
  At most ``max_resubscribes`` re-subscriptions are attempted per stream; one that fails
  because the server cannot be reached or is busy is retried after a delay
  (``retry_delay`` seconds, doubling, at most :data:`MAX_RETRY_DELAY`) while attempts
  remain. A stream resumed after its task's final event ends at once without an event:
  that is its normal end when GetTask then shows the task terminal.

Alongside, :class:`TaskView` folds the events into the current Task (status replaced,
artifact chunks appended by ``artifactId``), which is what :attr:`EventStream.task` returns.
"""

from __future__ import annotations

import collections
from collections.abc import AsyncIterator, Awaitable, Callable
from types import TracebackType

import anyio
from msgspec.structs import replace

from a2a_actors.client._errors import A2AConnectionError, StreamInterruptedError
from a2a_actors.client._transports.transport import EventSource, request_headers
from a2a_actors.protocol._errors import A2AError, ServerBusyError, UnsupportedOperationError
from a2a_actors.protocol._models import (
    Artifact,
    Message,
    StreamResponse,
    Task,
    TaskState,
    TaskStatus,
)
from a2a_actors.protocol._state import INTERRUPTED_STATES, TERMINAL_STATES

__all__ = ("LAST_EVENT_ID", "MAX_RETRY_DELAY", "EventStream", "TaskView", "is_final_state")

#: The request header that resumes a stream after the event with that SSE id.
LAST_EVENT_ID = "Last-Event-ID"
#: The longest wait (seconds) before another re-subscription attempt.
MAX_RETRY_DELAY = 5.0


def is_final_state(state: TaskState) -> bool:
    """True for the states after which a server closes a stream: terminal or interrupted."""
    return state in TERMINAL_STATES or state in INTERRUPTED_STATES


class TaskView:
    """The task a stream describes, rebuilt from its events (pure; no I/O)."""

    def __init__(self) -> None:
        self.task: Task | None = None
        self.message: Message | None = None

    def apply(self, event: StreamResponse) -> None:
        """Fold one event into :attr:`task` (or record the Message reply)."""
        if event.message is not None:
            self.message = event.message
        elif event.task is not None:
            self.task = event.task
        elif event.status_update is not None:
            update = event.status_update
            base = self.task or Task(id=update.task_id, status=update.status)
            self.task = replace(
                base, status=update.status, context_id=base.context_id or update.context_id
            )
        elif event.artifact_update is not None:
            chunk = event.artifact_update
            base = self.task or Task(
                id=chunk.task_id,
                context_id=chunk.context_id,
                status=TaskStatus(state=TaskState.SUBMITTED),
            )
            self.task = replace(
                base, artifacts=_merge(base.artifacts, chunk.artifact, chunk.append)
            )

    def repeats(self, snapshot: Task) -> bool:
        """True when ``snapshot`` adds nothing to what was already seen."""
        task = self.task
        return (
            task is not None
            and task.id == snapshot.id
            and task.status == snapshot.status
            and task.artifacts == snapshot.artifacts
        )


def _merge(artifacts: tuple[Artifact, ...], new: Artifact, append: bool) -> tuple[Artifact, ...]:
    for i, old in enumerate(artifacts):
        if old.artifact_id == new.artifact_id:
            merged = replace(old, parts=old.parts + new.parts) if append else new
            return (*artifacts[:i], merged, *artifacts[i + 1 :])
    return (*artifacts, new)


class EventStream:
    """The events of one streaming call; use as ``async with stream: async for ev in stream``.

    Entering opens the HTTP stream (raising the typed error of a refused call); leaving
    always closes it, also when iteration stopped early. Iterating yields each
    :class:`~a2a_actors.protocol._models.StreamResponse` in server order and stops when the
    server closes a finished stream.

    Args:
        open_source: Opens the stream (the streaming call).
        subscribe: Opens SubscribeToTask for a task id (to resume a cut stream).
        fetch_task: GetTask, for a task that ended while the stream was cut.
        resubscribe: Resume a cut stream (see the module docstring).
        max_resubscribes: Re-subscription attempts allowed per stream.
        task_id: The task streamed, when known before the first event.
        last_event_id: Sent as ``Last-Event-ID`` when the stream is opened (a
            SubscribeToTask resuming after that event).
        retry_delay: Seconds before retrying a re-subscription the server could not
            answer (doubling, at most :data:`MAX_RETRY_DELAY`).

    Raises (from iteration):
        StreamInterruptedError: The stream was cut before a final event and could not be
            resumed (see the module docstring).
        A2AError: The server sent an error event (``remote=True``).
        RuntimeError: Iterated without ``async with``.
    """

    def __init__(
        self,
        open_source: Callable[[], EventSource],
        *,
        subscribe: Callable[[str], EventSource] | None = None,
        fetch_task: Callable[[str], Awaitable[Task]] | None = None,
        resubscribe: bool = False,
        max_resubscribes: int = 3,
        task_id: str = "",
        last_event_id: str | None = None,
        retry_delay: float = 0.5,
    ) -> None:
        self._open = open_source
        self._subscribe = subscribe
        self._fetch = fetch_task
        self._resubscribe = resubscribe and subscribe is not None
        self._budget = max_resubscribes
        self._task_id = task_id
        self._last_id = last_event_id
        self._retry_delay = retry_delay
        self._source: EventSource | None = None
        self._events: AsyncIterator[StreamResponse] | None = None
        self._pending: collections.deque[StreamResponse] = collections.deque()
        self._view = TaskView()
        self._done = False  # a final event was seen: a close now is not a cut
        self._ended = False  # a Message or terminal state was seen: stop reading
        self._finished = False
        self._after_resubscribe = False
        self._quiet_resume = False  # opened with Last-Event-ID, no event since
        self.resubscribes = 0  #: how many times the stream was resumed

    # -- the task so far ----------------------------------------------------------------

    @property
    def task(self) -> Task | None:
        """The task as the events so far describe it (``None`` before any task event)."""
        return self._view.task

    @property
    def message(self) -> Message | None:
        """The Message reply, when the agent answered with one."""
        return self._view.message

    @property
    def task_id(self) -> str:
        """The id of the streamed task, or ``""`` before the first task event."""
        return self._view.task.id if self._view.task is not None else self._task_id

    @property
    def state(self) -> TaskState | None:
        """The last task state seen, if any."""
        return self._view.task.status.state if self._view.task is not None else None

    @property
    def last_event_id(self) -> str | None:
        """The SSE id of the last event delivered (``None`` while none came with one): pass
        it to ``client.subscribe(task_id, last_event_id=...)`` to resume this stream later."""
        return self._last_id

    @property
    def done(self) -> bool:
        """True once a final event (Message, terminal or interrupted state) was seen."""
        return self._done

    # -- context manager and iteration ---------------------------------------------------

    async def __aenter__(self) -> EventStream:
        if self._source is not None or self._finished:
            raise RuntimeError("an EventStream can be entered only once")
        await self._enter(self._open, self._last_id)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._finished = True
        await self._close_source()

    async def aclose(self) -> None:
        """Close the stream now (what leaving ``async with`` does)."""
        await self.__aexit__(None, None, None)

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> StreamResponse:
        while True:
            if self._pending:
                event = self._pending.popleft()
                self._observe(event)
                return event
            if self._finished:
                raise StopAsyncIteration
            if self._events is None:
                raise RuntimeError("iterate an EventStream inside `async with`")
            if self._ended:  # a Message or a terminal state: nothing may follow
                self._finished = True
                await self._close_source()
                raise StopAsyncIteration
            cut: A2AConnectionError | None = None
            try:
                event = await self._events.__anext__()
            except StopAsyncIteration:
                pass
            except A2AConnectionError as exc:
                cut = exc
            else:
                self._quiet_resume = False
                last_id = getattr(self._events, "last_event_id", None)
                if last_id is not None:
                    self._last_id = last_id
                if self._after_resubscribe:
                    self._after_resubscribe = False
                    if event.task is not None and self._view.repeats(event.task):
                        continue
                self._observe(event)
                return event
            if self._done or (cut is None and await self._ended_before_resume()):
                self._finished = True
                raise StopAsyncIteration
            await self._recover(cut)

    def _observe(self, event: StreamResponse) -> None:
        self._view.apply(event)
        if event.message is not None:
            self._done = self._ended = True
        elif (state := self.state) is not None and (
            event.task is not None or event.status_update is not None
        ):
            self._done = is_final_state(state)
            self._ended = state in TERMINAL_STATES

    async def _ended_before_resume(self) -> bool:
        """Whether a stream resumed after its task's final event (it ends at once, with no
        event) is over: the task is terminal (GetTask), now the stream's task."""
        if not self._quiet_resume or self._fetch is None or not self.task_id:
            return False
        try:
            task = await self._fetch(self.task_id)
        except A2AError:
            return False
        if task.status.state not in TERMINAL_STATES:
            return False
        if self._view.task is None:
            self._view.apply(StreamResponse(task=task))
        self._done = self._ended = True
        return True

    async def _enter(self, open_source: Callable[[], EventSource], last_id: str | None) -> None:
        self._quiet_resume = last_id is not None
        if last_id is None:
            source = open_source()
            self._events = await source.__aenter__()
        else:  # the header is read while the request is built (by the call or on entering)
            with request_headers({LAST_EVENT_ID: last_id}):
                source = open_source()
                self._events = await source.__aenter__()
        self._source = source

    async def _close_source(self) -> None:
        source, self._source, self._events = self._source, None, None
        if source is not None:
            await source.__aexit__(None, None, None)

    async def _recover(self, cut: A2AError | None) -> None:
        task_id = self.task_id
        subscribe = self._subscribe
        await self._close_source()
        failed = 0  # attempts of this recovery that could not reach the server
        while True:
            if not self._resubscribe or not task_id or self.resubscribes >= self._budget:
                self._finished = True
                raise StreamInterruptedError(
                    _cut_message(cut, task_id), task_id=task_id, last_state=self.state
                ) from cut
            assert subscribe is not None
            if failed:
                await anyio.sleep(min(self._retry_delay * 2 ** (failed - 1), MAX_RETRY_DELAY))
            self.resubscribes += 1
            try:
                await self._enter(lambda: subscribe(task_id), self._last_id)
            except UnsupportedOperationError as exc:  # the task ended during the gap
                await self._final_snapshot(task_id, exc)
                return
            except (A2AConnectionError, ServerBusyError) as exc:  # try again, if allowed
                cut = exc
                failed += 1
                continue
            except A2AError as exc:
                self._finished = True
                raise StreamInterruptedError(
                    f"stream cut and SubscribeToTask failed: {exc}",
                    task_id=task_id,
                    last_state=self.state,
                ) from exc
            self._after_resubscribe = True
            return

    async def _final_snapshot(self, task_id: str, refusal: A2AError) -> None:
        task: Task | None = None
        if self._fetch is not None:
            try:
                task = await self._fetch(task_id)
            except A2AError:
                task = None
        if task is None or not is_final_state(task.status.state):
            self._finished = True
            raise StreamInterruptedError(
                f"stream cut and SubscribeToTask refused: {refusal}",
                task_id=task_id,
                last_state=self.state,
            ) from refusal
        self._finished = True
        if not self._view.repeats(task):
            self._pending.append(StreamResponse(task=task))


def _cut_message(cut: A2AError | None, task_id: str) -> str:
    what = f"stream of task {task_id}" if task_id else "stream"
    how = f" ({cut.message})" if cut is not None else ""
    return f"{what} ended before a terminal or interrupted state{how}"
