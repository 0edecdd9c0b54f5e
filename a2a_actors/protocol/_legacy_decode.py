"""Reading A2A 0.3: 0.3 requests and responses as typed 1.0 objects (pure functions, no I/O).

Server side, :func:`decode_params_v0_3` turns a 0.3 envelope into the same
:class:`~a2a_actors.protocol._jsonrpc.Call` a 1.0 request gives (with the 1.0 method); client side,
:func:`decode_response_v0_3` reads a 0.3 answer (or one SSE ``data:``) into the 1.0 result
type.

0.3 input is rewritten as JSON builtins into the 1.0 shape and then converted by
:mod:`.codec`, so a validation error carries a field path, in 1.0 spelling. Shapes that
cannot be rewritten are left alone for the typed conversion to reject; ``null`` members
of 0.3 objects count as absent; the ``kind`` tags and a status update's ``final`` are
dropped. Lossy points, all as a2a-sdk has them: ``historyLength: 0`` means "all history"
in 0.3 and becomes unset; push authentication keeps the first of ``schemes``; a ``data``
part marked ``metadata.data_part_compat: true`` is unwrapped from its ``{"value": …}``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from a2a_actors.protocol import _requests as rq, codec
from a2a_actors.protocol._card import AgentCard
from a2a_actors.protocol._errors import (
    InternalError,
    InvalidParamsError,
    MethodNotFoundError,
    ParseError,
)
from a2a_actors.protocol._jsonrpc import METHODS, Call, Envelope, ErrorReply, error_from_wire
from a2a_actors.protocol._legacy_card import card_from_v0_3
from a2a_actors.protocol._legacy_names import V0_3_METHODS, state_to_v0_3
from a2a_actors.protocol._models import StreamResponse, Task, TaskState

__all__ = (
    "decode_params_v0_3",
    "decode_response_v0_3",
    "params_from_v0_3",
    "result_from_v0_3",
)

_STATES_IN = {state_to_v0_3(s): s.value for s in TaskState}
_ROLES_IN = {"user": "ROLE_USER", "agent": "ROLE_AGENT"}


# -- server side: requests -------------------------------------------------------------------


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
    """Phase two of :mod:`._jsonrpc` decoding for a 0.3 method: a 1.0 Call, or the error."""
    try:
        params = params_from_v0_3(envelope.method, codec.parse(envelope.params))
    except MethodNotFoundError as exc:
        return ErrorReply(envelope.id, exc)
    except msgspec.ValidationError as exc:
        message, field = codec.error_path(exc)
        return ErrorReply(envelope.id, InvalidParamsError(message, field=field or "params"))
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return ErrorReply(envelope.id, ParseError())
    return Call(envelope.id, METHODS[V0_3_METHODS[envelope.method]], params)


# -- client side: results --------------------------------------------------------------------


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
        obj = codec.parse(body)
    except msgspec.DecodeError as exc:
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
