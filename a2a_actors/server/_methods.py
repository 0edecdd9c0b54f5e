"""The eleven A2A methods as the server offers them, shared by both bindings.

Each method takes the typed request the protocol decoded and a :class:`CallContext` (who is
calling, with which extensions), calls the runtime, and returns the typed result or raises an
:class:`~a2a_actors.protocol._errors.A2AError`. The JSON-RPC and HTTP+JSON bindings differ
only in how they decode requests and encode answers; what a method *does* lives here once.

What is decided here rather than in the runtime is the server's own configuration: whether
streaming, push configs and the extended card are offered (the same switches the card
advertises), required-extension enforcement, and the push-config store. Streams are async
context managers: errors before the first event raise from ``__aenter__``.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast

import anyio

from a2a_actors.protocol._card import AgentCard
from a2a_actors.protocol._errors import (
    A2AError,
    ExtensionSupportRequiredError,
    PushNotificationNotSupportedError,
    UnauthenticatedError,
    UnsupportedOperationError,
)
from a2a_actors.protocol._models import Message, StreamResponse, Task
from a2a_actors.protocol._requests import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
)
from a2a_actors.server._calls import CallObservers
from a2a_actors.server._card import Cards
from a2a_actors.server._config.config import ServerConfig
from a2a_actors.server._events import EventStream
from a2a_actors.server._idempotency import IdempotentSends
from a2a_actors.server._push_configs import PushConfigs
from a2a_actors.stores._keys import KeyStore

if TYPE_CHECKING:
    from a2a_actors.runtime import Supervisor

__all__ = ("CallContext", "Methods")

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True)
class CallContext:
    """Who calls, and how.

    Attributes:
        caller: The authenticated principal (``None`` when auth is off).
        authenticated: Whether valid credentials were presented.
        extensions: Extension URIs the request activates (``A2A-Extensions``).
        base_url: The request's own base URL (for card interface URLs).
        headers: Transport headers handed to the agent (``ctx.headers``): the W3C trace
            context (``traceparent``, ``tracestate``), lower-case names.
        after: SubscribeToTask resumes after this task version (the request's ``Last-Event-ID``, see
            :func:`~a2a_actors.server._http.sse.resume_point`); None: from a snapshot.
        binding: The binding the call came by (``jsonrpc``, ``rest``, ``grpc``): a label
            of the request metrics (docs/observability.md).
        idempotency_key: The request's ``Idempotency-Key`` ("" when it has none): see
            :mod:`a2a_actors.server._idempotency`.
    """

    caller: str | None = None
    authenticated: bool = False
    extensions: frozenset[str] = field(default_factory=frozenset)
    base_url: str = "http://localhost"
    headers: Mapping[str, str] = field(default_factory=dict)
    after: int | None = None
    binding: str = "jsonrpc"
    idempotency_key: str = ""


def _about_message(request: SendMessageRequest) -> tuple[str, str]:
    message = request.message
    return message.task_id or "", message.context_id or ""


def _about_task(request: Any) -> tuple[str, str]:
    return request.id, ""


def _about_push(request: Any) -> tuple[str, str]:
    return request.task_id, ""


def _about_nothing(*_: Any) -> tuple[str, str]:
    return "", ""


def _observed(
    name: str, about: Callable[..., tuple[str, str]], *, stream: bool = False
) -> Callable[[F], F]:
    """The A2A method ``name`` (one that opens a stream, with ``stream``), run through the
    app's call observers when it has any; ``about`` names the task it concerns from its
    request (:mod:`a2a_actors.server._calls`)."""

    def wrap(method: F) -> F:
        # Not a coroutine itself: unobserved, the method's own awaitable (or stream) is
        # returned, with no frame of ours left in its await chain.
        @functools.wraps(method)
        def observed(self: Methods, *args: Any) -> Any:
            calls = self.calls
            if calls is None:
                return method(self, *args)
            *request, ctx = args
            observe = calls.stream if stream else calls.unary

            def run(changed: CallContext) -> Any:  # the context as the observers changed it
                return method(self, *request, changed)

            return observe(name, ctx, run, *about(*request))

        return cast(F, observed)

    return wrap


class _InlinePush:
    """Registers a request's inline push config for the task it creates (``on_create``)."""

    __slots__ = ("_config", "_created", "_push")

    def __init__(self, push: PushConfigs, config: TaskPushNotificationConfig) -> None:
        self._push = push
        self._config = config
        self._created: TaskPushNotificationConfig | None = None

    async def __call__(self, task: Task) -> None:
        # The URL was checked (Methods._inline_push) before the task was created.
        self._created = await self._push.create(task.id, self._config, validated=True)

    async def forget(self) -> None:
        """Delete the registered config (its task was never committed)."""
        if self._created is not None:
            await self._push.delete(self._created.task_id, self._created.id)


class _ForgetOnMessage:
    """A new task's event stream that forgets its inline push config if the agent answers
    with a Message (the provisional task is then discarded, never stored)."""

    __slots__ = ("_events", "_registrar")

    def __init__(self, events: EventStream, registrar: _InlinePush) -> None:
        self._events = events
        self._registrar = registrar

    @property
    def version(self) -> int | None:
        return self._events.version

    def __aiter__(self) -> _ForgetOnMessage:
        return self

    async def __anext__(self) -> StreamResponse:
        event = await self._events.__anext__()
        if event.message is not None:
            # Shielded: a wait for the next event may be cancelled (a ping timer) and
            # must not lose the event it already took.
            with anyio.CancelScope(shield=True):
                await self._registrar.forget()
        return event

    def ready(self) -> bool:
        return self._events.ready()

    def next_nowait(self) -> None:
        """None: forgetting awaits, so every event comes through ``__anext__``."""
        return None


class Methods:
    """The A2A methods over one running Supervisor.

    Args:
        supervisor: The running runtime.
        config: The server configuration.
        cards: The card builder (for GetExtendedAgentCard and declared extensions).
        push: The push-config rules and store.
        keys: Where the idempotency keys of sends are kept (:mod:`a2a_actors.server._idempotency`).
        calls: The app's observers of calls (metrics, tracing), or None: no call is observed.
    """

    def __init__(
        self,
        supervisor: Supervisor,
        config: ServerConfig,
        cards: Cards,
        push: PushConfigs,
        keys: KeyStore,
        *,
        calls: CallObservers | None = None,
    ) -> None:
        self.calls = calls
        self.supervisor = supervisor
        self.config = config
        self.cards = cards
        self.push = push
        self.idempotent = IdempotentSends(keys, supervisor)

    def activated_extensions(self, ctx: CallContext) -> frozenset[str]:
        """The requested extensions this agent supports (echoed in ``A2A-Extensions``)."""
        return ctx.extensions & self.cards.declared_extensions

    def _check_extensions(self, request: SendMessageRequest, ctx: CallContext) -> None:
        enforce = self.config.enforce_required_extensions
        if not (enforce(request) if callable(enforce) else enforce):
            return
        missing = self.cards.required_extensions - ctx.extensions
        if missing:
            raise ExtensionSupportRequiredError(
                "Required extension(s) not activated: " + ", ".join(sorted(missing)),
                metadata={"extensions": ",".join(sorted(missing))},
            )

    def _check_push(self) -> None:
        if not self.config.push_notifications:
            raise PushNotificationNotSupportedError()

    def _check_streaming(self) -> None:
        if not self.config.streaming:
            raise UnsupportedOperationError("Streaming is not supported by this agent")

    async def _inline_push(self, request: SendMessageRequest) -> TaskPushNotificationConfig | None:
        """The request's inline push config, already checked against the SSRF policy.

        Checked here, before the supervisor creates or resumes anything, so that a refused
        URL leaves no half-created task behind.

        Raises:
            PushNotificationNotSupportedError: Push is off.
            InvalidParamsError: The URL is refused (field ``url``).
        """
        configuration = request.configuration
        inline = None if configuration is None else configuration.task_push_notification_config
        if inline is not None:
            self._check_push()
            await self.push.validate(inline)
        return inline

    @asynccontextmanager
    async def _follow_up_push(
        self,
        request: SendMessageRequest,
        ctx: CallContext,
        inline: TaskPushNotificationConfig | None,
    ) -> AsyncIterator[None]:
        """Register ``inline`` for the existing task a follow-up message names, before the
        message is delivered (so the receiver sees the task resume); undone, the config it
        replaced restored, if the supervisor refuses the message."""
        task_id = request.message.task_id
        if inline is None or not task_id:
            yield
            return
        await self.supervisor.check_access(task_id, caller=ctx.caller)
        previous = await self.push.store.get(task_id, inline.id) if inline.id else None
        created = await self.push.create(task_id, inline, validated=True)
        try:
            yield
        except A2AError:
            if previous is not None:
                await self.push.store.put(previous, limit=self.config.max_push_configs_per_task)
            else:
                await self.push.delete(task_id, created.id)
            raise

    @_observed("SendMessage", _about_message)
    def send_message(
        self, request: SendMessageRequest, ctx: CallContext
    ) -> Awaitable[Task | Message]:
        """SendMessage (blocking, ``returnImmediately`` and ``historyLength`` as requested);
        with an idempotency key, the task the key created if it did
        (:mod:`a2a_actors.server._idempotency`).

        An inline ``taskPushNotificationConfig`` is checked against the SSRF policy first
        (a refusal creates nothing), then registered as soon as the task exists, before it
        runs, so its receiver gets every event (the initial Task included); for a follow-up
        message, before the message is delivered to its task.

        Raises:
            ExtensionSupportRequiredError: A required extension is not active (raised by
                this call, or by awaiting it when the calls are observed).
        """
        self._check_extensions(request, ctx)
        if ctx.idempotency_key:
            return self.idempotent.send(
                ctx.idempotency_key, request, ctx.caller, lambda: self._sending(request, ctx)
            )
        return self._sending(request, ctx)

    async def _sending(self, request: SendMessageRequest, ctx: CallContext) -> Task | Message:
        inline = await self._inline_push(request)
        if inline is None:  # the common case, without the push bookkeeping
            return await self.supervisor.send_message(
                request, caller=ctx.caller, extensions=ctx.extensions, headers=ctx.headers
            )
        registrar = _InlinePush(self.push, inline)
        async with self._follow_up_push(request, ctx, inline):
            result = await self.supervisor.send_message(
                request,
                caller=ctx.caller,
                extensions=ctx.extensions,
                headers=ctx.headers,
                on_create=registrar,
            )
        if isinstance(result, Message):
            await registrar.forget()  # the provisional task was discarded: so is its config
        return result

    @_observed("SendStreamingMessage", _about_message, stream=True)
    def stream_message(
        self, request: SendMessageRequest, ctx: CallContext
    ) -> AbstractAsyncContextManager[EventStream]:
        """SendStreamingMessage: the task's events, starting with the Task (or one Message);
        with an idempotency key, the events of the task the key created if it did.

        An inline ``taskPushNotificationConfig`` is checked and registered as for
        :meth:`send_message`.

        Raises:
            UnsupportedOperationError: Streaming is off.
            ExtensionSupportRequiredError: A required extension is not active.

        Both are raised by this call, or by entering the stream when the calls are observed
        (so that the observers count them).
        """
        self._check_streaming()
        self._check_extensions(request, ctx)
        if ctx.idempotency_key:
            return self.idempotent.stream(
                ctx.idempotency_key, request, ctx.caller, lambda: self._streaming(request, ctx)
            )
        return self._streaming(request, ctx)

    @asynccontextmanager
    async def _streaming(
        self, request: SendMessageRequest, ctx: CallContext
    ) -> AsyncIterator[EventStream]:
        inline = await self._inline_push(request)
        if inline is None:  # the common case, without the exit stack's cost
            async with self.supervisor.stream_message(
                request, caller=ctx.caller, extensions=ctx.extensions, headers=ctx.headers
            ) as events:
                yield events
            return
        registrar = _InlinePush(self.push, inline)
        async with AsyncExitStack() as stack:
            async with self._follow_up_push(request, ctx, inline):  # undone if refused
                events = await stack.enter_async_context(
                    self.supervisor.stream_message(
                        request,
                        caller=ctx.caller,
                        extensions=ctx.extensions,
                        headers=ctx.headers,
                        on_create=registrar,
                    )
                )
            yield _ForgetOnMessage(events, registrar)

    @_observed("GetTask", _about_task)
    async def get_task(self, request: GetTaskRequest, ctx: CallContext) -> Task:
        """GetTask."""
        return await self.supervisor.get_task(
            request.id, history_length=request.history_length, caller=ctx.caller
        )

    @_observed("ListTasks", _about_nothing)
    async def list_tasks(self, request: ListTasksRequest, ctx: CallContext) -> ListTasksResponse:
        """ListTasks (only the caller's own tasks)."""
        return await self.supervisor.list_tasks(request, caller=ctx.caller)

    @_observed("CancelTask", _about_task)
    async def cancel_task(self, request: CancelTaskRequest, ctx: CallContext) -> Task:
        """CancelTask."""
        return await self.supervisor.cancel_task(
            request.id, caller=ctx.caller, metadata=request.metadata
        )

    @_observed("SubscribeToTask", _about_task, stream=True)
    @asynccontextmanager
    async def subscribe(
        self, request: SubscribeToTaskRequest, ctx: CallContext
    ) -> AsyncIterator[EventStream]:
        """SubscribeToTask: the Task snapshot, then every later event; resumed after
        ``ctx.after`` when set (see :meth:`Supervisor.subscribe`)."""
        self._check_streaming()
        async with self.supervisor.subscribe(
            request.id, caller=ctx.caller, after=ctx.after
        ) as events:
            yield events

    @_observed("CreateTaskPushNotificationConfig", _about_push)
    async def create_push_config(
        self, request: TaskPushNotificationConfig, ctx: CallContext
    ) -> TaskPushNotificationConfig:
        """CreateTaskPushNotificationConfig (the result carries no credentials)."""
        self._check_push()
        await self.supervisor.check_access(request.task_id, caller=ctx.caller)
        return await self.push.create(request.task_id, request)

    @_observed("GetTaskPushNotificationConfig", _about_push)
    async def get_push_config(
        self, request: GetTaskPushNotificationConfigRequest, ctx: CallContext
    ) -> TaskPushNotificationConfig:
        """GetTaskPushNotificationConfig."""
        self._check_push()
        await self.supervisor.check_access(request.task_id, caller=ctx.caller)
        return await self.push.get(request.task_id, request.id)

    @_observed("ListTaskPushNotificationConfigs", _about_push)
    async def list_push_configs(
        self, request: ListTaskPushNotificationConfigsRequest, ctx: CallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        """ListTaskPushNotificationConfigs."""
        self._check_push()
        await self.supervisor.check_access(request.task_id, caller=ctx.caller)
        return await self.push.list(
            request.task_id, page_size=request.page_size, page_token=request.page_token
        )

    @_observed("DeleteTaskPushNotificationConfig", _about_push)
    async def delete_push_config(
        self, request: DeleteTaskPushNotificationConfigRequest, ctx: CallContext
    ) -> None:
        """DeleteTaskPushNotificationConfig (idempotent)."""
        self._check_push()
        await self.supervisor.check_access(request.task_id, caller=ctx.caller)
        await self.push.delete(request.task_id, request.id)

    @_observed("GetExtendedAgentCard", _about_nothing)
    async def extended_card(self, ctx: CallContext) -> AgentCard:
        """GetExtendedAgentCard.

        Raises:
            UnauthenticatedError: The card requires credentials and none were valid.
        """
        card = self.cards.extended(self.cards.base_url(ctx.base_url))
        if self.config.extended_card_needs_auth and not ctx.authenticated:
            raise UnauthenticatedError("The extended agent card requires authentication")
        return card
