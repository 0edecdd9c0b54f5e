"""Writing A2A 0.3: 1.0 results, errors and requests in 0.3 form (pure functions, no I/O).

Server side, :func:`encode_result_v0_3` / :func:`encode_error_v0_3` answer a 0.3 caller;
client side, :func:`encode_request_v0_3` asks a 0.3 server. Every object gets its 0.3
``kind`` tag, lower-case kebab enum values and 0.3 part shapes
(``{"kind":"file","file":{"bytes"|"uri",…}}``). Errors go out as
``{"code","message","data":null}``, and codes 0.3 lacks become -32603 (as in a2a-sdk).

Lossy points, all as a2a-sdk has them: a ``data`` part that is not an object goes out as ``{"value":
…}`` with ``metadata.data_part_compat: true`` (:mod:`a2a_actors.protocol._legacy_decode` unwraps
it); push authentication goes out as ``schemes: [scheme]``; ``mediaType`` and ``filename`` of text
and data parts, ``tenant`` and list pagination have no 0.3 form and are dropped. A status update's
``final`` is true for terminal states unless the caller says otherwise.
"""

from __future__ import annotations

import base64
from typing import Any

from a2a_actors.protocol import _requests as rq, codec
from a2a_actors.protocol._card import AgentCard
from a2a_actors.protocol._errors import A2AError, InternalError, UnsupportedOperationError
from a2a_actors.protocol._jsonrpc import RequestId
from a2a_actors.protocol._legacy_card import dual_version_card
from a2a_actors.protocol._legacy_names import V1_0_METHODS, state_to_v0_3
from a2a_actors.protocol._models import (
    Artifact,
    Message,
    Part,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent as ArtifactUpdate,
    TaskStatus,
    TaskStatusUpdateEvent as StatusUpdate,
)
from a2a_actors.protocol._state import TERMINAL_STATES

__all__ = (
    "encode_error_v0_3",
    "encode_request_v0_3",
    "encode_result_v0_3",
    "error_to_v0_3",
    "params_to_v0_3",
    "result_to_v0_3",
)

#: The JSON-RPC error codes a 0.3 peer knows.
_V0_3_CODES = frozenset({-32700, -32600, -32601, -32602, -32603, *range(-32007, -32000)})


# -- server side: results and errors ---------------------------------------------------------


def result_to_v0_3(result: object, *, final: bool | None = None) -> Any:
    """The 0.3 form (JSON builtins) of a 1.0 method result or stream item.

    Args:
        result: A SendMessageResponse, StreamResponse, Task, Message, status or artifact
            update, TaskPushNotificationConfig, ListTaskPushNotificationConfigsResponse,
            AgentCard (served as the dual-version card) or ``None``.
        final: The ``final`` flag of a status update; by default, whether its state is
            terminal. A server that ends the stream at an interrupted state passes True.

    Raises:
        TypeError: ``result`` has no 0.3 form (e.g. a ListTasksResponse).
    """
    if isinstance(result, rq.SendMessageResponse | StreamResponse):
        result = result.payload
    if isinstance(result, Task):
        return _task_out(result)
    if isinstance(result, Message):
        return _message_out(result)
    if isinstance(result, StatusUpdate):
        out = _json(result) | {"kind": "status-update", "status": _status_out(result.status)}
        return out | {"final": result.status.state in TERMINAL_STATES if final is None else final}
    if isinstance(result, ArtifactUpdate):
        flags = {"append": result.append, "lastChunk": result.last_chunk}
        artifact = _artifact_out(result.artifact)
        return _json(result) | {"kind": "artifact-update", "artifact": artifact} | flags
    if isinstance(result, rq.TaskPushNotificationConfig):
        return {"taskId": result.task_id, "pushNotificationConfig": _push_config_out(result)}
    if isinstance(result, rq.ListTaskPushNotificationConfigsResponse):
        return [result_to_v0_3(c) for c in result.configs]
    if isinstance(result, AgentCard):
        return dual_version_card(result)
    if result is None:
        return None
    raise TypeError(f"{type(result).__name__} has no A2A 0.3 form")


def encode_result_v0_3(
    request_id: RequestId, result: object, *, final: bool | None = None
) -> bytes:
    """``{"jsonrpc":"2.0","id":…,"result":…}`` with the 0.3 form of ``result``."""
    return codec.encode(
        {"jsonrpc": "2.0", "id": request_id, "result": result_to_v0_3(result, final=final)}
    )


def error_to_v0_3(error: A2AError) -> dict[str, Any]:
    """The 0.3 error object: ``{"code","message","data":null}`` (unknown codes → -32603)."""
    code = error.code if error.code in _V0_3_CODES else InternalError.spec.code
    return {"code": code, "message": error.message, "data": None}


def encode_error_v0_3(request_id: RequestId, error: A2AError) -> bytes:
    """``{"jsonrpc":"2.0","id":…,"error":{"code","message","data":null}}``."""
    return codec.encode({"jsonrpc": "2.0", "id": request_id, "error": error_to_v0_3(error)})


# -- client side: requests -------------------------------------------------------------------


def params_to_v0_3(params: object) -> Any:
    """The 0.3 params (JSON builtins) of a typed 1.0 request; ``None`` when 0.3 has none.

    A 0.3 server reads ``historyLength: 0`` as "all history": trim the result with
    :func:`~a2a_actors.protocol._state.apply_history_length` when asking for none.

    Raises:
        UnsupportedOperationError: The request has no 0.3 equivalent (ListTasks).
    """
    if isinstance(params, rq.SendMessageRequest):
        out: dict[str, Any] = {"message": _message_out(params.message)}
        if (cfg := params.configuration) is not None:
            keep = ("acceptedOutputModes", "historyLength")
            config = {k: v for k, v in _json(cfg).items() if k in keep}
            config["blocking"] = not cfg.return_immediately
            if (push := cfg.task_push_notification_config) is not None:
                config["pushNotificationConfig"] = _push_config_out(push)
            out["configuration"] = config
        if params.metadata is not None:
            out["metadata"] = _json(params.metadata)
        return out
    if isinstance(params, rq.GetTaskRequest | rq.CancelTaskRequest | rq.SubscribeToTaskRequest):
        return {k: v for k, v in _json(params).items() if k != "tenant"}
    if isinstance(params, rq.TaskPushNotificationConfig):
        return result_to_v0_3(params)
    if isinstance(
        params, rq.GetTaskPushNotificationConfigRequest | rq.DeleteTaskPushNotificationConfigRequest
    ):
        return {"id": params.task_id, "pushNotificationConfigId": params.id}
    if isinstance(params, rq.ListTaskPushNotificationConfigsRequest):
        return {"id": params.task_id}
    if isinstance(params, rq.GetExtendedAgentCardRequest):
        return None
    raise UnsupportedOperationError(f"{type(params).__name__} has no A2A 0.3 equivalent")


def encode_request_v0_3(request_id: RequestId, method: str, params: object) -> bytes:
    """A 0.3 JSON-RPC request for 1.0 ``method`` with typed 1.0 ``params``.

    Raises:
        UnsupportedOperationError: ``method`` has no 0.3 equivalent.
    """
    legacy = V1_0_METHODS.get(method)
    if legacy is None:
        raise UnsupportedOperationError(f"{method} has no A2A 0.3 equivalent")
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": legacy}
    if (converted := params_to_v0_3(params)) is not None:
        body["params"] = converted
    return codec.encode(body)


# -- 1.0 → 0.3 objects -----------------------------------------------------------------------


def _json(obj: object) -> Any:
    """``obj`` as plain JSON builtins (lists, not tuples), exactly as it goes on the wire."""
    return codec.parse(codec.encode(obj))


def _part_out(part: Part) -> dict[str, Any]:
    metadata = _json(part.metadata)
    if part.text is not None:
        out: dict[str, Any] = {"kind": "text", "text": part.text}
    elif part.raw is not None or part.url is not None:
        file: dict[str, Any] = (
            {"bytes": base64.b64encode(part.raw).decode()}
            if part.raw is not None
            else {"uri": part.url}
        )
        if part.media_type:
            file["mimeType"] = part.media_type
        if part.filename:
            file["name"] = part.filename
        out = {"kind": "file", "file": file}
    else:
        data = _json(part.data)
        if not isinstance(data, dict):  # 0.3 data must be an object
            data = {"value": data}
            metadata = {**(metadata or {}), "data_part_compat": True}
        out = {"kind": "data", "data": data}
    if metadata is not None:
        out["metadata"] = metadata
    return out


def _message_out(message: Message) -> dict[str, Any]:
    role = message.role.value.removeprefix("ROLE_").lower()
    parts = [_part_out(p) for p in message.parts]
    return {"kind": "message", **_json(message), "role": role, "parts": parts}


def _status_out(status: TaskStatus) -> dict[str, Any]:
    out: dict[str, Any] = _json(status) | {"state": state_to_v0_3(status.state)}
    if status.message is not None:
        out["message"] = _message_out(status.message)
    return out


def _artifact_out(artifact: Artifact) -> dict[str, Any]:
    out: dict[str, Any] = _json(artifact)
    return out | {"parts": [_part_out(p) for p in artifact.parts]}


def _task_out(task: Task) -> dict[str, Any]:
    status = _status_out(task.status)
    out: dict[str, Any] = {"kind": "task", "id": task.id, "contextId": task.context_id}
    out["status"] = status
    if task.artifacts:
        out["artifacts"] = [_artifact_out(a) for a in task.artifacts]
    if task.history:
        out["history"] = [_message_out(m) for m in task.history]
    if task.metadata is not None:
        out["metadata"] = _json(task.metadata)
    return out


def _push_config_out(config: rq.TaskPushNotificationConfig) -> dict[str, Any]:
    out: dict[str, Any] = {"url": config.url}
    if config.id:
        out["id"] = config.id
    if config.token:
        out["token"] = config.token
    if (auth := config.authentication) is not None:
        out["authentication"] = {"schemes": [auth.scheme] if auth.scheme else []}
        if auth.credentials:
            out["authentication"]["credentials"] = auth.credentials
    return out
