"""The A2A 0.3 spellings of 1.0 names: JSON-RPC methods and task states (pure, no I/O).

0.3 names methods with slashes (``message/send``) where 1.0 uses PascalCase
(``SendMessage``), and spells enum values in lower-case kebab (``input-required``) where
1.0 uses ``TASK_STATE_INPUT_REQUIRED``. These tables are the one place both directions of
:mod:`a2a_actors.protocol._legacy_v0_3` read those spellings from. ``ListTasks`` has no 0.3 method.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from a2a_actors.protocol._models import TaskState

__all__ = (
    "V0_3_METHODS",
    "V1_0_METHODS",
    "is_v0_3_method",
    "method_to_v0_3",
    "method_to_v1_0",
    "state_to_v0_3",
)

#: 0.3 method name → 1.0 method name.
V0_3_METHODS: Mapping[str, str] = MappingProxyType(
    {
        "message/send": "SendMessage",
        "message/stream": "SendStreamingMessage",
        "tasks/get": "GetTask",
        "tasks/cancel": "CancelTask",
        "tasks/resubscribe": "SubscribeToTask",
        "tasks/pushNotificationConfig/set": "CreateTaskPushNotificationConfig",
        "tasks/pushNotificationConfig/get": "GetTaskPushNotificationConfig",
        "tasks/pushNotificationConfig/list": "ListTaskPushNotificationConfigs",
        "tasks/pushNotificationConfig/delete": "DeleteTaskPushNotificationConfig",
        "agent/getAuthenticatedExtendedCard": "GetExtendedAgentCard",
    }
)
#: 1.0 method name → 0.3 method name (``ListTasks`` has none).
V1_0_METHODS: Mapping[str, str] = MappingProxyType({v: k for k, v in V0_3_METHODS.items()})


def is_v0_3_method(name: str) -> bool:
    """Whether ``name`` is a 0.3 method (the slash-separated spelling)."""
    return name in V0_3_METHODS


def method_to_v1_0(name: str) -> str | None:
    """The 1.0 name of a 0.3 method, or ``None`` when ``name`` is not one."""
    return V0_3_METHODS.get(name)


def method_to_v0_3(name: str) -> str | None:
    """The 0.3 name of a 1.0 method, or ``None`` when it has none (``ListTasks``)."""
    return V1_0_METHODS.get(name)


def state_to_v0_3(state: TaskState) -> str:
    """``TASK_STATE_INPUT_REQUIRED`` → ``input-required``; UNSPECIFIED → ``unknown``."""
    if state is TaskState.UNSPECIFIED:
        return "unknown"
    return str(state.value).removeprefix("TASK_STATE_").lower().replace("_", "-")
