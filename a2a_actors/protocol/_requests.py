"""Request and response objects of the eleven A2A 1.0 methods.

Every request carries an optional ``tenant``. Range rules that the proto states in comments
(``historyLength >= 0``, ``pageSize`` in 1..100) are expressed as msgspec constraints, so a
violation is a validation error with the field path, which the JSON-RPC layer reports as
-32602. Nothing in this module performs I/O.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec.structs import force_setattr

from a2a_actors.protocol._models import (
    JSONObject,
    Message,
    Task,
    TaskState,
    Timestamp,
    WireStruct,
    _as_utc,
)

__all__ = (
    "AuthenticationInfo",
    "CancelTaskRequest",
    "DeleteTaskPushNotificationConfigRequest",
    "GetExtendedAgentCardRequest",
    "GetTaskPushNotificationConfigRequest",
    "GetTaskRequest",
    "HistoryLength",
    "ListTaskPushNotificationConfigsRequest",
    "ListTaskPushNotificationConfigsResponse",
    "ListTasksRequest",
    "ListTasksResponse",
    "PageSize",
    "SendMessageConfiguration",
    "SendMessageRequest",
    "SendMessageResponse",
    "SubscribeToTaskRequest",
    "TaskPushNotificationConfig",
)

#: ``historyLength``: unset means the server default; 0 means no history.
HistoryLength = Annotated[int, msgspec.Meta(ge=0)]
#: ``pageSize``: 1..100 (server default 50).
PageSize = Annotated[int, msgspec.Meta(ge=1, le=100)]


class AuthenticationInfo(WireStruct, frozen=True):
    """How a push receiver authenticates the sender: ``Authorization: <scheme> <credentials>``."""

    scheme: str
    credentials: str = ""


class TaskPushNotificationConfig(WireStruct, frozen=True):
    """A webhook registered for one task (flat in 1.0)."""

    url: str
    id: str = ""
    task_id: str = ""
    token: str = ""
    authentication: AuthenticationInfo | None = None
    tenant: str = ""

    def __post_init__(self) -> None:
        if not self.url:
            raise ValueError("url is required")


class SendMessageConfiguration(WireStruct, frozen=True):
    """Options of SendMessage / SendStreamingMessage."""

    accepted_output_modes: tuple[str, ...] = ()
    task_push_notification_config: TaskPushNotificationConfig | None = None
    history_length: HistoryLength | None = None
    return_immediately: bool = False


class SendMessageRequest(WireStruct, frozen=True):
    """Params of SendMessage and SendStreamingMessage."""

    message: Message
    configuration: SendMessageConfiguration | None = None
    metadata: JSONObject | None = None
    tenant: str = ""


class SendMessageResponse(WireStruct, frozen=True):
    """Result of SendMessage: exactly one of ``task`` or ``message``."""

    task: Task | None = None
    message: Message | None = None

    def __post_init__(self) -> None:
        if (self.task is None) == (self.message is None):
            raise ValueError("SendMessageResponse must hold exactly one of task, message")

    @property
    def payload(self) -> Task | Message:
        """The member that is present."""
        if self.task is not None:
            return self.task
        assert self.message is not None
        return self.message


class GetTaskRequest(WireStruct, frozen=True):
    """Params of GetTask."""

    id: str
    history_length: HistoryLength | None = None
    tenant: str = ""


class ListTasksRequest(WireStruct, frozen=True):
    """Params of ListTasks. Every filter is optional."""

    context_id: str = ""
    status: TaskState | None = None
    page_size: PageSize | None = None
    page_token: str = ""
    history_length: HistoryLength | None = None
    status_timestamp_after: Timestamp | None = None
    include_artifacts: bool | None = None
    tenant: str = ""

    def __post_init__(self) -> None:
        _as_utc(self, "status_timestamp_after")
        if self.status is TaskState.UNSPECIFIED:
            # ProtoJSON's zero value: the filter is absent, as the gRPC binding reads it.
            force_setattr(self, "status", None)


class ListTasksResponse(WireStruct, frozen=True, omit_defaults=False):
    """Result of ListTasks. All four fields are REQUIRED, so none is omitted on output.

    On input each may be absent: plain ProtoJSON leaves out ``[]``, ``""`` and ``0``.
    """

    tasks: tuple[Task, ...] = ()
    next_page_token: str = ""
    page_size: int = 0
    total_size: int = 0


class CancelTaskRequest(WireStruct, frozen=True):
    """Params of CancelTask."""

    id: str
    metadata: JSONObject | None = None
    tenant: str = ""


class SubscribeToTaskRequest(WireStruct, frozen=True):
    """Params of SubscribeToTask."""

    id: str
    tenant: str = ""


class GetTaskPushNotificationConfigRequest(WireStruct, frozen=True):
    """Params of GetTaskPushNotificationConfig."""

    task_id: str
    id: str
    tenant: str = ""


class DeleteTaskPushNotificationConfigRequest(WireStruct, frozen=True):
    """Params of DeleteTaskPushNotificationConfig."""

    task_id: str
    id: str
    tenant: str = ""


class ListTaskPushNotificationConfigsRequest(WireStruct, frozen=True):
    """Params of ListTaskPushNotificationConfigs."""

    task_id: str
    page_size: Annotated[int, msgspec.Meta(ge=0)] = 0
    page_token: str = ""
    tenant: str = ""


class ListTaskPushNotificationConfigsResponse(WireStruct, frozen=True):
    """Result of ListTaskPushNotificationConfigs."""

    configs: tuple[TaskPushNotificationConfig, ...] = ()
    next_page_token: str = ""


class GetExtendedAgentCardRequest(WireStruct, frozen=True):
    """Params of GetExtendedAgentCard (only ``tenant``)."""

    tenant: str = ""
