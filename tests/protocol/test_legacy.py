"""A2A 0.3 compatibility: method names, params, results, errors and cards.

Golden shapes come from the wire reference §8; where the official SDK's own 0.3 compat layer
(``a2a.compat.v0_3``) is importable, our translation is also checked against it, object by
object, in both directions.
"""

from __future__ import annotations

import copy
import importlib
import json
from collections.abc import Callable
from typing import Any

import msgspec
import pytest
from a2a import types as sdk
from hypothesis import given, strategies as st

from a2a_actors.protocol import (
    _jsonrpc as jsonrpc,
    _legacy_card as legacy_card,
    _legacy_v0_3 as legacy,
    codec,
)
from a2a_actors.protocol._card import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    APIKeySecurityScheme,
    ClientCredentialsOAuthFlow,
    HTTPAuthSecurityScheme,
    OAuth2SecurityScheme,
    OAuthFlows,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a_actors.protocol._errors import (
    A2AError,
    ExtendedAgentCardNotConfiguredError,
    InternalError,
    ServerBusyError,
    TaskNotFoundError,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from a2a_actors.protocol._jsonrpc import Call, ErrorReply
from a2a_actors.protocol._models import (
    Artifact,
    Message,
    Part,
    Role,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_actors.protocol._requests import (
    AuthenticationInfo,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    SendMessageConfiguration,
    SendMessageRequest,
    SendMessageResponse,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
)

json_format: Any = importlib.import_module("google.protobuf.json_format")

TS = "2026-11-30T03:13:44.077745Z"


def ts() -> Any:
    return codec.decode(json.dumps({"state": "TASK_STATE_WORKING", "timestamp": TS}), TaskStatus)


def user(text: str = "hello legacy", **kw: Any) -> Message:
    return Message(message_id="lm-1", role=Role.USER, parts=(Part(text=text),), **kw)


# -- method names and states -----------------------------------------------------------------

METHOD_NAMES = {
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


def test_method_names_both_ways() -> None:
    assert dict(legacy.V0_3_METHODS) == METHOD_NAMES
    for old, new in METHOD_NAMES.items():
        assert legacy.method_to_v1_0(old) == new
        assert legacy.method_to_v0_3(new) == old
        assert legacy.is_v0_3_method(old)
        assert not legacy.is_v0_3_method(new)
        assert new in jsonrpc.METHODS
    assert legacy.method_to_v0_3("ListTasks") is None
    assert legacy.method_to_v1_0("tasks/list") is None


STATES = {
    TaskState.UNSPECIFIED: "unknown",
    TaskState.SUBMITTED: "submitted",
    TaskState.WORKING: "working",
    TaskState.COMPLETED: "completed",
    TaskState.FAILED: "failed",
    TaskState.CANCELED: "canceled",
    TaskState.INPUT_REQUIRED: "input-required",
    TaskState.REJECTED: "rejected",
    TaskState.AUTH_REQUIRED: "auth-required",
}


def test_states() -> None:
    assert {s: legacy.state_to_v0_3(s) for s in TaskState} == STATES
    for state, name in STATES.items():
        task = legacy.result_from_v0_3(
            "GetTask", {"kind": "task", "id": "t", "contextId": "c", "status": {"state": name}}
        )
        assert isinstance(task, Task)
        assert task.status.state is state


# -- results 1.0 → 0.3 (server side) ---------------------------------------------------------


def legacy_task() -> Task:
    return Task(
        id="0a30",
        context_id="d976",
        status=TaskStatus(state=TaskState.COMPLETED, timestamp=ts().timestamp),
        artifacts=(Artifact(artifact_id="art-1", name="answer", parts=(Part(text="42"),)),),
        history=(user(context_id="d976", task_id="0a30"),),
    )


def test_task_matches_the_reference_shape() -> None:
    assert legacy.result_to_v0_3(legacy_task()) == {
        "kind": "task",
        "id": "0a30",
        "contextId": "d976",
        "status": {"state": "completed", "timestamp": TS},
        "artifacts": [
            {"artifactId": "art-1", "name": "answer", "parts": [{"kind": "text", "text": "42"}]}
        ],
        "history": [
            {
                "kind": "message",
                "messageId": "lm-1",
                "role": "user",
                "parts": [{"kind": "text", "text": "hello legacy"}],
                "contextId": "d976",
                "taskId": "0a30",
            }
        ],
    }


def test_send_message_result_is_unwrapped() -> None:
    task = legacy_task()
    assert legacy.result_to_v0_3(SendMessageResponse(task=task)) == legacy.result_to_v0_3(task)
    reply = Message(message_id="a", role=Role.AGENT, parts=(Part(text="hi"),), context_id="c")
    assert legacy.result_to_v0_3(SendMessageResponse(message=reply)) == {
        "kind": "message",
        "messageId": "a",
        "role": "agent",
        "parts": [{"kind": "text", "text": "hi"}],
        "contextId": "c",
    }


def test_encode_result_v0_3_bytes() -> None:
    task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.INPUT_REQUIRED))
    assert legacy.encode_result_v0_3("L1", task) == (
        b'{"jsonrpc":"2.0","id":"L1","result":{"kind":"task","id":"t","contextId":"c",'
        b'"status":{"state":"input-required"}}}'
    )
    assert legacy.encode_result_v0_3(2, None) == b'{"jsonrpc":"2.0","id":2,"result":null}'


def status_event(state: TaskState) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(task_id="t", context_id="c", status=TaskStatus(state=state))


def test_stream_events() -> None:
    working = legacy.result_to_v0_3(StreamResponse.of(status_event(TaskState.WORKING)))
    assert working == {
        "kind": "status-update",
        "taskId": "t",
        "contextId": "c",
        "status": {"state": "working"},
        "final": False,
    }
    for state in (TaskState.COMPLETED, TaskState.FAILED, TaskState.CANCELED, TaskState.REJECTED):
        assert legacy.result_to_v0_3(status_event(state))["final"] is True
    asking = status_event(TaskState.INPUT_REQUIRED)
    assert legacy.result_to_v0_3(asking)["final"] is False
    assert legacy.result_to_v0_3(asking, final=True)["final"] is True  # the server ends here
    chunk = TaskArtifactUpdateEvent(
        task_id="t", context_id="c", artifact=Artifact(artifact_id="a", parts=(Part(text="x"),))
    )
    assert legacy.result_to_v0_3(StreamResponse.of(chunk)) == {
        "kind": "artifact-update",
        "taskId": "t",
        "contextId": "c",
        "artifact": {"artifactId": "a", "parts": [{"kind": "text", "text": "x"}]},
        "append": False,
        "lastChunk": False,
    }
    last = msgspec.structs.replace(chunk, append=True, last_chunk=True, metadata={"m": 1})
    out = legacy.result_to_v0_3(last)
    assert (out["append"], out["lastChunk"], out["metadata"]) == (True, True, {"m": 1})


PART_SHAPES: list[tuple[Part, dict[str, Any]]] = [
    (Part(text="t", media_type="text/plain", filename="t.txt"), {"kind": "text", "text": "t"}),
    (
        Part(raw=b"\xfb\xff", media_type="application/x", filename="a.bin", metadata={"k": 1}),
        {
            "kind": "file",
            "file": {"bytes": "+/8=", "mimeType": "application/x", "name": "a.bin"},
            "metadata": {"k": 1},
        },
    ),
    (Part(url="https://f/a.pdf"), {"kind": "file", "file": {"uri": "https://f/a.pdf"}}),
    (Part(data={"a": [1]}), {"kind": "data", "data": {"a": [1]}}),
    (
        Part(data=[1, 2], metadata={"k": "v"}),
        {
            "kind": "data",
            "data": {"value": [1, 2]},
            "metadata": {"k": "v", "data_part_compat": True},
        },
    ),
    (
        Part(data="s"),
        {"kind": "data", "data": {"value": "s"}, "metadata": {"data_part_compat": True}},
    ),
    (
        Part(data=None),
        {"kind": "data", "data": {"value": None}, "metadata": {"data_part_compat": True}},
    ),
    (
        Part(data=False),
        {"kind": "data", "data": {"value": False}, "metadata": {"data_part_compat": True}},
    ),
]


@pytest.mark.parametrize(("part", "shape"), PART_SHAPES)
def test_parts_both_ways(part: Part, shape: dict[str, Any]) -> None:
    message = Message(message_id="m", role=Role.AGENT, parts=(part,))
    out = legacy.result_to_v0_3(message)
    assert out["parts"] == [shape]
    back = legacy.result_from_v0_3("SendMessage", out)
    assert isinstance(back, SendMessageResponse)
    assert back.message is not None
    lossless = part if part.kind != "text" else Part(text=part.text)  # 0.3 text has no media
    assert back.message.parts == (lossless,)


def test_push_configs_to_v0_3() -> None:
    config = TaskPushNotificationConfig(
        url="https://h",
        id="cfg",
        task_id="t",
        token="tok",
        tenant="acme",
        authentication=AuthenticationInfo(scheme="Bearer", credentials="s"),
    )
    shape = {
        "taskId": "t",
        "pushNotificationConfig": {
            "url": "https://h",
            "id": "cfg",
            "token": "tok",
            "authentication": {"schemes": ["Bearer"], "credentials": "s"},
        },
    }
    assert legacy.result_to_v0_3(config) == shape
    listed = ListTaskPushNotificationConfigsResponse(configs=(config, config), next_page_token="n")
    assert legacy.result_to_v0_3(listed) == [shape, shape]
    bare = TaskPushNotificationConfig(url="https://h", task_id="t")
    assert legacy.result_to_v0_3(bare) == {
        "taskId": "t",
        "pushNotificationConfig": {"url": "https://h"},
    }


def test_list_tasks_has_no_v0_3_form() -> None:
    from a2a_actors.protocol._requests import ListTasksResponse

    with pytest.raises(TypeError, match=r"^ListTasksResponse has no A2A 0.3 form$"):
        legacy.result_to_v0_3(ListTasksResponse())


# -- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (TaskNotFoundError("Task not found", metadata={"taskId": "x"}), -32001),
        (ExtendedAgentCardNotConfiguredError(), -32007),
        (VersionNotSupportedError("no"), -32603),  # 1.0-only codes become InternalError
        (ServerBusyError("busy"), -32603),
    ],
)
def test_errors_carry_null_data(error: A2AError, code: int) -> None:
    out = legacy.encode_error_v0_3(1, error)
    expected = {"code": code, "message": error.message, "data": None}
    assert json.loads(out) == {"jsonrpc": "2.0", "id": 1, "error": expected}
    assert legacy.error_to_v0_3(error) == expected


def test_error_bytes() -> None:
    assert legacy.encode_error_v0_3("L1", TaskNotFoundError("Task not found")) == (
        b'{"jsonrpc":"2.0","id":"L1","error":{"code":-32001,"message":"Task not found",'
        b'"data":null}}'
    )


# -- params 0.3 → 1.0 (server side) ----------------------------------------------------------


def v03(method: str, params: Any = ..., id: Any = 1) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not ...:
        body["params"] = params
    return json.dumps(body).encode()


def decode(body: bytes) -> Call | ErrorReply:
    env = jsonrpc.decode_envelope(body)
    assert not isinstance(env, ErrorReply)
    return legacy.decode_params_v0_3(env)


MSG_03 = {
    "kind": "message",
    "messageId": "lm-1",
    "role": "user",
    "parts": [
        {"kind": "text", "text": "hello legacy", "metadata": {"k": "v"}},
        {"kind": "file", "file": {"bytes": "+/8=", "mimeType": "image/png", "name": "a.png"}},
        {"kind": "file", "file": {"uri": "https://f/a.pdf", "mimeType": None}},
        {"kind": "data", "data": {"a": 1}},
        {"kind": "data", "data": {"value": [1]}, "metadata": {"data_part_compat": True, "x": 1}},
        {"kind": "data", "data": {"value": 7}, "metadata": {"data_part_compat": True}},
    ],
    "contextId": "ctx",
    "taskId": None,
    "referenceTaskIds": ["t-0"],
    "extensions": ["https://e/v1"],
    "metadata": {"snake_key": 1},
}
MSG_10 = Message(
    message_id="lm-1",
    role=Role.USER,
    parts=(
        Part(text="hello legacy", metadata={"k": "v"}),
        Part(raw=b"\xfb\xff", media_type="image/png", filename="a.png"),
        Part(url="https://f/a.pdf"),
        Part(data={"a": 1}),
        Part(data=[1], metadata={"x": 1}),
        Part(data=7),
    ),
    context_id="ctx",
    reference_task_ids=("t-0",),
    extensions=("https://e/v1",),
    metadata={"snake_key": 1},
)
PUSH_03 = {
    "id": "cfg",
    "url": "https://h",
    "token": "tok",
    "authentication": {"schemes": ["Bearer", "Basic"], "credentials": "s"},
}
PUSH_10 = TaskPushNotificationConfig(
    url="https://h",
    id="cfg",
    token="tok",
    authentication=AuthenticationInfo(scheme="Bearer", credentials="s"),
)

PARAMS_TABLE: list[tuple[str, bytes, str, object]] = [
    (
        "send-blocking-absent",
        v03("message/send", {"message": MSG_03}),
        "SendMessage",
        SendMessageRequest(message=MSG_10),
    ),
    (
        "send-config",
        v03(
            "message/send",
            {
                "message": MSG_03,
                "configuration": {
                    "acceptedOutputModes": ["text/plain"],
                    "blocking": False,
                    "historyLength": 5,
                    "pushNotificationConfig": PUSH_03,
                },
                "metadata": {"m": 1},
            },
        ),
        "SendMessage",
        SendMessageRequest(
            message=MSG_10,
            configuration=SendMessageConfiguration(
                accepted_output_modes=("text/plain",),
                return_immediately=True,
                history_length=5,
                task_push_notification_config=PUSH_10,
            ),
            metadata={"m": 1},
        ),
    ),
    (
        "send-blocking-true",
        v03(
            "message/send",
            {"message": MSG_03, "configuration": {"blocking": True, "historyLength": 0}},
        ),
        "SendMessage",
        SendMessageRequest(
            message=MSG_10, configuration=SendMessageConfiguration(return_immediately=False)
        ),
    ),
    (
        "send-blocking-null",
        v03("message/send", {"message": MSG_03, "configuration": {"blocking": None}}),
        "SendMessage",
        SendMessageRequest(message=MSG_10, configuration=SendMessageConfiguration()),
    ),
    (
        "stream",
        v03("message/stream", {"message": MSG_03}),
        "SendStreamingMessage",
        SendMessageRequest(message=MSG_10),
    ),
    (
        "get",
        v03("tasks/get", {"id": "t", "historyLength": 3, "metadata": {}}),
        "GetTask",
        GetTaskRequest(id="t", history_length=3),
    ),
    (
        "get-history-0",
        v03("tasks/get", {"id": "t", "historyLength": 0}),
        "GetTask",
        GetTaskRequest(id="t"),
    ),
    (
        "cancel",
        v03("tasks/cancel", {"id": "t", "metadata": {"why": "x"}}),
        "CancelTask",
        CancelTaskRequest(id="t", metadata={"why": "x"}),
    ),
    (
        "resubscribe",
        v03("tasks/resubscribe", {"id": "t"}),
        "SubscribeToTask",
        SubscribeToTaskRequest(id="t"),
    ),
    (
        "push-set",
        v03("tasks/pushNotificationConfig/set", {"taskId": "t", "pushNotificationConfig": PUSH_03}),
        "CreateTaskPushNotificationConfig",
        msgspec.structs.replace(PUSH_10, task_id="t"),
    ),
    (
        "push-set-no-auth-schemes",
        v03(
            "tasks/pushNotificationConfig/set",
            {
                "taskId": "t",
                "pushNotificationConfig": {"url": "https://h", "authentication": {"schemes": []}},
            },
        ),
        "CreateTaskPushNotificationConfig",
        TaskPushNotificationConfig(
            url="https://h", task_id="t", authentication=AuthenticationInfo(scheme="")
        ),
    ),
    (
        "push-get",
        v03("tasks/pushNotificationConfig/get", {"id": "t", "pushNotificationConfigId": "cfg"}),
        "GetTaskPushNotificationConfig",
        GetTaskPushNotificationConfigRequest(task_id="t", id="cfg"),
    ),
    (
        "push-get-default",
        v03("tasks/pushNotificationConfig/get", {"id": "t"}),
        "GetTaskPushNotificationConfig",
        GetTaskPushNotificationConfigRequest(task_id="t", id="t"),
    ),
    (
        "push-list",
        v03("tasks/pushNotificationConfig/list", {"id": "t"}),
        "ListTaskPushNotificationConfigs",
        ListTaskPushNotificationConfigsRequest(task_id="t"),
    ),
    (
        "push-delete",
        v03("tasks/pushNotificationConfig/delete", {"id": "t", "pushNotificationConfigId": "cfg"}),
        "DeleteTaskPushNotificationConfig",
        DeleteTaskPushNotificationConfigRequest(task_id="t", id="cfg"),
    ),
    (
        "card",
        v03("agent/getAuthenticatedExtendedCard"),
        "GetExtendedAgentCard",
        GetExtendedAgentCardRequest(),
    ),
    (
        "card-with-params",
        v03("agent/getAuthenticatedExtendedCard", {"x": 1}),
        "GetExtendedAgentCard",
        GetExtendedAgentCardRequest(),
    ),
]


@pytest.mark.parametrize(
    ("body", "method", "params"), [r[1:] for r in PARAMS_TABLE], ids=[r[0] for r in PARAMS_TABLE]
)
def test_v0_3_params_decode_to_1_0_calls(body: bytes, method: str, params: object) -> None:
    call = decode(body)
    assert isinstance(call, Call), call
    assert call.method is jsonrpc.METHODS[method]
    assert call.params == params
    assert call.id == 1


PARAM_ERRORS: list[tuple[str, bytes, int, str | None, str | None]] = [
    ("unknown-method", v03("tasks/list", {}), -32601, None, "Method not found: 'tasks/list'"),
    ("1.0-name", v03("SendMessage", {}), -32601, None, "Method not found: 'SendMessage'"),
    (
        "missing-message",
        v03("message/send", {}),
        -32602,
        "message",
        "Object missing required field `message`",
    ),
    (
        "bad-role",
        v03("message/send", {"message": {**MSG_03, "role": "robot"}}),
        -32602,
        "message.role",
        "Invalid enum value 'robot'",
    ),
    (
        "bad-kind",
        v03("message/send", {"message": {**MSG_03, "parts": [{"kind": "video"}]}}),
        -32602,
        "message.parts.0.kind",
        "Unknown part kind 'video'",
    ),
    (
        "no-kind",
        v03("message/send", {"message": {**MSG_03, "parts": [{"text": "x"}]}}),
        -32602,
        "message.parts.0.kind",
        "Unknown part kind None",
    ),
    (
        "data-missing",
        v03("message/send", {"message": {**MSG_03, "parts": [{"kind": "data", "data": None}]}}),
        -32602,
        "message.parts.0",
        "Part must hold exactly one of text, raw, url, data",
    ),
    (
        "file-not-object",
        v03("message/send", {"message": {**MSG_03, "parts": [{"kind": "file", "file": "x"}]}}),
        -32602,
        "message.parts.0.file",
        "Expected `object`",
    ),
    (
        "file-both",
        v03(
            "message/send",
            {
                "message": {
                    **MSG_03,
                    "parts": [{"kind": "file", "file": {"bytes": "AA==", "uri": "u"}}],
                }
            },
        ),
        -32602,
        "message.parts.0",
        "Part must hold exactly one of text, raw, url, data; got 2",
    ),
    (
        "blocking-string",
        v03("message/send", {"message": MSG_03, "configuration": {"blocking": "yes"}}),
        -32602,
        "configuration.blocking",
        "Expected `bool`",
    ),
    ("get-no-id", v03("tasks/get", {}), -32602, "id", "Object missing required field `id`"),
    (
        "push-get-no-id",
        v03("tasks/pushNotificationConfig/get", {}),
        -32602,
        "id",
        "Object missing required field `id`",
    ),
    (
        "delete-no-config-id",
        v03("tasks/pushNotificationConfig/delete", {"id": "t"}),
        -32602,
        "pushNotificationConfigId",
        "Object missing required field `pushNotificationConfigId`",
    ),
    (
        "set-no-url",
        v03("tasks/pushNotificationConfig/set", {"taskId": "t", "pushNotificationConfig": {}}),
        -32602,
        "url",
        "Object missing required field `url`",
    ),
    (
        "negative-history",
        v03("tasks/get", {"id": "t", "historyLength": -1}),
        -32602,
        "historyLength",
        "Expected `int` >= 0",
    ),
]


@pytest.mark.parametrize(
    ("body", "code", "field", "message"),
    [r[1:] for r in PARAM_ERRORS],
    ids=[r[0] for r in PARAM_ERRORS],
)
def test_v0_3_param_errors(body: bytes, code: int, field: str | None, message: str | None) -> None:
    reply = decode(body)
    assert isinstance(reply, ErrorReply), reply
    assert (reply.id, reply.error.code, getattr(reply.error, "field", None)) == (1, code, field)
    assert reply.error.message == message
    assert json.loads(legacy.encode_error_v0_3(reply.id, reply.error))["error"]["data"] is None


def test_params_from_v0_3_rejects_unknown_methods() -> None:
    from a2a_actors.protocol._errors import MethodNotFoundError

    with pytest.raises(MethodNotFoundError):
        legacy.params_from_v0_3("GetTask", {"id": "t"})


def test_deep_params_are_a_parse_error() -> None:
    deep = b'{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t"}}'
    env = jsonrpc.decode_envelope(deep)
    assert not isinstance(env, ErrorReply)
    nested = jsonrpc.Envelope(env.id, env.method, b"[" * 100_000 + b"]" * 100_000)
    reply = legacy.decode_params_v0_3(nested)
    assert isinstance(reply, ErrorReply)
    assert reply.error.code == -32700


# -- client side: 1.0 requests → 0.3, 0.3 results → 1.0 --------------------------------------

REQUESTS_10: list[tuple[str, object]] = [
    ("SendMessage", SendMessageRequest(message=MSG_10)),
    (
        "SendStreamingMessage",
        SendMessageRequest(
            message=MSG_10,
            configuration=SendMessageConfiguration(
                accepted_output_modes=("text/plain",),
                return_immediately=True,
                history_length=4,
                task_push_notification_config=PUSH_10,
            ),
            metadata={"m": 1},
        ),
    ),
    ("GetTask", GetTaskRequest(id="t", history_length=2)),
    ("CancelTask", CancelTaskRequest(id="t", metadata={"a": 1})),
    ("SubscribeToTask", SubscribeToTaskRequest(id="t")),
    ("CreateTaskPushNotificationConfig", msgspec.structs.replace(PUSH_10, task_id="t")),
    ("GetTaskPushNotificationConfig", GetTaskPushNotificationConfigRequest(task_id="t", id="c")),
    ("ListTaskPushNotificationConfigs", ListTaskPushNotificationConfigsRequest(task_id="t")),
    (
        "DeleteTaskPushNotificationConfig",
        DeleteTaskPushNotificationConfigRequest(task_id="t", id="c"),
    ),
    ("GetExtendedAgentCard", GetExtendedAgentCardRequest()),
]


@pytest.mark.parametrize(("method", "request_"), REQUESTS_10, ids=[r[0] for r in REQUESTS_10])
def test_requests_round_trip_through_v0_3(method: str, request_: object) -> None:
    body = legacy.encode_request_v0_3("c-1", method, request_)
    sent = json.loads(body)
    assert sent["method"] == METHOD_NAMES_BY_V1[method]
    call = decode(body)
    assert isinstance(call, Call), call
    assert call.method.name == method
    assert call.params == request_


METHOD_NAMES_BY_V1 = {v: k for k, v in METHOD_NAMES.items()}


def test_send_params_to_v0_3_shape() -> None:
    params = legacy.params_to_v0_3(REQUESTS_10[1][1])
    assert params["configuration"] == {
        "acceptedOutputModes": ["text/plain"],
        "historyLength": 4,
        "blocking": False,
        "pushNotificationConfig": {
            "url": "https://h",
            "id": "cfg",
            "token": "tok",
            "authentication": {"schemes": ["Bearer"], "credentials": "s"},
        },
    }
    assert params["message"]["role"] == "user"
    assert params["message"]["kind"] == "message"
    assert params["metadata"] == {"m": 1}
    assert legacy.encode_request_v0_3(7, "GetExtendedAgentCard", GetExtendedAgentCardRequest()) == (
        b'{"jsonrpc":"2.0","id":7,"method":"agent/getAuthenticatedExtendedCard"}'
    )
    assert legacy.encode_request_v0_3(8, "GetTask", GetTaskRequest(id="t", tenant="x")) == (
        b'{"jsonrpc":"2.0","id":8,"method":"tasks/get","params":{"id":"t"}}'
    )


def test_list_tasks_cannot_be_sent_to_v0_3() -> None:
    with pytest.raises(UnsupportedOperationError, match=r"^ListTasks has no A2A 0.3 equivalent$"):
        legacy.encode_request_v0_3(1, "ListTasks", ListTasksRequest())
    with pytest.raises(UnsupportedOperationError):
        legacy.params_to_v0_3(ListTasksRequest())


def test_decode_response_v0_3_results() -> None:
    task_03 = legacy.result_to_v0_3(legacy_task())
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": task_03})
    assert legacy.decode_response_v0_3(body, "SendMessage") == SendMessageResponse(
        task=legacy_task()
    )
    assert legacy.decode_response_v0_3(body, "GetTask") == legacy_task()
    assert legacy.decode_response_v0_3(body, "SubscribeToTask") == StreamResponse(
        task=legacy_task()
    )
    event = {
        "kind": "status-update",
        "taskId": "t",
        "contextId": "c",
        "final": True,
        "status": {"state": "canceled"},
    }
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": event})
    assert legacy.decode_response_v0_3(body, "SendStreamingMessage") == StreamResponse.of(
        status_event(TaskState.CANCELED)
    )
    push = {"taskId": "t", "pushNotificationConfig": PUSH_03}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": [push, push]})
    expected = msgspec.structs.replace(PUSH_10, task_id="t")
    assert legacy.decode_response_v0_3(
        body, "ListTaskPushNotificationConfigs"
    ) == ListTaskPushNotificationConfigsResponse(configs=(expected, expected))
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": push})
    assert legacy.decode_response_v0_3(body, "GetTaskPushNotificationConfig") == expected
    null = b'{"jsonrpc":"2.0","id":1,"result":null}'
    assert legacy.decode_response_v0_3(null, "DeleteTaskPushNotificationConfig") is None


def test_decode_response_v0_3_errors() -> None:
    body = (
        b'{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task not found","data":null}}'
    )
    with pytest.raises(TaskNotFoundError) as info:
        legacy.decode_response_v0_3(body, "GetTask")
    assert (info.value.remote, info.value.code, info.value.data) == (True, -32001, [])
    for bad, message in [
        (b"{", "malformed JSON-RPC response"),
        (b"[]", "JSON-RPC response must be an object"),
        (b'{"error":{"code":"x"}}', "malformed JSON-RPC error object"),
        (b'{"jsonrpc":"2.0","id":1}', "JSON-RPC response has neither result nor error"),
        (b'{"result":{"kind":"nope"}}', "invalid result from peer"),
        (b'{"result":{"kind":"task","id":"t"}}', "invalid result from peer"),
    ]:
        with pytest.raises(InternalError, match=f"^{message}") as failure:
            legacy.decode_response_v0_3(bad, "SendStreamingMessage")
        assert failure.value.remote is False


# -- cards -----------------------------------------------------------------------------------


def dual_card() -> AgentCard:
    oauth = SecurityScheme(
        oauth2_security_scheme=OAuth2SecurityScheme(
            flows=OAuthFlows(
                client_credentials=ClientCredentialsOAuthFlow(
                    token_url="https://auth/token", scopes={"read": "Read"}
                )
            )
        )
    )
    return AgentCard(
        name="Weather",
        description="Forecasts",
        version="1.0.0",
        supported_interfaces=(
            AgentInterface(url="https://w/a2a", protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url="https://w/a2a", protocol_binding="JSONRPC", protocol_version="0.3"),
            AgentInterface(
                url="https://w/rest", protocol_binding="HTTP+JSON", protocol_version="0.3"
            ),
        ),
        capabilities=AgentCapabilities(streaming=True, extended_agent_card=True),
        default_input_modes=("text/plain",),
        default_output_modes=("text/plain",),
        skills=(
            AgentSkill(
                id="f",
                name="F",
                description="d",
                tags=("w",),
                security_requirements=(
                    SecurityRequirement(schemes={"key": StringList(list=("a",))}),
                ),
            ),
        ),
        security_schemes={
            "key": SecurityScheme(
                api_key_security_scheme=APIKeySecurityScheme(location="header", name="X-Key")
            ),
            "bearer": SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Bearer")
            ),
            "oauth": oauth,
        },
        security_requirements=(
            SecurityRequirement(schemes={"bearer": StringList()}),
            SecurityRequirement(schemes={"oauth": StringList(list=("read",))}),
        ),
    )


def test_card_v0_3_fields() -> None:
    assert legacy_card.card_to_v0_3_fields(dual_card()) == {
        "url": "https://w/a2a",
        "preferredTransport": "JSONRPC",
        "protocolVersion": "0.3",
        "additionalInterfaces": [{"url": "https://w/rest", "transport": "HTTP+JSON"}],
        "supportsAuthenticatedExtendedCard": True,
        "securitySchemes": {
            "key": {"type": "apiKey", "in": "header", "name": "X-Key"},
            "bearer": {"type": "http", "scheme": "Bearer"},
            "oauth": {
                "type": "oauth2",
                "flows": {
                    "clientCredentials": {
                        "tokenUrl": "https://auth/token",
                        "scopes": {"read": "Read"},
                    }
                },
            },
        },
        "security": [{"bearer": []}, {"oauth": ["read"]}],
        "skills": [{"security": [{"key": ["a"]}]}],
    }


def test_dual_card_keeps_the_1_0_card_and_reads_back() -> None:
    card = dual_card()
    dual = legacy_card.dual_version_card(card)
    plain = json.loads(codec.encode(card))
    for key, value in plain.items():
        if key != "securitySchemes" and key != "skills":
            assert dual[key] == value, key
    assert dual["securitySchemes"]["key"]["apiKeySecurityScheme"] == {
        "location": "header",
        "name": "X-Key",
    }
    assert codec.decode(json.dumps(dual), AgentCard) == card  # a 1.0 reader ignores 0.3 keys
    assert legacy_card.card_from_v0_3(dual) == card
    assert legacy.result_to_v0_3(card) == dual  # the 0.3 extended-card result


def test_pure_v0_3_card_parses() -> None:
    obj = {
        "name": "Old",
        "description": "0.3 agent",
        "version": "0.1",
        "protocolVersion": "0.3.0",
        "url": "https://old/a2a",
        "preferredTransport": "JSONRPC",
        "additionalInterfaces": [
            {"url": "https://old/a2a", "transport": "JSONRPC"},
            {"url": "https://old/rest", "transport": "HTTP+JSON"},
        ],
        "supportsAuthenticatedExtendedCard": True,
        "capabilities": {"streaming": True, "stateTransitionHistory": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [
            {"id": "s", "name": "S", "description": "d", "tags": ["t"], "security": [{"key": []}]}
        ],
        "securitySchemes": {
            "key": {"type": "apiKey", "in": "query", "name": "k", "description": None},
            "basic": {"type": "http", "scheme": "Basic"},
            "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://oidc"},
            "mtls": {"type": "mutualTLS"},
            "oauth": {
                "type": "oauth2",
                "flows": {
                    "password": {"tokenUrl": "https://t", "scopes": {}},
                    "clientCredentials": {"tokenUrl": "https://t", "scopes": {"r": "R"}},
                },
            },
            "device-only": {"type": "oauth2", "flows": {}},
        },
        "security": [{"oauth": ["r"], "key": []}],
    }
    card = legacy_card.card_from_v0_3(obj)
    assert card.supported_interfaces == (
        AgentInterface(url="https://old/a2a", protocol_binding="JSONRPC", protocol_version="0.3"),
        AgentInterface(
            url="https://old/rest", protocol_binding="HTTP+JSON", protocol_version="0.3"
        ),
    )
    assert card.capabilities == AgentCapabilities(streaming=True, extended_agent_card=True)
    assert card.security_requirements == (
        SecurityRequirement(schemes={"oauth": StringList(list=("r",)), "key": StringList(list=())}),
    )
    assert card.skills[0].security_requirements == (
        SecurityRequirement(schemes={"key": StringList()}),
    )
    schemes = card.security_schemes
    assert set(schemes) == {"key", "basic", "oidc", "mtls", "oauth"}
    assert schemes["key"].api_key_security_scheme == APIKeySecurityScheme(
        location="query", name="k"
    )
    assert schemes["basic"].http_auth_security_scheme == HTTPAuthSecurityScheme(scheme="Basic")
    oidc = schemes["oidc"].open_id_connect_security_scheme
    assert oidc is not None
    assert oidc.open_id_connect_url == "https://oidc"
    assert schemes["mtls"].mtls_security_scheme is not None
    flows = schemes["oauth"].oauth2_security_scheme
    assert flows is not None
    assert flows.flows == OAuthFlows(
        client_credentials=ClientCredentialsOAuthFlow(token_url="https://t", scopes={"r": "R"})
    )  # the first flow in 1.0's order wins
    assert legacy.result_from_v0_3("GetExtendedAgentCard", obj) == card


def test_card_without_a_v0_3_interface_is_pure_1_0() -> None:
    card = msgspec.structs.replace(
        dual_card(), supported_interfaces=dual_card().supported_interfaces[:1]
    )
    assert legacy_card.card_to_v0_3(card) is None
    assert legacy_card.card_to_v0_3_fields(card) == {}
    assert legacy_card.dual_version_card(card) == json.loads(codec.encode(card))


@pytest.mark.parametrize(
    ("version", "legacy_"),
    [
        ("", True),
        ("0.3", True),
        ("0.3.0", True),
        ("0.9", True),
        ("0.2.6", False),
        ("1.0", False),
        ("1.0.1", False),
        ("abc", False),
        ("0", False),
    ],
)
def test_is_v0_3_version(version: str, legacy_: bool) -> None:
    assert legacy_card.is_v0_3_version(version) is legacy_


def test_unknown_scheme_type_is_a_validation_error() -> None:
    obj = {"securitySchemes": {"x": {"type": "kerberos"}}}
    with pytest.raises(msgspec.ValidationError) as info:
        legacy_card.card_from_v0_3(obj)
    assert codec.error_path(info.value) == (
        "Unknown security scheme type 'kerberos'",
        "securitySchemes.x.type",
    )


# -- property: messages survive 1.0 → 0.3 → 1.0 ----------------------------------------------

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
_metadata = st.none() | st.dictionaries(
    st.text(max_size=5).filter(lambda k: k != "data_part_compat"), _json_values, max_size=3
)
_parts = st.one_of(
    st.builds(Part, text=st.text(max_size=8), metadata=_metadata),
    st.builds(
        Part,
        raw=st.binary(max_size=8),
        media_type=st.text(max_size=5),
        filename=st.text(max_size=5),
        metadata=_metadata,
    ),
    st.builds(
        Part,
        url=st.text(min_size=1, max_size=8),
        media_type=st.text(max_size=5),
        metadata=_metadata,
    ),
    st.builds(Part, data=_json_values, metadata=_metadata),
)
_messages = st.builds(
    Message,
    message_id=st.text(min_size=1, max_size=5),
    role=st.sampled_from([Role.USER, Role.AGENT]),
    parts=st.lists(_parts, min_size=1, max_size=4).map(tuple),
    context_id=st.text(max_size=4),
    task_id=st.text(max_size=4),
    metadata=_metadata,
    extensions=st.lists(st.text(max_size=4), max_size=2).map(tuple),
    reference_task_ids=st.lists(st.text(max_size=4), max_size=2).map(tuple),
)


@given(_messages)
def test_messages_survive_the_round_trip(message: Message) -> None:
    out = legacy.result_to_v0_3(message)
    assert json.loads(json.dumps(out)) == out  # plain JSON builtins
    back = legacy.result_from_v0_3("SendMessage", out)
    assert isinstance(back, SendMessageResponse)
    assert back.message == msgspec.structs.replace(
        message, parts=tuple(map(_survivor, message.parts))
    )


def _survivor(part: Part) -> Part:
    """What 0.3 can carry of a part: no media type or filename on text; and an empty metadata
    object beside non-object data is indistinguishable from none once the compat flag is
    added and removed again (as in a2a-sdk)."""
    if part.kind == "text":
        return Part(text=part.text, metadata=part.metadata)
    if part.kind == "data" and not isinstance(part.data, dict) and part.metadata == {}:
        return msgspec.structs.replace(part, metadata=None)
    return part


# -- against the SDK's own 0.3 compat layer --------------------------------------------------

cv: Any = pytest.importorskip("a2a.compat.v0_3.conversions")
t3: Any = pytest.importorskip("a2a.compat.v0_3.types")


def dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def sdk_task(state: Any = sdk.TaskState.TASK_STATE_COMPLETED) -> Any:
    part_list = sdk.Part()
    json_format.ParseDict([1, "x", None], part_list.data)
    part_obj = sdk.Part(metadata=None)
    json_format.ParseDict({"k": {"n": 1}}, part_obj.data)
    msg = sdk.Message(
        message_id="m",
        context_id="c",
        task_id="t",
        role=sdk.Role.ROLE_USER,
        parts=[
            sdk.Part(text="hi"),
            sdk.Part(raw=b"\x00\xfb", media_type="image/png", filename="a.png"),
            sdk.Part(url="https://f", filename="f"),
            part_list,
            part_obj,
        ],
        reference_task_ids=["r"],
        extensions=["e"],
    )
    json_format.ParseDict({"a": 1}, msg.metadata)
    status = sdk.TaskStatus(
        state=state,
        message=sdk.Message(
            message_id="s",
            role=sdk.Role.ROLE_AGENT,
            parts=[sdk.Part(text="q")],
            context_id="c",
            task_id="t",
        ),
    )
    status.timestamp.FromJsonString(TS)
    task = sdk.Task(
        id="t",
        context_id="c",
        status=status,
        history=[msg],
        artifacts=[
            sdk.Artifact(
                artifact_id="a",
                name="n",
                description="d",
                parts=[sdk.Part(text="x")],
                extensions=["e"],
            )
        ],
    )
    json_format.ParseDict({"m": [1, 2]}, task.metadata)
    return task


def ours(obj: Any, type_: type[Any]) -> Any:
    return codec.decode(json_format.MessageToJson(obj), type_)


SDK_RESULTS: list[
    tuple[str, Callable[[], Any], type[Any], Callable[[Any], Any], Any, str | None]
] = [
    ("task", sdk_task, Task, cv.to_compat_task, t3.Task, "GetTask"),
    *[
        (
            f"task-{sdk.TaskState.Name(s)}",
            lambda s=s: sdk_task(s),
            Task,
            cv.to_compat_task,
            t3.Task,
            "CancelTask",
        )
        for _, s in sdk.TaskState.items()
        if s != sdk.TaskState.TASK_STATE_UNSPECIFIED
    ],
    ("message", lambda: sdk_task().history[0], Message, cv.to_compat_message, t3.Message, None),
    (
        "status-update-final",
        lambda: sdk.StreamResponse(
            status_update=sdk.TaskStatusUpdateEvent(
                task_id="t", context_id="c", status=sdk_task().status
            )
        ),
        StreamResponse,
        cv.to_compat_stream_response,
        t3.SendStreamingMessageSuccessResponse,
        "SubscribeToTask",
    ),
    (
        "status-update",
        lambda: sdk.StreamResponse(
            status_update=sdk.TaskStatusUpdateEvent(
                task_id="t",
                context_id="c",
                status=sdk_task(sdk.TaskState.TASK_STATE_WORKING).status,
            )
        ),
        StreamResponse,
        cv.to_compat_stream_response,
        t3.SendStreamingMessageSuccessResponse,
        "SubscribeToTask",
    ),
    (
        "artifact-update",
        lambda: sdk.StreamResponse(
            artifact_update=sdk.TaskArtifactUpdateEvent(
                task_id="t", context_id="c", artifact=sdk_task().artifacts[0], append=True
            )
        ),
        StreamResponse,
        cv.to_compat_stream_response,
        t3.SendStreamingMessageSuccessResponse,
        "SendStreamingMessage",
    ),
    (
        "stream-task",
        lambda: sdk.StreamResponse(task=sdk_task()),
        StreamResponse,
        cv.to_compat_stream_response,
        t3.SendStreamingMessageSuccessResponse,
        "SendStreamingMessage",
    ),
    (
        "send-task",
        lambda: sdk.SendMessageResponse(task=sdk_task()),
        SendMessageResponse,
        cv.to_compat_send_message_response,
        t3.SendMessageResponse,
        "SendMessage",
    ),
    (
        "send-message",
        lambda: sdk.SendMessageResponse(message=sdk_task().history[0]),
        SendMessageResponse,
        cv.to_compat_send_message_response,
        t3.SendMessageResponse,
        "SendMessage",
    ),
    (
        "push-config",
        lambda: sdk.TaskPushNotificationConfig(
            task_id="t",
            id="c",
            url="https://h",
            token="k",
            authentication=sdk.AuthenticationInfo(scheme="Bearer", credentials="s"),
        ),
        TaskPushNotificationConfig,
        cv.to_compat_task_push_notification_config,
        t3.TaskPushNotificationConfig,
        "GetTaskPushNotificationConfig",
    ),
    (
        "push-list",
        lambda: sdk.ListTaskPushNotificationConfigsResponse(
            configs=[sdk.TaskPushNotificationConfig(task_id="t", url="https://h")]
        ),
        ListTaskPushNotificationConfigsResponse,
        cv.to_compat_list_task_push_notification_config_response,
        t3.ListTaskPushNotificationConfigResponse,
        "ListTaskPushNotificationConfigs",
    ),
]


def _result_of(compat: Any) -> tuple[Any, dict[str, Any] | None]:
    """The JSON-RPC ``result`` of an SDK 0.3 object, and the response wrapping it if any."""
    data = dump(compat)
    if isinstance(data, dict) and "jsonrpc" in data:
        return data["result"], data
    return data, None


@pytest.mark.parametrize(
    ("build", "type_", "to_compat", "model", "method"),
    [r[1:] for r in SDK_RESULTS],
    ids=[r[0] for r in SDK_RESULTS],
)
def test_results_match_the_sdk_compat_layer(
    build: Callable[[], Any],
    type_: type[Any],
    to_compat: Callable[[Any], Any],
    model: Any,
    method: str | None,
) -> None:
    obj = build()
    expected, response = _result_of(to_compat(obj))
    mine = legacy.result_to_v0_3(ours(obj, type_))
    assert mine == expected
    # The SDK's 0.3 models accept what we send.
    model.model_validate(mine if response is None else {**response, "result": mine})
    if method is not None:
        back = legacy.result_from_v0_3(method, expected)
        spec_type = jsonrpc.METHODS[method].result
        assert spec_type is not None
        assert back == legacy.result_from_v0_3(method, mine)
        assert isinstance(back, spec_type)


def test_send_params_match_the_sdk_compat_layer() -> None:
    req = sdk.SendMessageRequest(
        message=sdk_task().history[0],
        configuration=sdk.SendMessageConfiguration(
            accepted_output_modes=["text/plain"],
            history_length=3,
            return_immediately=True,
            task_push_notification_config=sdk.TaskPushNotificationConfig(
                url="https://h", token="k", authentication=sdk.AuthenticationInfo(scheme="Bearer")
            ),
        ),
    )
    json_format.ParseDict({"trace": "x"}, req.metadata)
    compat = cv.to_compat_send_message_request(req, "r-1")
    params = dump(compat)["params"]
    mine = legacy.params_to_v0_3(ours(req, SendMessageRequest))
    assert mine == params
    # and back: the SDK's 0.3 → 1.0 conversion agrees with ours
    core = cv.to_core_send_message_request(t3.SendMessageRequest.model_validate(dump(compat)))
    assert legacy.params_from_v0_3("message/send", params) == ours(core, SendMessageRequest)


@pytest.mark.parametrize(
    ("to_compat", "core", "ours_type"),
    [
        (
            cv.to_compat_get_task_request,
            sdk.GetTaskRequest(id="t", history_length=4),
            GetTaskRequest,
        ),
        (cv.to_compat_cancel_task_request, sdk.CancelTaskRequest(id="t"), CancelTaskRequest),
        (
            cv.to_compat_subscribe_to_task_request,
            sdk.SubscribeToTaskRequest(id="t"),
            SubscribeToTaskRequest,
        ),
        (
            cv.to_compat_get_task_push_notification_config_request,
            sdk.GetTaskPushNotificationConfigRequest(task_id="t", id="c"),
            GetTaskPushNotificationConfigRequest,
        ),
        (
            cv.to_compat_delete_task_push_notification_config_request,
            sdk.DeleteTaskPushNotificationConfigRequest(task_id="t", id="c"),
            DeleteTaskPushNotificationConfigRequest,
        ),
        (
            cv.to_compat_list_task_push_notification_config_request,
            sdk.ListTaskPushNotificationConfigsRequest(task_id="t"),
            ListTaskPushNotificationConfigsRequest,
        ),
        (
            cv.to_compat_create_task_push_notification_config_request,
            sdk.TaskPushNotificationConfig(
                task_id="t",
                id="c",
                url="https://h",
                authentication=sdk.AuthenticationInfo(scheme="Basic", credentials="x"),
            ),
            TaskPushNotificationConfig,
        ),
    ],
)
def test_other_params_match_the_sdk_compat_layer(
    to_compat: Callable[[Any, Any], Any], core: Any, ours_type: type[Any]
) -> None:
    compat = dump(to_compat(core, 1))
    typed = ours(core, ours_type)
    assert legacy.params_to_v0_3(typed) == compat["params"]
    assert legacy.params_from_v0_3(compat["method"], compat["params"]) == typed


def test_dual_card_matches_the_sdk() -> None:
    helpers = pytest.importorskip("a2a.server.request_handlers.response_helpers")
    resolver = pytest.importorskip("a2a.client.card_resolver")
    golden = importlib.import_module("tests.protocol.test_models_golden")
    card = golden.agent_card()
    card.supported_interfaces.append(
        sdk.AgentInterface(
            url="https://w.example.com/a2a03", protocol_binding="JSONRPC", protocol_version="0.3"
        )
    )
    card.supported_interfaces.append(
        sdk.AgentInterface(
            url="https://w.example.com/rest03",
            protocol_binding="HTTP+JSON",
            protocol_version="0.3.0",
        )
    )
    mine = ours(card, AgentCard)
    assert legacy_card.dual_version_card(mine) == helpers.agent_card_to_dict(card)
    compat = dump(cv.to_compat_agent_card(card))
    compat.pop("supportsAuthenticatedExtendedCard")  # the SDK drops it when false; ours: absent
    expected = legacy_card.card_to_v0_3(mine)
    assert expected is not None
    expected.pop("supportsAuthenticatedExtendedCard", None)
    assert expected == compat
    t3.AgentCard.model_validate(legacy_card.card_to_v0_3(mine))
    # The SDK client reads our dual card back into the same card, except where its parser
    # lets the merged 0.3 "flows" overwrite the 1.0 ones: the device-code flow (0.3 has
    # none) and pkceRequired are lost. Its own dual card has the same limitation.
    parsed = resolver.parse_agent_card(copy.deepcopy(legacy_card.dual_version_card(mine)))
    assert parsed.security_schemes["oauth-dc"] != card.security_schemes["oauth-dc"]
    card.security_schemes[
        "oauth-ac"
    ].oauth2_security_scheme.flows.authorization_code.pkce_required = False
    del card.security_schemes["oauth-dc"], parsed.security_schemes["oauth-dc"]
    assert parsed == card
    # Our reader keeps the device-code flow from the 1.0 wrapper.
    assert legacy_card.card_from_v0_3(legacy_card.dual_version_card(mine)) == mine


def test_pure_v0_3_card_from_the_sdk() -> None:
    golden = importlib.import_module("tests.protocol.test_models_golden")
    card = golden.agent_card()
    del card.supported_interfaces[:]
    card.supported_interfaces.append(
        sdk.AgentInterface(url="https://a/a2a", protocol_binding="JSONRPC", protocol_version="0.3")
    )
    card.supported_interfaces.append(
        sdk.AgentInterface(
            url="https://a/rest", protocol_binding="HTTP+JSON", protocol_version="0.3"
        )
    )
    pure = dump(cv.to_compat_agent_card(card))
    parsed = legacy_card.card_from_v0_3(pure)
    expected = ours(card, AgentCard)
    # What 0.3 cannot say: pkceRequired, and the device-code scheme (left out on reading).
    ac = expected.security_schemes["oauth-ac"].oauth2_security_scheme
    assert ac is not None
    assert ac.flows.authorization_code is not None
    ac_flows = OAuthFlows(
        authorization_code=msgspec.structs.replace(ac.flows.authorization_code, pkce_required=False)
    )
    schemes = {k: v for k, v in expected.security_schemes.items() if k != "oauth-dc"}
    schemes["oauth-ac"] = SecurityScheme(
        oauth2_security_scheme=msgspec.structs.replace(ac, flows=ac_flows)
    )
    expected = msgspec.structs.replace(expected, security_schemes=schemes)
    assert parsed == expected
