"""Checking every answer: what a reply says, or why it counts as an error.

Replies are decoded with small msgspec Structs that read only what the checks need (the
kind of result, the task id and state, an error), so checking costs a few microseconds.
Each check returns a :class:`Reply` or a :class:`Failure` whose ``kind`` is one of:

``http-NNN``
    an HTTP status other than 2xx (on HTTP+JSON, the A2A error it carries is the sample);
``jsonrpc-error``
    a JSON-RPC error response;
``stream-error``
    an error event inside a stream;
``early-end``
    a stream that ended before a final event (a terminal or interrupted state, or a Message);
``wrong-state``
    a valid answer in a state the workload does not accept (its sample says which);
``malformed``
    a body that is not the JSON the binding promises.

The generator adds ``connect``, ``closed`` (the connection closed mid-response) and
``timeout`` (see :mod:`a2a_actors.loadtest._engine`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

__all__ = (
    "FINAL_STATES",
    "Failure",
    "Reply",
    "check_send",
    "check_stream",
    "check_task",
)

COMPLETED = "TASK_STATE_COMPLETED"
#: States after which a task moves only when the client acts (or never).
FINAL_STATES = frozenset(
    {
        "TASK_STATE_COMPLETED",
        "TASK_STATE_FAILED",
        "TASK_STATE_CANCELED",
        "TASK_STATE_REJECTED",
        "TASK_STATE_INPUT_REQUIRED",
        "TASK_STATE_AUTH_REQUIRED",
    }
)
MESSAGE = "message"  #: the ``state`` of a Reply that is a Message


@dataclass(frozen=True, slots=True)
class Failure:
    """Why an answer counts as an error: a kind (see the module docstring) and a sample."""

    kind: str
    detail: str


@dataclass(frozen=True, slots=True)
class Reply:
    """What a valid answer says: a task's id and state, or ``state == "message"``."""

    task_id: str
    state: str


class _Status(msgspec.Struct, rename="camel"):
    state: str = ""


class _Task(msgspec.Struct, rename="camel"):
    id: str = ""
    status: _Status | None = None


class _Message(msgspec.Struct, rename="camel"):
    message_id: str = ""


class _StatusUpdate(msgspec.Struct, rename="camel"):
    task_id: str = ""
    status: _Status | None = None


class _Event(msgspec.Struct, rename="camel"):
    """A SendMessageResponse or a StreamResponse (the latter has two more members)."""

    task: _Task | None = None
    message: _Message | None = None
    status_update: _StatusUpdate | None = None
    artifact_update: Any = None


class _RpcError(msgspec.Struct):
    code: Any = None
    message: Any = None


class _RpcEvent(msgspec.Struct):
    jsonrpc: Any = None
    result: _Event | None = None
    error: _RpcError | None = None


class _RpcTask(msgspec.Struct):
    jsonrpc: Any = None
    result: _Task | None = None
    error: _RpcError | None = None


class _RestError(msgspec.Struct):
    error: Any = None


_event = msgspec.json.Decoder(_Event)
_rpc_event = msgspec.json.Decoder(_RpcEvent)
_task = msgspec.json.Decoder(_Task)
_rpc_task = msgspec.json.Decoder(_RpcTask)
_rest_error = msgspec.json.Decoder(_RestError)


def _sample(body: bytes) -> str:
    return repr(body[:200])


def _http_failure(status: int, body: bytes) -> Failure:
    return Failure(f"http-{status}", _sample(body))


def _rpc_failure(error: _RpcError) -> Failure:
    return Failure("jsonrpc-error", f"{error.code}: {error.message}")


def _decode(decoder: msgspec.json.Decoder[Any], body: bytes) -> Any:
    try:
        return decoder.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        return Failure("malformed", f"{exc}: {_sample(body)}")


def _of_event(event: _Event, body: bytes) -> Reply | Failure:
    if event.message is not None:
        return Reply("", MESSAGE)
    if event.task is not None and event.task.status is not None and event.task.id:
        return Reply(event.task.id, event.task.status.state)
    update = event.status_update
    if update is not None and update.status is not None:
        return Reply(update.task_id, update.status.state)
    if event.artifact_update is not None:
        return Reply("", "")
    return Failure("malformed", f"neither a task nor a message: {_sample(body)}")


def check_send(binding: str, status: int, body: bytes) -> Reply | Failure:
    """A SendMessage answer: its task (id and state) or message."""
    if binding == "rest":
        if not 200 <= status < 300:
            return _http_failure(status, body)
        decoded = _decode(_event, body)
        return decoded if isinstance(decoded, Failure) else _of_event(decoded, body)
    if not 200 <= status < 300:
        return _http_failure(status, body)
    rpc = _decode(_rpc_event, body)
    if isinstance(rpc, Failure):
        return rpc
    if rpc.error is not None:
        return _rpc_failure(rpc.error)
    if rpc.jsonrpc != "2.0" or rpc.result is None:
        return Failure("malformed", f"not a JSON-RPC 2.0 result: {_sample(body)}")
    return _of_event(rpc.result, body)


def check_task(binding: str, status: int, body: bytes) -> Reply | Failure:
    """A GetTask or CancelTask answer: the bare Task's id and state."""
    if not 200 <= status < 300:
        return _http_failure(status, body)
    if binding == "rest":
        task = _decode(_task, body)
    else:
        rpc = _decode(_rpc_task, body)
        if isinstance(rpc, Failure):
            return rpc
        if rpc.error is not None:
            return _rpc_failure(rpc.error)
        task = rpc.result
    if isinstance(task, Failure):
        return task
    if task is None or not task.id or task.status is None:
        return Failure("malformed", f"not a Task: {_sample(body)}")
    return Reply(task.id, task.status.state)


def _events(body: bytes) -> list[tuple[str, bytes]]:
    """The (event name, data) of every event of an SSE body."""
    events = []
    for block in body.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n\n"):
        name, data = "", []
        for line in block.split(b"\n"):
            field, _, value = line.partition(b":")
            value = value[1:] if value.startswith(b" ") else value
            if field == b"data":
                data.append(value)
            elif field == b"event":
                name = value.decode(errors="replace")
        if data:
            events.append((name, b"\n".join(data)))
    return events


def check_stream(binding: str, status: int, event_stream: bool, body: bytes) -> Reply | Failure:
    """A finished stream: the last state it reached, if that was final (else a Failure)."""
    if not event_stream:  # an error answered before the stream started, or not a stream
        answer = check_send(binding, status, body)
        if isinstance(answer, Failure):
            return answer
        return Failure("malformed", f"not an event stream: {_sample(body)}")
    if not 200 <= status < 300:
        return _http_failure(status, body)
    task_id, state = "", ""
    for name, data in _events(body):
        if name == "error":
            return Failure("stream-error", _sample(data))
        if binding == "rest":
            if data.lstrip().startswith(b'{"error"'):
                return Failure("stream-error", _sample(data))
            decoded = _decode(_event, data)
        else:
            rpc = _decode(_rpc_event, data)
            if isinstance(rpc, Failure):
                return rpc
            if rpc.error is not None:
                return Failure("stream-error", f"{rpc.error.code}: {rpc.error.message}")
            decoded = rpc.result if rpc.result is not None else Failure("malformed", _sample(data))
        if isinstance(decoded, Failure):
            return decoded
        reply = _of_event(decoded, data)
        if isinstance(reply, Failure):
            return reply
        if reply.state == MESSAGE:
            return reply
        task_id = reply.task_id or task_id
        state = reply.state or state
    if state not in FINAL_STATES:
        return Failure("early-end", f"the stream ended at {state or 'no event'}")
    return Reply(task_id, state)
