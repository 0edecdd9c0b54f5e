"""JSON-RPC 2.0 framing: golden tables of exact bytes in and typed results or errors out.

In the manner of h11's ``test_io.py``: each row is (input bytes, expected outcome), and the
same rows drive the envelope phase, the params phase and the combined decoder. Encoding is
checked byte for byte against the examples of the A2A 1.0 wire reference.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from msgspec import inspect as mi

from a2a_actors.protocol import _jsonrpc as jsonrpc, codec
from a2a_actors.protocol._errors import (
    ERROR_DOMAIN,
    ERROR_TABLE,
    A2AError,
    ContentTypeNotSupportedError,
    ExtendedAgentCardNotConfiguredError,
    ExtensionSupportRequiredError,
    IllegalTransitionError,
    InternalError,
    InvalidAgentResponseError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotAllowedError,
    MethodNotFoundError,
    ParseError,
    PayloadTooLargeError,
    PushNotificationNotSupportedError,
    ServerBusyError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnauthenticatedError,
    UnsupportedOperationError,
    VersionNotSupportedError,
    error_for_code,
    error_for_reason,
)
from a2a_actors.protocol._jsonrpc import Call, Envelope, ErrorReply, RequestId
from a2a_actors.protocol._models import Message, Part, Role, Task, TaskState, TaskStatus
from a2a_actors.protocol._requests import (
    AuthenticationInfo,
    GetExtendedAgentCardRequest,
    GetTaskRequest,
    ListTasksRequest,
    SendMessageConfiguration,
    SendMessageRequest,
    SendMessageResponse,
    TaskPushNotificationConfig,
)

# -- decoding: the golden table --------------------------------------------------------------


@dataclass(frozen=True)
class Ok:
    """Expected: a Call of ``method`` with ``params`` and ``id``."""

    id: RequestId
    method: str
    params: object


@dataclass(frozen=True)
class Err:
    """Expected: an ErrorReply with this code, id, message and (for -32602) field."""

    code: int
    id: RequestId = None
    message: str | None = None
    field: str | None = None


def req(method: Any = "GetTask", params: Any = ..., id: Any = 1, **extra: Any) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method, **extra}
    if params is not ...:
        body["params"] = params
    return json.dumps(body, separators=(",", ":")).encode()


USER_MSG = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
TYPED_USER_MSG = Message(message_id="m-1", role=Role.USER, parts=(Part(text="hi"),))
BATCH = "Batch requests are not supported"
NOT_OBJECT = "request must be a JSON object"
BAD_ID = "id must be a string, a number or null"
BAD_VERSION = 'jsonrpc must be exactly "2.0"'
BAD_METHOD = "method must be a non-empty string"

DECODE_TABLE: list[tuple[str, bytes, Ok | Err]] = [
    # -32700: not JSON at all
    ("not-json", b"not json", Err(-32700, None, "Invalid JSON payload")),
    ("empty-body", b"", Err(-32700, None, "Invalid JSON payload")),
    ("whitespace-body", b"  \r\n", Err(-32700, None, "Invalid JSON payload")),
    ("invalid-utf8", b"\xff\xfe{}", Err(-32700, None, "Invalid JSON payload")),
    ("invalid-utf8-in-string", req("\xff").replace(b"\\u00ff", b"\xff"), Err(-32700)),
    ("truncated", req()[:-1], Err(-32700, None, "Invalid JSON payload")),
    ("trailing-garbage", req() + b" x", Err(-32700, None, "Invalid JSON payload")),
    ("lone-surrogate", req(id="\ud800"), Err(-32700, None, "Invalid JSON payload")),
    ("too-deep", b"[" * 100_000 + b"]" * 100_000, Err(-32700, None, "Invalid JSON payload")),
    # -32600: JSON, but not one JSON-RPC 2.0 request object
    ("batch", b"[" + req() + b"]", Err(-32600, None, BATCH)),
    ("empty-array", b"[]", Err(-32600, None, BATCH)),
    ("scalar-number", b"1", Err(-32600, None, NOT_OBJECT)),
    ("scalar-string", b'"GetTask"', Err(-32600, None, NOT_OBJECT)),
    ("scalar-null", b"null", Err(-32600, None, NOT_OBJECT)),
    ("scalar-bool", b"true", Err(-32600, None, NOT_OBJECT)),
    ("jsonrpc-1.0", req(jsonrpc="1.0"), Err(-32600, 1, BAD_VERSION)),
    ("jsonrpc-number", req(jsonrpc=2.0), Err(-32600, 1, BAD_VERSION)),
    (
        "jsonrpc-missing",
        b'{"id":1,"method":"GetTask","params":{"id":"t"}}',
        Err(-32600, 1, BAD_VERSION),
    ),
    ("id-bool", req(id=True), Err(-32600, None, BAD_ID)),
    ("id-object", req(id={"a": 1}), Err(-32600, None, BAD_ID)),
    ("id-array", req(id=[1]), Err(-32600, None, BAD_ID)),
    ("id-fraction", req(id=1.5), Err(-32600, None, BAD_ID)),
    ("method-missing", b'{"jsonrpc":"2.0","id":"a","params":{}}', Err(-32600, "a", BAD_METHOD)),
    ("method-number", req(method=5), Err(-32600, 1, BAD_METHOD)),
    ("method-null", req(method=None), Err(-32600, 1, BAD_METHOD)),
    ("method-empty", req(method=""), Err(-32600, 1, BAD_METHOD)),
    # -32601: unknown method (0.3 names are not 1.0 methods)
    ("unknown-method", req("Nope", {}), Err(-32601, 1, "Method not found: 'Nope'")),
    ("legacy-name", req("message/send", {}), Err(-32601, 1, "Method not found: 'message/send'")),
    ("lower-case", req("getTask", {}), Err(-32601, 1, "Method not found: 'getTask'")),
    # -32602: params that do not validate, with the field path
    (
        "missing-message",
        req("SendMessage", {}),
        Err(-32602, 1, "Object missing required field `message`", "message"),
    ),
    (
        "missing-message-id",
        req("SendMessage", {"message": {"role": "ROLE_USER", "parts": [{"text": "x"}]}}),
        Err(-32602, 1, "Object missing required field `messageId`", "message.messageId"),
    ),
    (
        "role-0.3-spelling",
        req("SendMessage", {"message": {**USER_MSG, "role": "user"}}),
        Err(-32602, 1, "Invalid enum value 'user'", "message.role"),
    ),
    (
        "role-unspecified",
        req("SendMessage", {"message": {**USER_MSG, "role": 0}}),
        Err(-32602, 1, "role must be ROLE_USER or ROLE_AGENT", "message"),
    ),
    (
        "empty-parts",
        req("SendMessage", {"message": {**USER_MSG, "parts": []}}),
        Err(-32602, 1, "parts must not be empty", "message"),
    ),
    (
        "two-contents",
        req("SendMessage", {"message": {**USER_MSG, "parts": [{"text": "a", "raw": "AA=="}]}}),
        Err(
            -32602,
            1,
            "Part must hold exactly one of text, raw, url, data; got 2",
            "message.parts.0",
        ),
    ),
    (
        "negative-history",
        req("GetTask", {"id": "t", "historyLength": -1}),
        Err(-32602, 1, "Expected `int` >= 0", "historyLength"),
    ),
    (
        "negative-history-config",
        req("SendMessage", {"message": USER_MSG, "configuration": {"historyLength": -3}}),
        Err(-32602, 1, "Expected `int` >= 0", "configuration.historyLength"),
    ),
    (
        "page-size-0",
        req("ListTasks", {"pageSize": 0}),
        Err(-32602, 1, "Expected `int` >= 1", "pageSize"),
    ),
    (
        "page-size-101",
        req("ListTasks", {"pageSize": 101}),
        Err(-32602, 1, "Expected `int` <= 100", "pageSize"),
    ),
    (
        "page-size-snake-101",
        req("ListTasks", {"page_size": 101}),
        Err(-32602, 1, "Expected `int` <= 100", "pageSize"),
    ),
    (
        "bad-status-filter",
        req("ListTasks", {"status": "working"}),
        Err(-32602, 1, "Invalid enum value 'working'", "status"),
    ),
    ("params-array", req("GetTask", ["t"]), Err(-32602, 1, "params must be an object", "params")),
    ("params-string", req("GetTask", "t"), Err(-32602, 1, "params must be an object", "params")),
    (
        "params-number",
        req("GetTask", 1, id="x"),
        Err(-32602, "x", "params must be an object", "params"),
    ),
    (
        "missing-task-id",
        req("GetTask", {}),
        Err(-32602, 1, "Object missing required field `id`", "id"),
    ),
    (
        "push-without-url",
        req("CreateTaskPushNotificationConfig", {"taskId": "t"}),
        Err(-32602, 1, "Object missing required field `url`", "url"),
    ),
    (
        "timestamp-naive",
        req("ListTasks", {"statusTimestampAfter": "2026-01-01T00:00:00"}),
        Err(-32602, 1, "Expected `datetime` with a timezone component", "statusTimestampAfter"),
    ),
    (
        "timestamp-overflow",
        req("ListTasks", {"statusTimestampAfter": "0001-01-01T00:00:00+01:00"}),
        Err(-32602, 1, "statusTimestampAfter is out of range in UTC", "params"),
    ),
    (
        "too-deep-params",
        req("SendMessage", {"message": {**USER_MSG, "metadata": {}}}).replace(
            b'"metadata":{}', b'"metadata":{"x":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
        ),
        Err(-32700),
    ),
    # accepted: absent/null params are {}, ids are kept
    (
        "params-absent",
        req("GetExtendedAgentCard"),
        Ok(1, "GetExtendedAgentCard", GetExtendedAgentCardRequest()),
    ),
    (
        "params-null",
        req("GetExtendedAgentCard", None),
        Ok(1, "GetExtendedAgentCard", GetExtendedAgentCardRequest()),
    ),
    ("params-empty", req("ListTasks", {}), Ok(1, "ListTasks", ListTasksRequest())),
    ("list-absent", req("ListTasks"), Ok(1, "ListTasks", ListTasksRequest())),
    (
        "id-string",
        req(params={"id": "t"}, id="req-1"),
        Ok("req-1", "GetTask", GetTaskRequest(id="t")),
    ),
    ("id-int", req(params={"id": "t"}, id=-7), Ok(-7, "GetTask", GetTaskRequest(id="t"))),
    ("id-bigint", req(params={"id": "t"}, id=2**70), Ok(2**70, "GetTask", GetTaskRequest(id="t"))),
    ("id-null", req(params={"id": "t"}, id=None), Ok(None, "GetTask", GetTaskRequest(id="t"))),
    (
        "id-absent",
        b'{"jsonrpc":"2.0","method":"GetTask","params":{"id":"t"}}',
        Ok(None, "GetTask", GetTaskRequest(id="t")),
    ),
    (
        "unknown-member",
        req(params={"id": "t", "x": 1}, extra=True),
        Ok(1, "GetTask", GetTaskRequest(id="t")),
    ),
    (
        "history-0",
        req(params={"id": "t", "historyLength": 0}),
        Ok(1, "GetTask", GetTaskRequest(id="t", history_length=0)),
    ),
    (
        "page-size-1",
        req("ListTasks", {"pageSize": 1}),
        Ok(1, "ListTasks", ListTasksRequest(page_size=1)),
    ),
    (
        "page-size-100",
        req("ListTasks", {"pageSize": 100}),
        Ok(1, "ListTasks", ListTasksRequest(page_size=100)),
    ),
    (
        "snake-case",
        req(
            "SendMessage",
            {
                "message": {"message_id": "m-1", "role": 1, "parts": [{"text": "hi"}]},
                "configuration": {"history_length": 2, "return_immediately": True},
            },
        ),
        Ok(
            1,
            "SendMessage",
            SendMessageRequest(
                message=TYPED_USER_MSG,
                configuration=SendMessageConfiguration(history_length=2, return_immediately=True),
            ),
        ),
    ),
]


def _check(result: Call | ErrorReply, expected: Ok | Err) -> None:
    if isinstance(expected, Ok):
        assert isinstance(result, Call), result
        assert (result.id, result.method.name, result.params) == (
            expected.id,
            expected.method,
            expected.params,
        )
        assert result.method is jsonrpc.METHODS[expected.method]
        return
    assert isinstance(result, ErrorReply), result
    assert result.error.code == expected.code
    assert result.id == expected.id
    assert result.error.remote is False
    if expected.message is not None:
        assert result.error.message == expected.message
    if expected.code == -32602:
        assert isinstance(result.error, InvalidParamsError)
        assert result.error.field == expected.field
    else:
        assert getattr(result.error, "field", None) is None


@pytest.mark.parametrize(
    ("body", "expected"), [r[1:] for r in DECODE_TABLE], ids=[r[0] for r in DECODE_TABLE]
)
def test_decode_request(body: bytes, expected: Ok | Err) -> None:
    _check(jsonrpc.decode_request(body), expected)


@pytest.mark.parametrize(
    ("body", "expected"), [r[1:] for r in DECODE_TABLE], ids=[r[0] for r in DECODE_TABLE]
)
def test_the_two_phases_give_the_same_answer(body: bytes, expected: Ok | Err) -> None:
    env = jsonrpc.decode_envelope(body)
    if isinstance(env, ErrorReply):
        # Only envelope errors (and params that are not an object) stop phase one.
        assert isinstance(expected, Err)
        assert expected.code in (-32700, -32600) or expected.field == "params"
        _check(env, expected)
        return
    assert isinstance(env, Envelope)
    _check(jsonrpc.decode_params(env), expected)


ENVELOPES: list[tuple[bytes, Envelope]] = [
    (req("X", {"a": [1, {"b": None}]}, id="e"), Envelope("e", "X", b'{"a":[1,{"b":null}]}')),
    (req("X"), Envelope(1, "X", b"{}")),
    (req("X", None), Envelope(1, "X", b"{}")),
    (
        b'{"params" : { "k" : 1 } ,"method":"message/send","jsonrpc":"2.0"}',
        Envelope(None, "message/send", b'{ "k" : 1 }'),
    ),
]


@pytest.mark.parametrize(("body", "expected"), ENVELOPES)
def test_decode_envelope_keeps_params_raw(body: bytes, expected: Envelope) -> None:
    assert jsonrpc.decode_envelope(body) == expected


def test_method_table_names_the_eleven_methods() -> None:
    assert sorted(jsonrpc.METHODS) == sorted(
        [
            "SendMessage",
            "SendStreamingMessage",
            "GetTask",
            "ListTasks",
            "CancelTask",
            "SubscribeToTask",
            "CreateTaskPushNotificationConfig",
            "GetTaskPushNotificationConfig",
            "ListTaskPushNotificationConfigs",
            "DeleteTaskPushNotificationConfig",
            "GetExtendedAgentCard",
        ]
    )
    streaming = {name for name, spec in jsonrpc.METHODS.items() if spec.streaming}
    assert streaming == {"SendStreamingMessage", "SubscribeToTask"}


# -- encoding: exact bytes -------------------------------------------------------------------


def test_encode_error_matches_the_reference_example() -> None:
    error = TaskNotFoundError("Task not found", metadata={"taskId": "nope"})
    assert jsonrpc.encode_error(1, error) == (
        b'{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task not found","data":'
        b'[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND",'
        b'"domain":"a2a-protocol.org","metadata":{"taskId":"nope"}}]}}'
    )


def test_encode_error_with_a_field_violation() -> None:
    error = InvalidParamsError("Field is required.", field="message.messageId")
    assert jsonrpc.encode_error("r", error) == (
        b'{"jsonrpc":"2.0","id":"r","error":{"code":-32602,"message":"Field is required.",'
        b'"data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INVALID_PARAMS",'
        b'"domain":"a2a-protocol.org","metadata":{"field":"message.messageId"}},'
        b'{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":'
        b'[{"field":"message.messageId","description":"Field is required."}]}]}}'
    )


def test_encode_error_without_an_id() -> None:
    assert jsonrpc.encode_error(None, ParseError()) == (
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Invalid JSON payload",'
        b'"data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"PARSE_ERROR",'
        b'"domain":"a2a-protocol.org","metadata":{}}]}}'
    )


def test_encode_result_with_a_direct_message() -> None:
    """Reference §1.4 "Response with a direct Message" (our key order within the message)."""
    reply = SendMessageResponse(
        message=Message(
            message_id="m-agent-1", context_id="bc49", role=Role.AGENT, parts=(Part(text="..."),)
        )
    )
    out = jsonrpc.encode_result(1, reply)
    assert out == (
        b'{"jsonrpc":"2.0","id":1,"result":{"message":{"messageId":"m-agent-1",'
        b'"role":"ROLE_AGENT","parts":[{"text":"..."}],"contextId":"bc49"}}}'
    )
    reference = (
        '{"jsonrpc":"2.0","id":1,"result":{"message":{"messageId":"m-agent-1","contextId":"bc49",'
        '"role":"ROLE_AGENT","parts":[{"text":"..."}]}}}'
    )
    assert json.loads(out) == json.loads(reference)


def test_encode_result_with_a_task_matches_the_reference() -> None:
    reference = (
        '{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"da19","contextId":"2164",'
        '"status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-11-30T03:13:44.077745Z"},'
        '"artifacts":[{"artifactId":"art-1","name":"answer","parts":[{"text":"..."}]}],'
        '"history":[{"messageId":"m-1","contextId":"2164","taskId":"da19","role":"ROLE_USER",'
        '"parts":[{"text":"..."}]}]}}}'
    )
    result = jsonrpc.decode_response(reference, SendMessageResponse)
    assert isinstance(result, SendMessageResponse)
    assert isinstance(result.task, Task)
    assert result.task.status.state is TaskState.COMPLETED
    assert json.loads(jsonrpc.encode_result(1, result)) == json.loads(reference)


def test_encode_result_null() -> None:
    assert jsonrpc.encode_result("x", None) == b'{"jsonrpc":"2.0","id":"x","result":null}'


def test_encode_request_matches_the_reference_examples() -> None:
    get = jsonrpc.encode_request(2, "GetTask", GetTaskRequest(id="task-uuid", history_length=10))
    assert get == (
        b'{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"task-uuid","historyLength":10}}'
    )
    send_ref = (
        b'{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{'
        b'"message":{"messageId":"m-1","role":"ROLE_USER",'
        b'"parts":[{"text":"What is the weather?"}]},'
        b'"configuration":{"acceptedOutputModes":["text/plain"],"historyLength":2,'
        b'"returnImmediately":false},"metadata":{}}}'
    )
    call = jsonrpc.decode_request(send_ref)
    assert isinstance(call, Call)
    expected = SendMessageRequest(
        message=Message(
            message_id="m-1", role=Role.USER, parts=(Part(text="What is the weather?"),)
        ),
        configuration=SendMessageConfiguration(
            accepted_output_modes=("text/plain",), history_length=2
        ),
        metadata={},
    )
    assert call.params == expected
    # returnImmediately=false is the default: ProtoJSON leaves it out.
    assert jsonrpc.encode_request(1, "SendMessage", expected) == send_ref.replace(
        b',"returnImmediately":false', b""
    )
    push_ref = (
        b'{"jsonrpc":"2.0","id":3,"method":"CreateTaskPushNotificationConfig","params":{'
        b'"taskId":"task-uuid","id":"cfg-2","url":"https://client.example.com/hook",'
        b'"token":"tok-2","authentication":{"scheme":"Bearer","credentials":"secret"}}}'
    )
    call = jsonrpc.decode_request(push_ref)
    assert isinstance(call, Call)
    assert call.params == TaskPushNotificationConfig(
        task_id="task-uuid",
        id="cfg-2",
        url="https://client.example.com/hook",
        token="tok-2",
        authentication=AuthenticationInfo(scheme="Bearer", credentials="secret"),
    )
    assert json.loads(jsonrpc.encode_request(3, call.method.name, call.params)) == json.loads(
        push_ref
    )


# -- the error table -------------------------------------------------------------------------

#: Reference §2.1, plus our own -32050/-32051 and the local-only IllegalTransitionError.
REFERENCE_ERRORS: dict[type[A2AError], tuple[int, int, str, str]] = {
    TaskNotFoundError: (-32001, 404, "NOT_FOUND", "TASK_NOT_FOUND"),
    TaskNotCancelableError: (-32002, 400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE"),
    PushNotificationNotSupportedError: (
        -32003,
        400,
        "FAILED_PRECONDITION",
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
    ),
    UnsupportedOperationError: (-32004, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION"),
    ContentTypeNotSupportedError: (-32005, 400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED"),
    InvalidAgentResponseError: (-32006, 500, "INTERNAL", "INVALID_AGENT_RESPONSE"),
    ExtendedAgentCardNotConfiguredError: (
        -32007,
        400,
        "FAILED_PRECONDITION",
        "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
    ),
    ExtensionSupportRequiredError: (
        -32008,
        400,
        "FAILED_PRECONDITION",
        "EXTENSION_SUPPORT_REQUIRED",
    ),
    VersionNotSupportedError: (-32009, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED"),
    ParseError: (-32700, 400, "INVALID_ARGUMENT", "PARSE_ERROR"),
    InvalidRequestError: (-32600, 400, "INVALID_ARGUMENT", "INVALID_REQUEST"),
    MethodNotFoundError: (-32601, 404, "NOT_FOUND", "METHOD_NOT_FOUND"),
    MethodNotAllowedError: (-32601, 405, "UNIMPLEMENTED", "METHOD_NOT_ALLOWED"),
    InvalidParamsError: (-32602, 400, "INVALID_ARGUMENT", "INVALID_PARAMS"),
    InternalError: (-32603, 500, "INTERNAL", "INTERNAL_ERROR"),
    ServerBusyError: (-32050, 429, "RESOURCE_EXHAUSTED", "SERVER_BUSY"),
    UnauthenticatedError: (-32051, 401, "UNAUTHENTICATED", "UNAUTHENTICATED"),
    PayloadTooLargeError: (-32052, 413, "RESOURCE_EXHAUSTED", "PAYLOAD_TOO_LARGE"),
    IllegalTransitionError: (-32006, 500, "INTERNAL", "INVALID_AGENT_RESPONSE"),
}
#: The errors a JSON-RPC peer tells apart by code (MethodNotAllowedError, HTTP 405 on the
#: REST binding only, shares -32601: over JSON-RPC it reads as MethodNotFoundError).
WIRE_ERRORS = [
    cls for cls in REFERENCE_ERRORS if cls not in (IllegalTransitionError, MethodNotAllowedError)
]


def test_error_table_is_the_reference_table() -> None:
    assert set(ERROR_TABLE) == set(REFERENCE_ERRORS)
    for cls, (code, http, grpc, reason) in REFERENCE_ERRORS.items():
        spec = ERROR_TABLE[cls]
        assert (spec.code, spec.http_status, spec.grpc_status, spec.reason) == (
            code,
            http,
            grpc,
            reason,
        ), cls
        error = cls()
        assert (error.code, error.http_status, error.reason) == (code, http, reason)
        assert error.message == spec.default_message
        assert error.remote is False


def test_a2a_reasons_follow_the_naming_rule() -> None:
    """S§10.6: UPPER_SNAKE_CASE of the error name without its ``Error`` suffix."""
    a2a = [cls for cls in WIRE_ERRORS if -32099 <= REFERENCE_ERRORS[cls][0] <= -32001]
    for cls in a2a:
        stem = cls.__name__.removesuffix("Error")
        snake = "".join(f"_{c}" if c.isupper() and i else c for i, c in enumerate(stem)).upper()
        assert ERROR_TABLE[cls].reason == snake


def test_reasons_and_codes_are_unique_on_the_wire() -> None:
    reasons = [ERROR_TABLE[cls].reason for cls in WIRE_ERRORS]
    codes = [ERROR_TABLE[cls].code for cls in WIRE_ERRORS]
    assert len(set(reasons)) == len(reasons)
    assert len(set(codes)) == len(codes)
    for cls in WIRE_ERRORS:
        assert error_for_code(ERROR_TABLE[cls].code) is cls
        assert error_for_reason(ERROR_TABLE[cls].reason) is cls
    assert error_for_code(-32099) is A2AError
    assert error_for_reason("NO_SUCH_REASON") is None


def test_error_details() -> None:
    error = TaskNotFoundError(metadata={"taskId": "t-1"})
    assert error.details() == [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "TASK_NOT_FOUND",
            "domain": ERROR_DOMAIN,
            "metadata": {"taskId": "t-1"},
        }
    ]
    assert ERROR_DOMAIN == "a2a-protocol.org"


# -- decode_response -------------------------------------------------------------------------


def _error_body(code: int, data: Any) -> bytes:
    error = {"code": code, "message": f"peer says {code}", "data": data}
    return json.dumps({"jsonrpc": "2.0", "id": 1, "error": error}).encode()


@pytest.mark.parametrize("cls", WIRE_ERRORS, ids=lambda c: c.__name__)
def test_decode_response_raises_the_typed_remote_error(cls: type[A2AError]) -> None:
    code, _, _, reason = REFERENCE_ERRORS[cls]
    data = [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": reason,
            "domain": "a2a-protocol.org",
            "metadata": {"taskId": "t-9"},
        },
        {"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": []},
    ]
    with pytest.raises(A2AError) as info:
        jsonrpc.decode_response(_error_body(code, data), Task)
    error = info.value
    assert type(error) is cls
    assert error.remote is True
    assert error.code == code
    assert error.message == f"peer says {code}"
    assert error.data == data
    assert error.details() == data  # relayed verbatim
    assert error.metadata == {"taskId": "t-9"}


@pytest.mark.parametrize(("data", "kept"), [(None, []), ({"free": "form"}, [{"free": "form"}])])
def test_decode_response_with_non_list_data(data: Any, kept: list[Any]) -> None:
    with pytest.raises(TaskNotFoundError) as info:
        jsonrpc.decode_response(_error_body(-32001, data), Task)
    assert info.value.data == kept


def test_decode_response_with_an_unknown_code() -> None:
    with pytest.raises(A2AError) as info:
        jsonrpc.decode_response(_error_body(-32077, []), None)
    assert type(info.value) is A2AError
    assert info.value.code == -32077
    assert info.value.remote is True


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{", "malformed JSON-RPC response"),
        (b'{"jsonrpc":"2.0","id":1}', "JSON-RPC response has neither result nor error"),
        (b'{"jsonrpc":"2.0","id":1,"result":{"id":"t"}}', "invalid result from peer"),
    ],
)
def test_decode_response_malformed_is_a_local_internal_error(body: bytes, message: str) -> None:
    with pytest.raises(InternalError, match=f"^{message}") as info:
        jsonrpc.decode_response(body, Task)
    assert info.value.remote is False


def test_decode_response_typed_result() -> None:
    body = b'{"jsonrpc":"2.0","id":1,"result":{"id":"t","status":{"state":"TASK_STATE_WORKING"}}}'
    assert jsonrpc.decode_response(body, Task) == Task(
        id="t", status=TaskStatus(state=TaskState.WORKING)
    )


# -- fuzzing: decode_request never raises ----------------------------------------------------

_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(
        [
            "ROLE_USER",
            "ROLE_AGENT",
            "user",
            "TASK_STATE_WORKING",
            "AA==",
            "-_8",
            "2026-01-01T00:00:00Z",
            "2026-01-01T00:00:00",
            "0001-01-01T00:00:00+01:00",
            "9999-12-31T23:59:59-01:00",
        ]
    )
)
_json = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


def _field_names(t: Any, depth: int = 0) -> set[str]:
    """camelCase and snake_case field names reachable from ``t`` (for realistic params)."""
    names: set[str] = set()
    info = mi.type_info(t) if depth == 0 else t
    if isinstance(info, mi.StructType) and depth < 4:
        for f in info.fields:
            names |= {f.encode_name, f.name}
            names |= _field_names(f.type, depth + 1)
    elif isinstance(info, mi.UnionType | mi.Metadata):
        for member in getattr(info, "types", None) or [getattr(info, "type", None)]:
            names |= _field_names(member, depth + 1)
    elif isinstance(info, mi.VarTupleType | mi.ListType | mi.DictType):
        names |= _field_names(
            getattr(info, "item_type", getattr(info, "value_type", None)), depth + 1
        )
    return names


_FIELD_NAMES = sorted(set().union(*(_field_names(s.params) for s in jsonrpc.METHODS.values())))


@st.composite
def _params(draw: st.DrawFn) -> Any:
    keys = st.sampled_from(_FIELD_NAMES) | st.text(max_size=6)
    values = st.deferred(
        lambda: (
            _json
            | st.builds(dict, st.lists(st.tuples(keys, values), max_size=4))
            | st.lists(values, max_size=3)
        )
    )
    return draw(st.dictionaries(keys, values, max_size=6) | _json)


_requests = st.fixed_dictionaries(
    {"method": st.sampled_from([*jsonrpc.METHODS, "message/send", "", "X"]) | _scalars},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0"]) | _scalars,
        "id": _scalars | _json,
        "params": _params(),
    },
)


def _assert_total(result: Any) -> None:
    assert isinstance(result, Call | ErrorReply)
    if isinstance(result, ErrorReply):
        assert isinstance(result.error, A2AError)
        json.loads(jsonrpc.encode_error(result.id, result.error))
    else:
        # Whatever was accepted re-encodes and decodes to the same typed params.
        encoded = codec.encode(result.params)
        assert codec.decode(encoded, type(result.params)) == result.params
        json.loads(jsonrpc.encode_result(result.id, None))


@given(st.binary(max_size=200))
def test_fuzz_random_bytes(body: bytes) -> None:
    _assert_total(jsonrpc.decode_request(body))


@given(_json)
def test_fuzz_random_json(value: Any) -> None:
    _assert_total(jsonrpc.decode_request(json.dumps(value).encode()))


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(_requests)
def test_fuzz_random_json_rpc_requests(body: dict[str, Any]) -> None:
    _assert_total(jsonrpc.decode_request(json.dumps(body).encode()))


@given(st.binary(max_size=60), st.sampled_from(sorted(jsonrpc.METHODS)))
def test_fuzz_random_params_bytes(params: bytes, method: str) -> None:
    body = b'{"jsonrpc":"2.0","id":1,"method":"%s","params":%s}' % (method.encode(), params)
    _assert_total(jsonrpc.decode_request(body))


def test_fuzz_strategies_reach_valid_calls() -> None:
    """The request strategy is not vacuous: some draws decode to Calls."""
    calls = 0

    @settings(max_examples=300, database=None)
    @given(_requests)
    def count(body: dict[str, Any]) -> None:
        nonlocal calls
        body = {**body, "jsonrpc": "2.0", "id": 1, "method": "ListTasks"}
        if isinstance(jsonrpc.decode_request(json.dumps(body).encode()), Call):
            calls += 1

    count()
    assert calls > 0


def test_validation_errors_are_msgspec_errors() -> None:
    """The params phase reports msgspec's own messages (tests above match them verbatim)."""
    with pytest.raises(msgspec.ValidationError):
        codec.decode(b'{"pageSize":0}', ListTasksRequest)
