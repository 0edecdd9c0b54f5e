"""The request bytes of a benchmark: built once per endpoint, stamped per request.

:class:`RequestBuilder` encodes each A2A call the workloads make (SendMessage,
SendStreamingMessage, GetTask, CancelTask) once, with the protocol's own encoder
(:mod:`a2a_actors.protocol.codec`, :func:`a2a_actors.protocol._jsonrpc.encode_request`),
around placeholder ids. A request is then the template with the placeholders replaced
and the ``Content-Length`` computed: no JSON encoding on the hot path.

Every SendMessage carries a fresh ``messageId`` (a run prefix, the worker's number and a
counter, and the turn), so a server that de-duplicates by message id sees distinct messages. Every
request carries ``A2A-Version: 1.0`` and the endpoint's extra headers (credentials,
``--header``); JSON-RPC requests go to the interface URL, HTTP+JSON ones to the routes of
the binding (prefixed with ``/{tenant}`` when the interface has a tenant).
"""

from __future__ import annotations

import json
from urllib.parse import quote, urlencode

import msgspec

from a2a_actors.loadtest._target import Endpoint, UsageError
from a2a_actors.protocol import _jsonrpc as jsonrpc, codec
from a2a_actors.protocol._models import Message, Part, Role
from a2a_actors.protocol._requests import (
    CancelTaskRequest,
    GetTaskRequest,
    SendMessageConfiguration,
    SendMessageRequest,
)

__all__ = ("RequestBuilder", "load_message")

_MID = "a2abench-message-id-0123456789ab"  # 32 characters, the width of every message id
_TASK = "a2abench-task-id"
_MID_B = _MID.encode()
_TASK_B = _TASK.encode()


def load_message(text: str | None, message_file: str | None) -> Message:
    """The user message of every request: ``--text``, or the Message JSON of a file.

    A file holds one A2A 1.0 Message in ProtoJSON; its ``messageId``, ``taskId`` and
    ``role`` are replaced per request.

    Raises:
        UsageError: The file cannot be read or is not a Message.
    """
    if message_file is None:
        return Message(message_id=_MID, role=Role.USER, parts=(Part(text=text or "hello"),))
    try:
        with open(message_file, "rb") as file:
            obj = json.loads(file.read())
        if not isinstance(obj, dict):
            raise ValueError("not a JSON object")
        obj.update(messageId=_MID, role="ROLE_USER")
        obj.pop("taskId", None)
        return codec.convert(obj, Message)
    except (OSError, ValueError, TypeError) as exc:
        raise UsageError(f"--message-file {message_file}: not an A2A Message: {exc}") from None


class RequestBuilder:
    """Request bytes for one endpoint and message (see the module docstring)."""

    def __init__(self, endpoint: Endpoint, message: Message, *, id_prefix: str) -> None:
        if len(id_prefix) != 12:
            raise ValueError("id_prefix must be 12 characters")
        self._endpoint = endpoint
        self._prefix = id_prefix
        self._rest = endpoint.binding == "rest"
        host = f"Host: {endpoint.host}:{endpoint.port}\r\n"
        extra = "".join(f"{name}: {value}\r\n" for name, value in endpoint.headers)
        self._common = f"{host}A2A-Version: 1.0\r\n{extra}"
        self._query = "?" + urlencode(endpoint.query) if endpoint.query else ""
        base = endpoint.path
        if self._rest and endpoint.tenant:
            base = f"{base}/{quote(endpoint.tenant, safe='')}"
        self._base = base
        tenant = endpoint.tenant
        follow_up = msgspec.structs.replace(message, task_id=_TASK)
        self._send = self._body("SendMessage", SendMessageRequest(message, tenant=tenant))
        self._stream = self._body(
            "SendStreamingMessage", SendMessageRequest(message, tenant=tenant)
        )
        immediately = SendMessageConfiguration(return_immediately=True)
        self._submit = self._body(
            "SendMessage", SendMessageRequest(message, configuration=immediately, tenant=tenant)
        )
        self._answer = self._body("SendMessage", SendMessageRequest(follow_up, tenant=tenant))
        self._get = self._body("GetTask", GetTaskRequest(id=_TASK, tenant=tenant))
        self._cancel = self._body("CancelTask", CancelTaskRequest(id=_TASK, tenant=tenant))

    def _body(self, method: str, params: object) -> bytes:
        if self._rest:
            return codec.encode(params)
        return jsonrpc.encode_request(1, method, params)

    def _message_id(self, seq: int, turn: int = 0) -> bytes:
        return f"{self._prefix}{seq:018x}{turn:02x}".encode()

    def _post(self, path: str, body: bytes, *, stream: bool = False) -> bytes:
        accept = "text/event-stream" if stream else "application/json"
        head = (
            f"POST {path}{self._query} HTTP/1.1\r\n{self._common}"
            f"Content-Type: application/json\r\nAccept: {accept}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        return head.encode() + body

    def _rpc_path(self, rest_path: str) -> str:
        return self._base + rest_path if self._rest else self._endpoint.path

    def send(self, seq: int) -> bytes:
        """A blocking SendMessage of the message."""
        body = self._send.replace(_MID_B, self._message_id(seq))
        return self._post(self._rpc_path("/message:send"), body)

    def stream(self, seq: int) -> bytes:
        """A SendStreamingMessage of the message."""
        body = self._stream.replace(_MID_B, self._message_id(seq))
        return self._post(self._rpc_path("/message:stream"), body, stream=True)

    def submit(self, seq: int) -> bytes:
        """A SendMessage of the message with ``returnImmediately``."""
        body = self._submit.replace(_MID_B, self._message_id(seq))
        return self._post(self._rpc_path("/message:send"), body)

    def answer(self, seq: int, turn: int, task_id: str) -> bytes:
        """A blocking SendMessage of the message continuing task ``task_id`` (turn >= 1)."""
        body = self._answer.replace(_MID_B, self._message_id(seq, turn))
        body = body.replace(_TASK_B, _json_text(task_id))
        return self._post(self._rpc_path("/message:send"), body)

    def get_task(self, task_id: str) -> bytes:
        """A GetTask of ``task_id``."""
        if not self._rest:
            return self._post(self._endpoint.path, self._get.replace(_TASK_B, _json_text(task_id)))
        path = f"{self._base}/tasks/{quote(task_id, safe='')}{self._query}"
        return f"GET {path} HTTP/1.1\r\n{self._common}Accept: application/json\r\n\r\n".encode()

    def cancel_task(self, task_id: str) -> bytes:
        """A CancelTask of ``task_id``."""
        body = self._cancel.replace(_TASK_B, _json_text(task_id))
        return self._post(self._rpc_path(f"/tasks/{quote(task_id, safe='')}:cancel"), body)


def _json_text(value: str) -> bytes:
    """``value`` as it appears inside a JSON string."""
    return json.dumps(value)[1:-1].encode()
