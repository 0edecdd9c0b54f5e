"""An in-process client: drive a :class:`Supervisor` directly, without HTTP.

Tests, examples and benchmarks use :class:`InProcessClient` the way a remote client uses
an A2A endpoint: same requests, same results, same errors (the protocol's error classes,
raised directly). No encoding happens, so it measures the runtime alone.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any
from uuid import uuid4

import msgspec

from a2a_actors.protocol._models import Message, Part, Role, Task
from a2a_actors.protocol._requests import (
    ListTasksRequest,
    ListTasksResponse,
    SendMessageConfiguration,
    SendMessageRequest,
)
from a2a_actors.runtime._fanout import Subscription
from a2a_actors.runtime._supervisor import Supervisor

__all__ = ("InProcessClient", "user_message")


def user_message(
    text_or_message: str | Message, *, task_id: str | None = None, context_id: str | None = None
) -> Message:
    """A user Message from text (fresh ``messageId``), with ``task_id``/``context_id`` set
    when given; a Message is kept, except for those two fields when they are given."""
    if isinstance(text_or_message, Message):
        changes: dict[str, str] = {}
        if task_id is not None:
            changes["task_id"] = task_id
        if context_id is not None:
            changes["context_id"] = context_id
        return msgspec.structs.replace(text_or_message, **changes) if changes else text_or_message
    return Message(
        message_id=uuid4().hex,
        role=Role.USER,
        parts=(Part(text=text_or_message),),
        task_id=task_id or "",
        context_id=context_id or "",
    )


class InProcessClient:
    """A client bound to one supervisor and one caller identity.

    Args:
        supervisor: The supervisor to talk to (it must be running).
        caller: The principal to act as (None: anonymous); it owns the tasks it creates.
        extensions: Extension URIs to request on every call (``A2A-Extensions``).
    """

    __slots__ = ("caller", "extensions", "supervisor")

    def __init__(
        self,
        supervisor: Supervisor,
        *,
        caller: str | None = None,
        extensions: frozenset[str] = frozenset(),
    ) -> None:
        self.supervisor = supervisor
        self.caller = caller
        self.extensions = extensions

    @staticmethod
    def _request(
        text_or_message: str | Message,
        task_id: str | None,
        context_id: str | None,
        return_immediately: bool,
        history_length: int | None,
        metadata: dict[str, Any] | None,
    ) -> SendMessageRequest:
        config = None
        if return_immediately or history_length is not None:
            config = SendMessageConfiguration(
                return_immediately=return_immediately, history_length=history_length
            )
        return SendMessageRequest(
            message=user_message(text_or_message, task_id=task_id, context_id=context_id),
            configuration=config,
            metadata=metadata,
        )

    async def send_message(
        self,
        text_or_message: str | Message,
        *,
        task_id: str | None = None,
        context_id: str | None = None,
        return_immediately: bool = False,
        history_length: int | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Task | Message:
        """SendMessage (see :meth:`Supervisor.send_message`, which lists the errors)."""
        request = self._request(
            text_or_message, task_id, context_id, return_immediately, history_length, metadata
        )
        return await self.supervisor.send_message(
            request, caller=self.caller, extensions=self.extensions
        )

    def stream(
        self,
        text_or_message: str | Message,
        *,
        task_id: str | None = None,
        context_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> AbstractAsyncContextManager[Subscription]:
        """SendStreamingMessage: ``async with client.stream("hi") as events: ...``.

        See :meth:`Supervisor.stream_message` for the events and errors.
        """
        request = self._request(text_or_message, task_id, context_id, False, None, metadata)
        return self.supervisor.stream_message(
            request, caller=self.caller, extensions=self.extensions
        )

    async def get_task(self, task_id: str, *, history_length: int | None = None) -> Task:
        """GetTask (see :meth:`Supervisor.get_task`)."""
        return await self.supervisor.get_task(
            task_id, history_length=history_length, caller=self.caller
        )

    async def list_tasks(self, request: ListTasksRequest | None = None) -> ListTasksResponse:
        """ListTasks (see :meth:`Supervisor.list_tasks`); all tasks of the caller if None."""
        return await self.supervisor.list_tasks(request or ListTasksRequest(), caller=self.caller)

    async def cancel_task(self, task_id: str, *, metadata: dict[str, Any] | None = None) -> Task:
        """CancelTask (see :meth:`Supervisor.cancel_task`)."""
        return await self.supervisor.cancel_task(task_id, caller=self.caller, metadata=metadata)

    def subscribe(self, task_id: str) -> AbstractAsyncContextManager[Subscription]:
        """SubscribeToTask: ``async with client.subscribe(task_id) as events: ...``."""
        return self.supervisor.subscribe(task_id, caller=self.caller)
