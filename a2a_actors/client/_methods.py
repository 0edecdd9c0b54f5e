"""The eleven A2A methods as typed coroutines over a
:class:`~a2a_actors.client._transports.transport.Transport`.

:class:`A2AMethods` builds the A2A 1.0 request of each method (copying the interface's ``tenant``
into it), merges the extensions to activate (the default set plus per call), and hands both to its
transport, which owns the wire. Results come back as the protocol's frozen Structs; failures as the
one error hierarchy (see :mod:`a2a_actors.client._errors`). It holds no HTTP client of its own:
:class:`~a2a_actors.client._client.A2AClient` adds construction, discovery and lifetime on top.
Turning friendly arguments (a ``str`` message, SendMessage options, a state by name) into wire
values is :mod:`a2a_actors.client._call_arguments`'s job; ``text_message`` is re-exported from
there.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence

from msgspec.structs import replace

from a2a_actors.client._call_arguments import (
    send_message_request,
    task_state,
    text_message as text_message,
)
from a2a_actors.client._stream import EventStream
from a2a_actors.client._transports.transport import EventSource, Transport
from a2a_actors.protocol._card import AgentCard, AgentInterface
from a2a_actors.protocol._models import JSONObject, Message, Task, TaskState
from a2a_actors.protocol._requests import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    SendMessageRequest,
    SendMessageResponse,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
)

__all__ = ("A2AMethods", "text_message")


class A2AMethods:
    """The typed A2A API over one transport.

    Args:
        transport: Speaks the wire.
        card: The agent's card, if known; kept as :attr:`card`.
        extensions: Extension URIs activated on every call (``A2A-Extensions``).
        resubscribe: Resume cut streams with SubscribeToTask (default for every stream).
        max_resubscribes: Re-subscriptions allowed per stream.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        card: AgentCard | None = None,
        extensions: Sequence[str] = (),
        resubscribe: bool = False,
        max_resubscribes: int = 3,
    ) -> None:
        self._transport = transport
        self.card = card
        self.extensions = tuple(extensions)
        self.resubscribe = resubscribe
        self.max_resubscribes = max_resubscribes

    @property
    def transport(self) -> Transport:
        """The transport in use."""
        return self._transport

    @property
    def interface(self) -> AgentInterface:
        """The interface spoken to (URL, binding, protocol version, tenant)."""
        return self._transport.interface

    # -- helpers ---------------------------------------------------------------------------

    @property
    def _tenant(self) -> str:
        return self._transport.interface.tenant

    def _exts(self, extra: Sequence[str]) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.extensions, *extra)))

    def _events(
        self,
        open_method: str,
        params: object,
        *,
        extensions: Sequence[str],
        resubscribe: bool | None,
        task_id: str = "",
        last_event_id: str | None = None,
    ) -> EventStream:
        exts = self._exts(extensions)

        def subscribe(tid: str) -> EventSource:
            request = SubscribeToTaskRequest(id=tid, tenant=self._tenant)
            return self._transport.stream("SubscribeToTask", request, extensions=exts)

        async def fetch(tid: str) -> Task:
            return await self.get_task(tid, extensions=extensions)

        return EventStream(
            lambda: self._transport.stream(open_method, params, extensions=exts),
            subscribe=subscribe,
            fetch_task=fetch,
            resubscribe=self.resubscribe if resubscribe is None else resubscribe,
            max_resubscribes=self.max_resubscribes,
            task_id=task_id,
            last_event_id=last_event_id,
        )

    # -- messages --------------------------------------------------------------------------

    async def send_message(
        self,
        message_or_request: str | Message | SendMessageRequest,
        *,
        task_id: str = "",
        context_id: str = "",
        return_immediately: bool = False,
        history_length: int | None = None,
        accepted_output_modes: Sequence[str] = (),
        push_config: TaskPushNotificationConfig | None = None,
        metadata: JSONObject | None = None,
        extensions: Sequence[str] = (),
    ) -> Task | Message:
        """SendMessage: start a task, continue one, or get a direct reply.

        A ``str`` becomes a user text Message (``task_id``/``context_id`` set on it); a
        Message is sent as is; a ``SendMessageRequest`` is sent as is (its ``tenant`` filled
        in when empty) and the option arguments are ignored. Unless ``return_immediately``,
        the server answers once the task is terminal or interrupted.

        Returns:
            The Task (its state tells terminal from INPUT_REQUIRED …) or the agent's Message.

        Raises:
            TaskNotFoundError: ``task_id`` is unknown (clients cannot choose task ids).
            UnsupportedOperationError: The task is terminal.
            A2AError: Any other error the agent reports; A2AConnectionError on HTTP failure.
        """
        request = send_message_request(
            message_or_request,
            tenant=self._tenant,
            task_id=task_id,
            context_id=context_id,
            return_immediately=return_immediately,
            history_length=history_length,
            accepted_output_modes=accepted_output_modes,
            push_config=push_config,
            metadata=metadata,
        )
        response = await self._transport.call(
            "SendMessage", request, SendMessageResponse, extensions=self._exts(extensions)
        )
        return response.payload

    def stream_message(
        self,
        message_or_request: str | Message | SendMessageRequest,
        *,
        task_id: str = "",
        context_id: str = "",
        history_length: int | None = None,
        accepted_output_modes: Sequence[str] = (),
        push_config: TaskPushNotificationConfig | None = None,
        metadata: JSONObject | None = None,
        extensions: Sequence[str] = (),
        resubscribe: bool | None = None,
    ) -> EventStream:
        """SendStreamingMessage, as ``async with client.stream_message(…) as events``.

        Arguments as for :meth:`send_message`; ``resubscribe`` overrides the client default
        for this stream. Entering raises what :meth:`send_message` raises; iterating yields
        every StreamResponse and raises as :class:`~a2a_actors.client._stream.EventStream` documents
        (StreamInterruptedError on a cut).
        """
        request = send_message_request(
            message_or_request,
            tenant=self._tenant,
            task_id=task_id,
            context_id=context_id,
            return_immediately=False,
            history_length=history_length,
            accepted_output_modes=accepted_output_modes,
            push_config=push_config,
            metadata=metadata,
        )
        return self._events(
            "SendStreamingMessage", request, extensions=extensions, resubscribe=resubscribe
        )

    #: The A2A method name, as an alias of :meth:`stream_message`.
    send_streaming_message = stream_message

    # -- tasks -----------------------------------------------------------------------------

    async def get_task(
        self, task_id: str, *, history_length: int | None = None, extensions: Sequence[str] = ()
    ) -> Task:
        """GetTask: the task's current snapshot (at most ``history_length`` messages).

        Raises:
            TaskNotFoundError: Unknown task.
        """
        request = GetTaskRequest(id=task_id, history_length=history_length, tenant=self._tenant)
        return await self._transport.call(
            "GetTask", request, Task, extensions=self._exts(extensions)
        )

    async def list_tasks(
        self,
        *,
        context_id: str | None = None,
        status: TaskState | str | None = None,
        page_size: int | None = None,
        page_token: str | None = None,
        history_length: int | None = None,
        status_timestamp_after: _dt.datetime | None = None,
        include_artifacts: bool | None = None,
        extensions: Sequence[str] = (),
    ) -> ListTasksResponse:
        """ListTasks: one page of tasks, newest status first; follow ``next_page_token``.

        ``status`` takes a TaskState or its name (``"TASK_STATE_WORKING"``, ``"working"``).

        Raises:
            ValueError: ``status`` names no task state.
            InvalidParamsError: e.g. ``page_size`` outside 1..100 (checked by the server).
        """
        request = ListTasksRequest(
            context_id=context_id or "",
            status=None if status is None else task_state(status),
            page_size=page_size,
            page_token=page_token or "",
            history_length=history_length,
            status_timestamp_after=status_timestamp_after,
            include_artifacts=include_artifacts,
            tenant=self._tenant,
        )
        return await self._transport.call(
            "ListTasks", request, ListTasksResponse, extensions=self._exts(extensions)
        )

    async def cancel_task(
        self, task_id: str, *, metadata: JSONObject | None = None, extensions: Sequence[str] = ()
    ) -> Task:
        """CancelTask: ask the agent to stop the task; returns it (normally CANCELED).

        Raises:
            TaskNotFoundError: Unknown task.
            TaskNotCancelableError: The task is already terminal.
        """
        request = CancelTaskRequest(id=task_id, metadata=metadata, tenant=self._tenant)
        return await self._transport.call(
            "CancelTask", request, Task, extensions=self._exts(extensions)
        )

    def subscribe(
        self,
        task_id: str,
        *,
        extensions: Sequence[str] = (),
        resubscribe: bool | None = None,
        last_event_id: str | int | None = None,
    ) -> EventStream:
        """SubscribeToTask, as ``async with client.subscribe(task_id) as events``.

        The first event is a Task snapshot, then every later event until the task is
        terminal or interrupted. With ``last_event_id`` (an earlier stream's
        ``last_event_id``) it resumes after that event instead, when the server still
        holds what followed it (sent as ``Last-Event-ID``; else the snapshot comes first).

        Raises (on entering):
            TaskNotFoundError: Unknown task.
            UnsupportedOperationError: The task is terminal, or the agent does not stream.
        """
        request = SubscribeToTaskRequest(id=task_id, tenant=self._tenant)
        return self._events(
            "SubscribeToTask",
            request,
            extensions=extensions,
            resubscribe=resubscribe,
            task_id=task_id,
            last_event_id=None if last_event_id is None else str(last_event_id),
        )

    # -- push notification configs ---------------------------------------------------------

    async def create_push_config(
        self, config: TaskPushNotificationConfig, *, extensions: Sequence[str] = ()
    ) -> TaskPushNotificationConfig:
        """CreateTaskPushNotificationConfig for ``config.task_id``; returns the stored config.

        Raises:
            PushNotificationNotSupportedError: The agent does not do push notifications.
            TaskNotFoundError: Unknown task.
        """
        if self._tenant and not config.tenant:
            config = replace(config, tenant=self._tenant)
        return await self._transport.call(
            "CreateTaskPushNotificationConfig",
            config,
            TaskPushNotificationConfig,
            extensions=self._exts(extensions),
        )

    async def get_push_config(
        self, task_id: str, config_id: str, *, extensions: Sequence[str] = ()
    ) -> TaskPushNotificationConfig:
        """GetTaskPushNotificationConfig.

        Raises:
            TaskNotFoundError: Unknown task or config id.
        """
        request = GetTaskPushNotificationConfigRequest(
            task_id=task_id, id=config_id, tenant=self._tenant
        )
        return await self._transport.call(
            "GetTaskPushNotificationConfig",
            request,
            TaskPushNotificationConfig,
            extensions=self._exts(extensions),
        )

    async def list_push_configs(
        self,
        task_id: str,
        *,
        page_size: int | None = None,
        page_token: str | None = None,
        extensions: Sequence[str] = (),
    ) -> ListTaskPushNotificationConfigsResponse:
        """ListTaskPushNotificationConfigs: one page of the task's configs.

        Raises:
            TaskNotFoundError: Unknown task.
        """
        request = ListTaskPushNotificationConfigsRequest(
            task_id=task_id,
            page_size=page_size or 0,
            page_token=page_token or "",
            tenant=self._tenant,
        )
        return await self._transport.call(
            "ListTaskPushNotificationConfigs",
            request,
            ListTaskPushNotificationConfigsResponse,
            extensions=self._exts(extensions),
        )

    async def delete_push_config(
        self, task_id: str, config_id: str, *, extensions: Sequence[str] = ()
    ) -> None:
        """DeleteTaskPushNotificationConfig (idempotent: deleting twice succeeds).

        Raises:
            TaskNotFoundError: Unknown task.
        """
        request = DeleteTaskPushNotificationConfigRequest(
            task_id=task_id, id=config_id, tenant=self._tenant
        )
        await self._transport.call(
            "DeleteTaskPushNotificationConfig",
            request,
            type(None),
            extensions=self._exts(extensions),
        )

    # -- card ------------------------------------------------------------------------------

    async def get_extended_card(self, *, extensions: Sequence[str] = ()) -> AgentCard:
        """GetExtendedAgentCard; the result also replaces :attr:`card` (S§3.1.11).

        Raises:
            UnsupportedOperationError: The agent declares no extended card.
            ExtendedAgentCardNotConfiguredError: Declared but not configured.
            UnauthenticatedError: The call needs credentials.
        """
        request = GetExtendedAgentCardRequest(tenant=self._tenant)
        card = await self._transport.call(
            "GetExtendedAgentCard", request, AgentCard, extensions=self._exts(extensions)
        )
        self.card = card
        return card
