"""Idempotent sends: the same ``Idempotency-Key`` returns the task it first created.

A client (or a load balancer) that retries a SendMessage after a timeout would otherwise
run it twice. With an ``Idempotency-Key`` header (HTTP bindings) or ``idempotency-key``
metadata (gRPC) on SendMessage or SendStreamingMessage:

* the first request with a key, for a principal, **claims** it, sends as usual, and
  **records** what the send created once clients can see it: the task a blocking send
  answered with (or the Message of an agent that answered with one), or a stream's first
  event (the task's snapshot, or that Message);
* a later request with the same key from the same principal, within the retention window
  (``ServerConfig.idempotency_ttl``, a day by default), **replays**: a blocking send waits
  for that task to settle and returns it (``returnImmediately``: at once), a stream
  re-attaches to it (its snapshot, then every later event, to its next settled state; a
  settled task's snapshot alone); however many arrive at once, they wait for the first
  one's record rather than sending
  (as long as the first takes: a blocking send's record comes with its answer);
* the same key with a different request (the message's content, its task and context,
  the configuration and metadata: everything but its ``messageId``) is refused with
  ``InvalidParamsError``; a send that failed before creating anything releases its key,
  so a retry sends again.

Where keys live is a :class:`~a2a_actors.stores._keys.KeyStore`:
:class:`~a2a_actors.stores._keys.MemoryKeys` in one process (bounded, each key kept for the
window), a NATS KV bucket in a cluster (:mod:`a2a_actors.cluster._idempotency`), so a retry
reaching another node replays too. Keys are at most 255 visible
ASCII characters. Without a key, nothing here runs.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING

import anyio
import msgspec

from a2a_actors.protocol import codec
from a2a_actors.protocol._errors import (
    InvalidParamsError,
    InvalidRequestError,
    UnsupportedOperationError,
)
from a2a_actors.protocol._headers import (
    IDEMPOTENCY_HEADER,
    MAX_IDEMPOTENCY_KEY_LENGTH,
    valid_idempotency_key,
)
from a2a_actors.protocol._models import Message, StreamResponse, Task
from a2a_actors.protocol._requests import SendMessageRequest
from a2a_actors.server._events import EventStream, Single, UntilSettled
from a2a_actors.stores._keys import KeyStore, Sent

if TYPE_CHECKING:
    from a2a_actors.runtime import Supervisor

__all__ = ("IDEMPOTENCY_HEADER", "IdempotentSends", "fingerprint")


def fingerprint(request: SendMessageRequest) -> str:
    """What two requests with one key must share: all of it but the ``messageId``."""
    message = msgspec.structs.replace(request.message, message_id="-")
    encoded = codec.encode(msgspec.structs.replace(request, message=message))
    return hashlib.sha256(encoded).hexdigest()


def _name(caller: str | None, key: str) -> str:
    if not valid_idempotency_key(key):
        raise InvalidRequestError(
            f"{IDEMPOTENCY_HEADER} must be 1 to {MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII "
            "characters"
        )
    return f"{caller or ''}\x00{key}"


class _Recorder:
    """Records what the first request with a key created, once clients can see it."""

    __slots__ = ("done", "keys", "name", "print_")

    def __init__(self, keys: KeyStore, name: str, print_: str) -> None:
        self.keys, self.name, self.print_ = keys, name, print_
        self.done = False

    async def record(self, result: Task | Message) -> None:
        if isinstance(result, Task):
            sent = Sent(self.print_, task_id=result.id)
        else:
            sent = Sent(self.print_, message=result)
        await self.keys.record(self.name, sent)
        self.done = True

    async def release_unless_done(self) -> None:
        if not self.done:
            with anyio.CancelScope(shield=True):
                await self.keys.release(self.name)


class _Recorded:
    """A first request's event stream that records its first event (the task's snapshot,
    or the agent's Message); the stream's versions and readiness pass through."""

    __slots__ = ("_events", "_recorder")

    def __init__(self, events: EventStream, recorder: _Recorder) -> None:
        self._events = events
        self._recorder = recorder

    @property
    def version(self) -> int | None:
        return self._events.version

    def __aiter__(self) -> _Recorded:
        return self

    async def __anext__(self) -> StreamResponse:
        event = await self._events.__anext__()
        recorder = self._recorder
        if not recorder.done:
            first = event.task if event.task is not None else event.message
            if first is not None:
                # Shielded: a wait for the next event may be cancelled (a ping timer) and
                # must not lose the event it already took.
                with anyio.CancelScope(shield=True):
                    await recorder.record(first)
        return event

    def ready(self) -> bool:
        return self._events.ready()

    def next_nowait(self) -> StreamResponse | None:
        """None until the first event is recorded (recording awaits), then as the stream's."""
        return self._events.next_nowait() if self._recorder.done else None


class IdempotentSends:
    """The sends of one server that carry an idempotency key (see the module docstring)."""

    def __init__(self, keys: KeyStore, supervisor: Supervisor) -> None:
        self.keys = keys
        self.supervisor = supervisor

    async def send(
        self,
        key: str,
        request: SendMessageRequest,
        caller: str | None,
        send: Callable[[], Awaitable[Task | Message]],
    ) -> Task | Message:
        """SendMessage with ``key``: sent by ``send``, or replayed (see the module
        docstring).

        Raises:
            InvalidRequestError: A malformed key.
            InvalidParamsError: The key was used for another request.
        """
        name, print_ = _name(caller, key), fingerprint(request)
        sent = await self.keys.claim(name, print_)
        if sent is None:
            recorder = _Recorder(self.keys, name, print_)
            try:
                result = await send()
                await recorder.record(result)
            finally:
                await recorder.release_unless_done()
            return result
        _check(key, sent, print_)
        if sent.message is not None:
            return sent.message
        config = request.configuration
        if config is None or not config.return_immediately:
            async with self._replay(sent.task_id, caller) as events:
                async for _ in events:
                    pass
        history = config.history_length if config is not None else None
        return await self.supervisor.get_task(sent.task_id, history_length=history, caller=caller)

    @asynccontextmanager
    async def stream(
        self,
        key: str,
        request: SendMessageRequest,
        caller: str | None,
        open_stream: Callable[[], AbstractAsyncContextManager[EventStream]],
    ) -> AsyncIterator[EventStream]:
        """SendStreamingMessage with ``key``: the new task's events, or the events of the
        task the key created, to its next settled state (see the module docstring).

        Raises:
            InvalidRequestError: A malformed key.
            InvalidParamsError: The key was used for another request.
        """
        name, print_ = _name(caller, key), fingerprint(request)
        sent = await self.keys.claim(name, print_)
        if sent is None:
            recorder = _Recorder(self.keys, name, print_)
            try:
                async with open_stream() as events:
                    yield _Recorded(events, recorder)
            finally:
                await recorder.release_unless_done()
            return
        _check(key, sent, print_)
        if sent.message is not None:
            yield Single(StreamResponse(message=sent.message))
            return
        async with self._replay(sent.task_id, caller) as events:
            yield events

    @asynccontextmanager
    async def _replay(self, task_id: str, caller: str | None) -> AsyncIterator[EventStream]:
        """The task's events from its snapshot to its next settled state (terminal, or
        waiting for input): what the first request's stream showed or will show."""
        stack = AsyncExitStack()
        try:
            events = await stack.enter_async_context(
                self.supervisor.subscribe(task_id, caller=caller)
            )
        except UnsupportedOperationError:  # it ended (or is not live here): its last state
            yield Single(
                StreamResponse(task=await self.supervisor.get_task(task_id, caller=caller))
            )
            return
        async with stack:
            yield UntilSettled(events)


def _check(key: str, sent: Sent, print_: str) -> None:
    if sent.fingerprint != print_:
        raise InvalidParamsError(
            f"{IDEMPOTENCY_HEADER} {key!r} was used for another request (within its "
            "retention window); use a new key for a new request"
        )
