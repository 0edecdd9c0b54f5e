"""The arguments of the client's A2A methods turned into A2A 1.0 wire values (pure, no I/O).

:class:`~a2a_actors.client._methods.A2AMethods` takes friendly arguments (a ``str`` for a message,
keyword options for SendMessage's configuration, a task state by name); this module turns them into
the protocol's Structs. Nothing here touches a transport: each function is a total mapping from
arguments to a value, or raises ``ValueError``.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from msgspec.structs import replace

from a2a_actors.protocol._models import JSONObject, Message, Part, Role, TaskState
from a2a_actors.protocol._requests import (
    SendMessageConfiguration,
    SendMessageRequest,
    TaskPushNotificationConfig,
)

__all__ = ("send_message_request", "task_state", "text_message")


def text_message(
    text: str,
    *,
    task_id: str = "",
    context_id: str = "",
    metadata: JSONObject | None = None,
) -> Message:
    """A user Message with one text part and a fresh ``messageId``."""
    return Message(
        message_id=uuid.uuid4().hex,
        role=Role.USER,
        parts=(Part(text=text),),
        task_id=task_id,
        context_id=context_id,
        metadata=metadata,
    )


def task_state(value: TaskState | str) -> TaskState:
    """``value`` as a TaskState: the state itself, its wire name or its short name.

    ``"TASK_STATE_WORKING"``, ``"working"`` and ``"WORKING"`` all give WORKING; so does
    ``"input-required"`` for INPUT_REQUIRED.

    Raises:
        ValueError: ``value`` names no task state.
    """
    if isinstance(value, TaskState):
        return value
    try:
        return TaskState(value)
    except ValueError:
        pass
    try:
        return TaskState[value.upper().replace("-", "_").removeprefix("TASK_STATE_")]
    except KeyError:
        raise ValueError(f"unknown task state {value!r}") from None


def send_message_request(
    message_or_request: str | Message | SendMessageRequest,
    *,
    tenant: str,
    task_id: str,
    context_id: str,
    return_immediately: bool,
    history_length: int | None,
    accepted_output_modes: Sequence[str],
    push_config: TaskPushNotificationConfig | None,
    metadata: JSONObject | None,
) -> SendMessageRequest:
    """The SendMessageRequest for one SendMessage / SendStreamingMessage call.

    A ``SendMessageRequest`` is returned as is, with ``tenant`` filled in when it has none
    (the options are ignored). A ``str`` becomes a :func:`text_message` with ``task_id`` and
    ``context_id``; a Message is sent as is. The configuration is omitted when every option
    has its default.
    """
    if isinstance(message_or_request, SendMessageRequest):
        if message_or_request.tenant or not tenant:
            return message_or_request
        return replace(message_or_request, tenant=tenant)
    message = message_or_request
    if isinstance(message, str):
        message = text_message(message, task_id=task_id, context_id=context_id)
    configuration = SendMessageConfiguration(
        accepted_output_modes=tuple(accepted_output_modes),
        task_push_notification_config=push_config,
        history_length=history_length,
        return_immediately=return_immediately,
    )
    return SendMessageRequest(
        message=message,
        configuration=configuration if configuration != SendMessageConfiguration() else None,
        metadata=metadata,
        tenant=tenant,
    )
