"""Translation between A2A 0.3 and A2A 1.0 JSON-RPC (pure functions, no I/O).

Theory of operation
-------------------
0.3 and 1.0 share JSON-RPC 2.0 but differ in method names (``message/send`` against
``SendMessage``), in the ``kind`` tag on every object, in lower-case kebab enum values
(``input-required``, ``user``), in parts (``{"kind":"file","file":{"bytes"|"uri",…}}``),
in push-config shapes and in cards (reference §8). Everything converts at the edge, so the
rest of the runtime only ever sees 1.0 Structs:

* server side, :func:`decode_params_v0_3` turns a 0.3 envelope into the same
  :class:`~.jsonrpc.Call` a 1.0 request gives (with the 1.0 method), and
  :func:`encode_result_v0_3` / :func:`encode_error_v0_3` write 1.0 results and errors in
  0.3 form (errors with ``"data": null``; codes 0.3 lacks become -32603, as in a2a-sdk);
* client side, :func:`encode_request_v0_3` writes a 1.0 request as 0.3 and
  :func:`decode_response_v0_3` reads a 0.3 answer (or one SSE ``data:``) into the 1.0
  result type.

0.3 input is rewritten as JSON builtins into the 1.0 shape and then converted by
:mod:`.codec`, so a validation error carries a field path, in 1.0 spelling. Shapes that
cannot be rewritten are left alone for the typed conversion to reject; ``null`` members
of 0.3 objects count as absent. Lossy points, all as a2a-sdk has them: ``historyLength: 0``
means "all history" in 0.3 and becomes unset; push authentication keeps the first of
``schemes``; a 1.0 ``data`` part that is not an object goes out as ``{"value": …}`` with
``metadata.data_part_compat: true`` (and comes back unwrapped); ``mediaType`` and
``filename`` of text and data parts, ``tenant`` and list pagination have no 0.3 form and
are dropped. A 0.3 status update's ``final`` is true for terminal states unless the caller
says otherwise. ``ListTasks`` has no 0.3 method.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import msgspec

from . import codec, requests as rq
from .card import AgentCard
from .errors import (
    A2AError,
    InternalError,
    InvalidParamsError,
    MethodNotFoundError,
    ParseError,
    UnsupportedOperationError,
)
from .jsonrpc import METHODS, Call, Envelope, ErrorReply, RequestId, error_from_wire
from .legacy_card import card_from_v0_3, dual_version_card
from .models import (
    Artifact,
    Message,
    Part,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent as ArtifactUpdate,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent as StatusUpdate,
)
from .state import TERMINAL_STATES

__all__ = (
    "V0_3_METHODS",
    "V1_0_METHODS",
    "decode_params_v0_3",
    "decode_response_v0_3",
    "encode_error_v0_3",
    "encode_request_v0_3",
    "encode_result_v0_3",
    "error_to_v0_3",
    "is_v0_3_method",
    "method_to_v0_3",
    "method_to_v1_0",
    "params_from_v0_3",
    "params_to_v0_3",
    "result_from_v0_3",
    "result_to_v0_3",
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

#: The JSON-RPC error codes a 0.3 peer knows.
_V0_3_CODES = frozenset({-32700, -32600, -32601, -32602, -32603, *range(-32007, -32000)})


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


_STATES_IN = {state_to_v0_3(s): s.value for s in TaskState}
_ROLES_IN = {"user": "ROLE_USER", "agent": "ROLE_AGENT"}


# -- server side -----------------------------------------------------------------------------


def params_from_v0_3(method: str, params: Any) -> object:
    """The typed 1.0 request for the params of 0.3 ``method`` (JSON builtins).

    Raises:
        MethodNotFoundError: ``method`` is not a 0.3 method.
        msgspec.ValidationError: The params do not fit (the message names the path).
    """
    name = V0_3_METHODS.get(method)
    if name is None:
        raise MethodNotFoundError(f"Method not found: {method!r}")
    spec = METHODS[name]
    return codec.convert(_params_in(name, {} if params is None else params), spec.params)


def decode_params_v0_3(envelope: Envelope) -> Call | ErrorReply:
    """Phase two of :mod:`.jsonrpc` decoding for a 0.3 method: a 1.0 Call, or the error."""
    try:
        params = params_from_v0_3(envelope.method, msgspec.json.decode(envelope.params))
    except MethodNotFoundError as exc:
        return ErrorReply(envelope.id, exc)
    except msgspec.ValidationError as exc:
        message, field = codec.error_path(exc)
        return ErrorReply(envelope.id, InvalidParamsError(message, field=field or "params"))
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return ErrorReply(envelope.id, ParseError())
    return Call(envelope.id, METHODS[V0_3_METHODS[envelope.method]], params)


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


# -- client side -----------------------------------------------------------------------------


def params_to_v0_3(params: object) -> Any:
    """The 0.3 params (JSON builtins) of a typed 1.0 request; ``None`` when 0.3 has none.

    A 0.3 server reads ``historyLength: 0`` as "all history": trim the result with
    :func:`~.state.apply_history_length` when asking for none.

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


def result_from_v0_3(method: str, result: Any) -> object:
    """The typed 1.0 result of 1.0 ``method`` from a 0.3 result (JSON builtins).

    Raises:
        KeyError: ``method`` is not a 1.0 method.
        msgspec.ValidationError: The result does not fit (the message names the path).
    """
    spec = METHODS[method]
    if spec.result is None:
        return None
    if spec.result is AgentCard:
        return card_from_v0_3(result)
    return codec.convert(_RESULTS_IN[spec.result](result), spec.result)


def decode_response_v0_3(body: bytes | str, method: str) -> object:
    """Decode a 0.3 JSON-RPC response (or one SSE ``data:``) to 1.0 ``method``'s result.

    Raises:
        A2AError: The peer answered with an error (``remote=True``, code and message
            kept), or the response is malformed (:class:`InternalError`, not remote).
    """
    try:
        obj = msgspec.json.decode(body.encode() if isinstance(body, str) else body)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise InternalError(f"malformed JSON-RPC response: {exc}") from None
    if not isinstance(obj, dict):
        raise InternalError("JSON-RPC response must be an object")
    if (err := obj.get("error")) is not None:
        code = err.get("code") if isinstance(err, dict) else None
        if not isinstance(code, int) or isinstance(code, bool):
            raise InternalError("malformed JSON-RPC error object")
        raise error_from_wire(code, str(err.get("message", "")), err.get("data"))
    if "result" not in obj:
        raise InternalError("JSON-RPC response has neither result nor error")
    try:
        return result_from_v0_3(method, obj["result"])
    except msgspec.ValidationError as exc:
        raise InternalError(f"invalid result from peer: {exc}") from None


# -- 1.0 → 0.3 objects -----------------------------------------------------------------------


def _json(obj: object) -> Any:
    """``obj`` as plain JSON builtins (lists, not tuples), exactly as it goes on the wire."""
    return msgspec.json.decode(codec.encode(obj))


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


# -- 0.3 → 1.0 builtins ----------------------------------------------------------------------


def _present(obj: dict[str, Any], drop: tuple[str, ...] = ("kind",)) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if v is not None and k not in drop}


def _invalid(message: str, path: str) -> msgspec.ValidationError:
    return msgspec.ValidationError(f"{message} - at `${path}`")


def _part_in(part: Any, path: str) -> Any:
    if not isinstance(part, dict):
        return part
    src = _present(part)
    out: dict[str, Any] = {k: src[k] for k in ("metadata", "text") if k in src}
    kind = part.get("kind")
    if kind == "file":
        file = src.get("file")
        if not isinstance(file, dict):
            raise _invalid("Expected `object`", f"{path}.file")
        names = {"bytes": "raw", "uri": "url", "mimeType": "mediaType", "name": "filename"}
        out.update({new: file[old] for old, new in names.items() if file.get(old) is not None})
    elif kind == "data":
        data, meta = src.get("data"), src.get("metadata")
        if isinstance(meta, dict) and meta.get("data_part_compat") is True:
            data = data.get("value") if isinstance(data, dict) else data
            out.pop("metadata")
            if meta := {k: v for k, v in meta.items() if k != "data_part_compat"}:
                out["metadata"] = meta
        if "data" in src:  # absent or null: left for the Part check to reject
            out["data"] = data
    elif kind != "text":
        raise _invalid(f"Unknown part kind {kind!r}", f"{path}.kind")
    return out


def _message_in(message: Any, path: str) -> Any:
    if not isinstance(message, dict):
        return message
    out = _present(message)
    if isinstance(role := out.get("role"), str):
        out["role"] = _ROLES_IN.get(role, role)
    return _each(out, "parts", _part_in, path)


def _status_in(status: Any, path: str) -> Any:
    if not isinstance(status, dict):
        return status
    out = _present(status)
    if isinstance(state := out.get("state"), str):
        out["state"] = _STATES_IN.get(state, state)
    if "message" in out:
        out["message"] = _message_in(out["message"], f"{path}.message")
    return out


def _artifact_in(artifact: Any, path: str) -> Any:
    return (
        _each(_present(artifact), "parts", _part_in, path)
        if isinstance(artifact, dict)
        else artifact
    )


def _task_in(task: Any, path: str = "") -> Any:
    if not isinstance(task, dict):
        return task
    out = _present(task)
    if "status" in out:
        out["status"] = _status_in(out["status"], f"{path}.status")
    return _each(_each(out, "history", _message_in, path), "artifacts", _artifact_in, path)


def _each(obj: dict[str, Any], key: str, fn: Callable[[Any, str], Any], path: str) -> Any:
    if isinstance(items := obj.get(key), list):
        obj[key] = [fn(x, f"{path}.{key}[{i}]") for i, x in enumerate(items)]
    return obj


def _event_in(event: Any) -> Any:
    """One 0.3 result or stream item (by its ``kind``) as a 1.0 StreamResponse."""
    if not isinstance(event, dict):
        return event
    kind = event.get("kind")
    out = _present(event, drop=("kind", "final"))
    if kind == "task":
        return {"task": _task_in(out)}
    if kind == "message":
        return {"message": _message_in(out, "")}
    if kind == "status-update":
        return {"statusUpdate": out | {"status": _status_in(out.get("status"), ".status")}}
    if kind == "artifact-update":
        return {
            "artifactUpdate": out | {"artifact": _artifact_in(out.get("artifact"), ".artifact")}
        }
    raise _invalid(f"Unknown result kind {kind!r}", ".kind")


def _push_config_in(config: Any) -> Any:
    if not isinstance(config, dict):
        return config
    out = _present(config)
    if isinstance(auth := out.get("authentication"), dict):
        schemes = auth.get("schemes")
        scheme = schemes[0] if isinstance(schemes, list) and schemes else ""
        out["authentication"] = _present({"scheme": scheme, "credentials": auth.get("credentials")})
    return out


def _push_in(obj: Any) -> Any:
    """A 0.3 ``{taskId, pushNotificationConfig:{…}}`` as a flat 1.0 config."""
    if not isinstance(obj, dict):
        return obj
    out = _push_config_in(obj.get("pushNotificationConfig"))
    return _present({**(out if isinstance(out, dict) else {}), "taskId": obj.get("taskId")})


def _params_in(name: str, params: Any) -> Any:
    """0.3 params of the method that 1.0 calls ``name``, rewritten in the 1.0 shape."""
    if not isinstance(params, dict) or name == "GetExtendedAgentCard":
        return params if not isinstance(params, dict) else {}
    src = _present(params)
    if _is_zero(src.get("historyLength")):  # 0.3: 0 means all history
        del src["historyLength"]
    if name in ("SendMessage", "SendStreamingMessage"):
        if "message" in src:
            src["message"] = _message_in(src["message"], ".message")
        if isinstance(config := src.get("configuration"), dict):
            src["configuration"] = _configuration_in(_present(config))
        return src
    if name == "CreateTaskPushNotificationConfig":
        return _push_in(src)
    if name not in ("GetTask", "CancelTask", "SubscribeToTask"):  # the push-config ids
        return _config_ids_in(name, src)
    return src


def _configuration_in(src: dict[str, Any]) -> dict[str, Any]:
    cfg: dict[str, Any] = {
        k: v for k, v in src.items() if k in ("acceptedOutputModes", "historyLength")
    }
    if _is_zero(cfg.get("historyLength")):
        del cfg["historyLength"]
    if "blocking" in src:
        if not isinstance(src["blocking"], bool):
            raise _invalid("Expected `bool`", ".configuration.blocking")
        cfg["returnImmediately"] = not src["blocking"]
    if "pushNotificationConfig" in src:
        cfg["taskPushNotificationConfig"] = _push_config_in(src["pushNotificationConfig"])
    return cfg


def _config_ids_in(name: str, src: dict[str, Any]) -> dict[str, Any]:
    """0.3 ``{id: <taskId>, pushNotificationConfigId}`` as 1.0 ``{taskId, id}``.

    Without a config id, ``get`` names the task's default config, whose id is the task id
    (how 0.3 servers and a2a-sdk store a config created without one).
    """
    if "id" not in src:
        raise _invalid("Object missing required field `id`", "")
    out = {"taskId": src["id"]}
    config_id = src.get("pushNotificationConfigId")
    if name == "GetTaskPushNotificationConfig":
        out["id"] = src["id"] if config_id is None else config_id
    elif name == "DeleteTaskPushNotificationConfig":
        if config_id is None:
            raise _invalid("Object missing required field `pushNotificationConfigId`", "")
        out["id"] = config_id
    return out


def _is_zero(value: Any) -> bool:
    return type(value) is int and value == 0


def _configs_in(result: Any) -> Any:
    return {"configs": [_push_in(c) for c in result]} if isinstance(result, list) else result


_RESULTS_IN: dict[type[Any], Callable[[Any], Any]] = {
    rq.SendMessageResponse: _event_in,  # {"task"} or {"message"}: the same two members
    StreamResponse: _event_in,
    Task: _task_in,
    rq.TaskPushNotificationConfig: _push_in,
    rq.ListTaskPushNotificationConfigsResponse: _configs_in,
}
