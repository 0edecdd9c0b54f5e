"""Links: how a parent task reaches one child agent, in its own supervisor or over A2A.

A :class:`Link` offers the operations a delegation needs, the same for both kinds:

* ``open``: create the child task *and* follow it in one call (SendStreamingMessage), for
  links whose ``streams_start`` is true: children that are orchestrated, whose wrapper
  starts the task at once (``ctx.start()``), so the stream's first event (the Task) comes
  before the child does anything and tells the parent its id;
* ``start``: otherwise, create the child task and return it *as soon as it exists*
  (``returnImmediately``), so the parent knows its id (to record it, and to cancel it)
  before the child runs; a non-orchestrated agent's first stream event could come only
  when it first acts, too late to cancel it while it is blocked;
* ``subscribe``: its events, a Task snapshot first (SubscribeToTask), unless ``polls``: an
  agent that does not stream is followed with ``get_task`` instead;
* ``resume``: send the next message to the same (interrupted) task;
* ``get_task`` and ``cancel``.

:class:`LocalLink` calls the parent's supervisor (a :class:`~a2a_actors.runtime.TaskRunner`)
directly: the child runs as another task actor of it, with the ``agent=`` override, and is
cancelled by interruption (local children are always orchestrated, so they are opened).
:class:`RemoteLink` calls an :class:`~a2a_actors.client.A2AClient`; it opens a remote agent
whose card declares streaming and the correlation extension with ``startsAtOnce``
(:func:`starts_at_once`), starts then subscribes to one that declares streaming only, and
starts one whose card does not declare streaming the same way but ``polls`` it (GetTask)
instead of subscribing.

Trace context. Each call carries W3C ``traceparent`` (and ``tracestate``) headers. Locally
they are passed as the child's transport headers; remotely, :func:`outbound_headers` adds
them to every request the client sends from that task while the call runs
(:func:`a2a_actors.client.request_headers`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import AbstractAsyncContextManager, contextmanager
from types import TracebackType
from typing import Any, Protocol

from a2a_actors.client import A2AClient, EventStream, request_headers
from a2a_actors.protocol._card import AgentCard
from a2a_actors.protocol._models import Message, StreamResponse, Task
from a2a_actors.protocol._requests import SendMessageConfiguration, SendMessageRequest
from a2a_actors.runtime import Agent, TaskRunner
from orchestrator._correlation import CORRELATION_URI, STARTS_AT_ONCE

__all__ = (
    "Link",
    "LocalLink",
    "RemoteLink",
    "outbound_headers",
    "starts_at_once",
)

_EXTENSIONS = (CORRELATION_URI,)


@contextmanager
def outbound_headers(headers: Mapping[str, str]) -> Iterator[None]:
    """While inside, HTTP requests sent by this task carry ``headers`` (trace context)."""
    with request_headers(headers):
        yield


def starts_at_once(card: AgentCard | None) -> bool:
    """Whether the agent of ``card`` streams and declares the correlation extension with
    ``startsAtOnce: true``: its stream's first event then comes at once, so it can be opened
    in one call. (Declaring the extension alone says nothing about when it starts.)"""
    if card is None or not card.capabilities.streaming:
        return False
    return any(
        e.uri == CORRELATION_URI and (e.params or {}).get(STARTS_AT_ONCE) is True
        for e in card.capabilities.extensions
    )


class Link(Protocol):
    """One child agent as a parent sees it."""

    @property
    def name(self) -> str:
        """The child agent's name (as the hop path records it)."""
        ...

    @property
    def url(self) -> str:
        """The child server's base URL ("" for a local child)."""
        ...

    @property
    def local(self) -> bool:
        """Whether the child runs in the parent's own supervisor."""
        ...

    @property
    def polls(self) -> bool:
        """Whether the child is followed with ``get_task`` (its agent does not stream)."""
        ...

    @property
    def streams_start(self) -> bool:
        """Whether the child is created with ``open`` (else ``start``, then ``subscribe``)."""
        ...

    def open(
        self, message: Message, headers: Mapping[str, str]
    ) -> AbstractAsyncContextManager[AsyncIterator[StreamResponse]]:
        """Create the child task with ``message`` and stream its events (Task first)."""
        ...

    async def start(self, message: Message, headers: Mapping[str, str]) -> Task | Message:
        """Create the child task with ``message``."""
        ...

    async def resume(self, message: Message, headers: Mapping[str, str]) -> Task | Message:
        """Send ``message`` (with the child's ``taskId``) to continue an interrupted task."""
        ...

    def subscribe(
        self, task_id: str, headers: Mapping[str, str]
    ) -> AbstractAsyncContextManager[AsyncIterator[StreamResponse]]:
        """The child's events: a Task snapshot, then every later event."""
        ...

    async def get_task(self, task_id: str, headers: Mapping[str, str]) -> Task:
        """The child task now."""
        ...

    async def cancel(
        self, task_id: str, metadata: dict[str, Any], headers: Mapping[str, str]
    ) -> Task:
        """Cancel the child task; returns it once canceled (or as it ended)."""
        ...


def _immediately() -> SendMessageConfiguration:
    return SendMessageConfiguration(return_immediately=True)


class LocalLink:
    """A child agent run as a task actor of the parent's own supervisor.

    Args:
        supervisor: The parent's supervisor.
        caller: The parent task's owner; the child is owned by the same principal.
        agent: The (orchestrated) agent the child task runs.
    """

    local = True
    polls = False
    streams_start = True
    url = ""

    def __init__(self, supervisor: TaskRunner, caller: str | None, agent: Agent) -> None:
        self._sup = supervisor
        self._caller = caller
        self._agent = agent

    @property
    def name(self) -> str:
        """The child agent's name."""
        return self._agent.name

    def open(
        self, message: Message, headers: Mapping[str, str]
    ) -> AbstractAsyncContextManager[AsyncIterator[StreamResponse]]:
        """SendStreamingMessage in the supervisor: the child's Task snapshot, then its events."""
        return self._sup.stream_message(
            SendMessageRequest(message=message),
            caller=self._caller,
            extensions=frozenset(_EXTENSIONS),
            agent=self._agent,
            headers=headers,
        )

    async def start(self, message: Message, headers: Mapping[str, str]) -> Task | Message:
        """Create the child task (committed, SUBMITTED) in the supervisor."""
        return await self._sup.send_message(
            SendMessageRequest(message=message, configuration=_immediately()),
            caller=self._caller,
            extensions=frozenset(_EXTENSIONS),
            agent=self._agent,
            headers=headers,
        )

    async def resume(self, message: Message, headers: Mapping[str, str]) -> Task | Message:
        """Deliver ``message`` to the interrupted child; returns once it is WORKING."""
        return await self._sup.send_message(
            SendMessageRequest(message=message, configuration=_immediately()),
            caller=self._caller,
            extensions=frozenset(_EXTENSIONS),
        )

    def subscribe(
        self, task_id: str, headers: Mapping[str, str]
    ) -> AbstractAsyncContextManager[AsyncIterator[StreamResponse]]:
        """SubscribeToTask in the supervisor."""
        return self._sup.subscribe(task_id, caller=self._caller)

    async def get_task(self, task_id: str, headers: Mapping[str, str]) -> Task:
        """GetTask in the supervisor."""
        return await self._sup.get_task(task_id, caller=self._caller)

    async def cancel(
        self, task_id: str, metadata: dict[str, Any], headers: Mapping[str, str]
    ) -> Task:
        """Interrupt the child's handler; returns the task once CANCELED."""
        return await self._sup.cancel_task(task_id, caller=self._caller, metadata=metadata)


class _TracedEvents:
    """An :class:`EventStream` whose HTTP requests (first and resubscribes) carry headers."""

    def __init__(self, events: EventStream, headers: Mapping[str, str]) -> None:
        self._events = events
        self._headers = headers

    async def __aenter__(self) -> _TracedEvents:
        with outbound_headers(self._headers):
            await self._events.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._events.__aexit__(exc_type, exc, tb)

    def __aiter__(self) -> _TracedEvents:
        return self

    async def __anext__(self) -> StreamResponse:
        with outbound_headers(self._headers):
            return await self._events.__anext__()


class RemoteLink:
    """A child agent behind an A2A endpoint.

    Args:
        client: The client to call it with.
        name: The agent's name (from its card).
        url: The base URL it was reached at.
        streaming: Whether it streams (the events of a started child then come from
            SubscribeToTask); otherwise the child is followed by polling GetTask.
        orchestrated: Whether its card declares the correlation extension; with
            ``streaming``, the child is created and followed with one SendStreamingMessage
            (``open``), whose first event (the Task) comes at once.
    """

    local = False

    def __init__(
        self,
        client: A2AClient,
        *,
        name: str,
        url: str,
        streaming: bool,
        orchestrated: bool = False,
    ) -> None:
        self.client = client
        self._name = name
        self._url = url
        self.polls = not streaming
        self.streams_start = streaming and orchestrated

    @property
    def name(self) -> str:
        """The remote agent's name."""
        return self._name

    @property
    def url(self) -> str:
        """The base URL of the remote agent's server."""
        return self._url

    def open(
        self, message: Message, headers: Mapping[str, str]
    ) -> AbstractAsyncContextManager[AsyncIterator[StreamResponse]]:
        """SendStreamingMessage, resubscribing (SubscribeToTask) if the stream is cut."""
        events = self.client.stream_message(message, extensions=_EXTENSIONS, resubscribe=True)
        return _TracedEvents(events, headers)

    async def start(self, message: Message, headers: Mapping[str, str]) -> Task | Message:
        """SendMessage with ``returnImmediately`` (a server may ignore it and block)."""
        with outbound_headers(headers):
            return await self.client.send_message(
                message, return_immediately=True, extensions=_EXTENSIONS
            )

    async def resume(self, message: Message, headers: Mapping[str, str]) -> Task | Message:
        """SendMessage with the child's ``taskId``."""
        return await self.start(message, headers)

    def subscribe(
        self, task_id: str, headers: Mapping[str, str]
    ) -> AbstractAsyncContextManager[AsyncIterator[StreamResponse]]:
        """SubscribeToTask, resubscribing once more if the stream is cut."""
        events = self.client.subscribe(task_id, extensions=_EXTENSIONS, resubscribe=True)
        return _TracedEvents(events, headers)

    async def get_task(self, task_id: str, headers: Mapping[str, str]) -> Task:
        """GetTask."""
        with outbound_headers(headers):
            return await self.client.get_task(task_id, extensions=_EXTENSIONS)

    async def cancel(
        self, task_id: str, metadata: dict[str, Any], headers: Mapping[str, str]
    ) -> Task:
        """CancelTask."""
        with outbound_headers(headers):
            return await self.client.cancel_task(task_id, metadata=metadata, extensions=_EXTENSIONS)
