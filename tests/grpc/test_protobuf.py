"""The gRPC wire form (a2a_actors.protocol._protobuf) against the official SDK's protobufs.

Three kinds of checks: the Structs and the SDK's messages have the same fields, conversion
round-trips (property tests), and the golden ones: our JSON of an object is what the SDK's
own ``json_format`` writes for the converted message, and the SDK's parser reading our JSON
yields the message we convert to. Then invalid content, errors, and the lazy import.
"""

from __future__ import annotations

import ast
import contextlib
import datetime as dt
import json
import os
import pathlib
import subprocess
import sys
from typing import Any, cast

import msgspec
import pytest
from a2a.types import a2a_pb2
from a2a.utils.errors import A2A_REASON_TO_ERROR
from google.protobuf import json_format
from google.rpc import code_pb2, error_details_pb2, status_pb2
from hypothesis import given, settings, strategies as st

from a2a_actors.protocol import (
    _card as c,
    _grpc_service as grpc_service,
    _grpc_status as grpc_status,
    _protobuf as protobuf,
    codec,
)
from a2a_actors.protocol._errors import (
    ERROR_TABLE,
    A2AError,
    IllegalTransitionError,
    InternalError,
    InvalidAgentResponseError,
    InvalidParamsError,
    MethodNotFoundError,
    ServerBusyError,
    TaskNotFoundError,
    UnauthenticatedError,
)
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
    WireStruct,
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
    ListTasksResponse,
    SendMessageConfiguration,
    SendMessageRequest,
    SendMessageResponse,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
)

ROOT = pathlib.Path(__file__).resolve().parents[2]

# -- strategies ------------------------------------------------------------------------------

_text = st.text(max_size=8)
_id = st.text(min_size=1, max_size=8)
_int32 = st.integers(min_value=0, max_value=2**31 - 1)
_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=8,
)
_object = st.dictionaries(_text, _json, max_size=3)
_metadata = st.none() | _object
_strings = st.lists(_text, max_size=2).map(tuple)
_stamp = st.datetimes(
    min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30), timezones=st.just(dt.UTC)
)


@st.composite
def _parts(draw: st.DrawFn) -> Part:
    content = draw(
        st.sampled_from(["text", "raw", "url", "data"]).flatmap(
            lambda kind: st.fixed_dictionaries(
                {kind: {"text": _text, "raw": st.binary(max_size=8), "url": _text}.get(kind, _json)}
            )
        )
    )
    part: Part = msgspec.convert(
        {**content, "filename": draw(_text), "mediaType": draw(_text)}, Part
    )
    return msgspec.structs.replace(part, metadata=draw(_metadata))


_messages = st.builds(
    Message,
    message_id=_id,
    role=st.sampled_from([Role.USER, Role.AGENT]),
    parts=st.lists(_parts(), min_size=1, max_size=3).map(tuple),
    context_id=_text,
    task_id=_text,
    metadata=_metadata,
    extensions=_strings,
    reference_task_ids=_strings,
)
_states = st.sampled_from([s for s in TaskState if s is not TaskState.UNSPECIFIED])
_statuses = st.builds(
    TaskStatus,
    state=_states,
    message=st.none() | _messages,
    timestamp=st.none() | _stamp,
)
_artifacts = st.builds(
    Artifact,
    artifact_id=_id,
    parts=st.lists(_parts(), max_size=2).map(tuple),
    name=_text,
    description=_text,
    metadata=_metadata,
    extensions=_strings,
)
_tasks = st.builds(
    Task,
    id=_id,
    status=_statuses,
    context_id=_text,
    artifacts=st.lists(_artifacts, max_size=2).map(tuple),
    history=st.lists(_messages, max_size=2).map(tuple),
    metadata=_metadata,
)
_status_updates = st.builds(
    TaskStatusUpdateEvent, task_id=_id, context_id=_id, status=_statuses, metadata=_metadata
)
_artifact_updates = st.builds(
    TaskArtifactUpdateEvent,
    task_id=_id,
    context_id=_id,
    artifact=_artifacts,
    append=st.booleans(),
    last_chunk=st.booleans(),
    metadata=_metadata,
)
_stream_responses = st.one_of(
    _tasks.map(StreamResponse.of),
    _messages.map(StreamResponse.of),
    _status_updates.map(StreamResponse.of),
    _artifact_updates.map(StreamResponse.of),
)
_push_configs = st.builds(
    TaskPushNotificationConfig,
    url=_id,
    id=_text,
    task_id=_text,
    token=_text,
    authentication=st.none() | st.builds(AuthenticationInfo, scheme=_id, credentials=_text),
    tenant=_text,
)
_send_requests = st.builds(
    SendMessageRequest,
    message=_messages,
    configuration=st.none()
    | st.builds(
        SendMessageConfiguration,
        accepted_output_modes=_strings,
        task_push_notification_config=st.none() | _push_configs,
        history_length=st.none() | _int32,
        return_immediately=st.booleans(),
    ),
    metadata=_metadata,
    tenant=_text,
)
_list_requests = st.builds(
    ListTasksRequest,
    context_id=_text,
    status=st.none() | _states,
    page_size=st.none() | st.integers(1, 100),
    page_token=_text,
    history_length=st.none() | _int32,
    status_timestamp_after=st.none() | _stamp,
    include_artifacts=st.none() | st.booleans(),
    tenant=_text,
)
_other_requests = st.one_of(
    st.builds(GetTaskRequest, id=_text, history_length=st.none() | _int32, tenant=_text),
    st.builds(CancelTaskRequest, id=_text, metadata=_metadata, tenant=_text),
    st.builds(SubscribeToTaskRequest, id=_text, tenant=_text),
    st.builds(GetTaskPushNotificationConfigRequest, task_id=_text, id=_text, tenant=_text),
    st.builds(DeleteTaskPushNotificationConfigRequest, task_id=_text, id=_text, tenant=_text),
    st.builds(
        ListTaskPushNotificationConfigsRequest,
        task_id=_text,
        page_size=_int32,
        page_token=_text,
        tenant=_text,
    ),
    st.builds(GetExtendedAgentCardRequest, tenant=_text),
    st.builds(
        ListTaskPushNotificationConfigsResponse,
        configs=st.lists(_push_configs, max_size=2).map(tuple),
        next_page_token=_text,
    ),
    st.builds(
        ListTasksResponse,
        tasks=st.lists(_tasks, max_size=2).map(tuple),
        next_page_token=_text,
        page_size=_int32,
        total_size=_int32,
    ),
    _tasks.map(lambda t: SendMessageResponse(task=t)),
    _messages.map(lambda m: SendMessageResponse(message=m)),
)
_objects = st.one_of(_stream_responses, _send_requests, _list_requests, _other_requests)


def _full_card() -> c.AgentCard:
    scopes = {"read": "Read"}
    flows = [
        c.OAuthFlows(
            authorization_code=c.AuthorizationCodeOAuthFlow(
                authorization_url="https://a",
                token_url="https://t",
                scopes=scopes,
                pkce_required=True,
            )
        ),
        c.OAuthFlows(client_credentials=c.ClientCredentialsOAuthFlow(token_url="t", scopes=scopes)),
        c.OAuthFlows(implicit=c.ImplicitOAuthFlow(authorization_url="a", scopes=scopes)),
        c.OAuthFlows(password=c.PasswordOAuthFlow(token_url="t", refresh_url="r")),
        c.OAuthFlows(
            device_code=c.DeviceCodeOAuthFlow(
                device_authorization_url="d", token_url="t", scopes={}, refresh_url="r"
            )
        ),
    ]
    schemes = {
        "key": c.SecurityScheme(
            api_key_security_scheme=c.APIKeySecurityScheme(location="header", name="X-API-Key")
        ),
        "bearer": c.SecurityScheme(
            http_auth_security_scheme=c.HTTPAuthSecurityScheme(scheme="Bearer", bearer_format="JWT")
        ),
        "oidc": c.SecurityScheme(
            open_id_connect_security_scheme=c.OpenIdConnectSecurityScheme(open_id_connect_url="o")
        ),
        "mtls": c.SecurityScheme(mtls_security_scheme=c.MutualTlsSecurityScheme(description="m")),
        **{
            f"oauth{i}": c.SecurityScheme(
                oauth2_security_scheme=c.OAuth2SecurityScheme(flows=f, oauth2_metadata_url="u")
            )
            for i, f in enumerate(flows)
        },
    }
    requirement = c.SecurityRequirement(
        schemes={"key": c.StringList(), "oauth0": c.StringList(list=("read",))}
    )
    return c.AgentCard(
        name="n",
        description="d",
        supported_interfaces=(
            c.AgentInterface(url="http://h/", protocol_binding="JSONRPC", protocol_version="1.0"),
            c.AgentInterface(
                url="h:50051", protocol_binding="GRPC", protocol_version="1.0", tenant="t"
            ),
        ),
        version="1.0.0",
        capabilities=c.AgentCapabilities(
            streaming=False,
            push_notifications=True,
            extensions=(c.AgentExtension(uri="urn:x", required=True, params={"k": [1, "v"]}),),
            extended_agent_card=False,
        ),
        default_input_modes=("text/plain",),
        default_output_modes=("text/plain", "application/json"),
        skills=(
            c.AgentSkill(
                id="s",
                name="S",
                description="sd",
                tags=("t",),
                examples=("e",),
                input_modes=("i",),
                output_modes=("o",),
                security_requirements=(requirement,),
            ),
        ),
        provider=c.AgentProvider(organization="o", url="https://o"),
        documentation_url="",
        security_schemes=schemes,
        security_requirements=(requirement,),
        signatures=(c.AgentCardSignature(protected="p", signature="s", header={"kid": "1"}),),
        icon_url="https://i",
    )


# -- the schemas agree -------------------------------------------------------------------------

_CONVERTED = sorted(
    {
        cls
        for module in ("_models", "_requests", "_card")
        for cls in vars(
            getattr(__import__("a2a_actors.protocol", fromlist=[module]), module)
        ).values()
        if isinstance(cls, type) and issubclass(cls, WireStruct) and cls is not WireStruct
    },
    key=lambda cls: cls.__name__,
)


@pytest.mark.parametrize("cls", _CONVERTED, ids=lambda cls: cls.__name__)
def test_every_struct_has_the_fields_of_its_proto_message(cls: type[WireStruct]) -> None:
    proto = protobuf.proto_type(cls)
    assert proto.DESCRIPTOR.full_name == f"lf.a2a.v1.{cls.__name__}"
    ours = set(msgspec.structs.fields(cls) and (f.name for f in msgspec.structs.fields(cls)))
    assert ours == {f.name for f in proto.DESCRIPTOR.fields}


def test_every_proto_message_of_the_package_is_converted() -> None:
    names = set(a2a_pb2.DESCRIPTOR.message_types_by_name)
    assert names == {cls.__name__ for cls in _CONVERTED}


def test_the_service_has_the_eleven_methods() -> None:
    assert grpc_service.SERVICE == "lf.a2a.v1.A2AService"
    assert list(grpc_service.METHODS) == [
        "SendMessage",
        "SendStreamingMessage",
        "GetTask",
        "ListTasks",
        "CancelTask",
        "SubscribeToTask",
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "GetExtendedAgentCard",
        "DeleteTaskPushNotificationConfig",
    ]
    send = grpc_service.METHODS["SendStreamingMessage"]
    assert send.path == "/lf.a2a.v1.A2AService/SendStreamingMessage"
    assert (send.request, send.response, send.streaming) == (
        SendMessageRequest,
        StreamResponse,
        True,
    )
    delete = grpc_service.METHODS["DeleteTaskPushNotificationConfig"]
    assert delete.response is None
    assert not delete.streaming
    assert [m.name for m in grpc_service.METHODS.values() if m.streaming] == [
        "SendStreamingMessage",
        "SubscribeToTask",
    ]


def test_the_methods_are_those_of_the_generated_servicer() -> None:
    """The server registers METHODS (raw-bytes handlers); they are exactly the RPCs of the
    SDK's generated ``A2AServiceServicer`` base."""
    from a2a.types import a2a_pb2_grpc

    generated = {n for n in vars(a2a_pb2_grpc.A2AServiceServicer) if not n.startswith("_")}
    assert generated == set(grpc_service.METHODS)


def test_a_struct_without_a_proto_message_is_refused() -> None:
    class Unknown(WireStruct, frozen=True):
        x: int = 0

    with pytest.raises(TypeError, match=r"Unknown has no lf\.a2a\.v1 protobuf message"):
        protobuf.to_proto(Unknown())


# -- round trips and golden comparisons --------------------------------------------------------


def _normalized(value: Any) -> Any:
    """JSON builtins with every RFC 3339 timestamp string read as a datetime, and without
    the empty strings, lists and maps of required fields (proto3 cannot tell them from
    absent)."""
    if isinstance(value, dict):
        return {k: _normalized(v) for k, v in value.items() if v not in ("", [], {})}
    if isinstance(value, list):
        return [_normalized(v) for v in value]
    if isinstance(value, str) and len(value) >= 20 and value.endswith("Z") and value[10:11] == "T":
        try:
            return dt.datetime.fromisoformat(value)
        except ValueError:
            return value
    return value


def _check(obj: WireStruct) -> None:
    cls = type(obj)
    message = protobuf.to_proto(obj)
    assert protobuf.from_proto(message, cls) == obj
    assert protobuf.decode(protobuf.encode(obj), cls) == obj
    # Golden 1: our JSON is what the SDK's json_format writes for the converted message.
    theirs = json_format.MessageToDict(
        message, always_print_fields_with_no_presence=cls is ListTasksResponse
    )
    assert _normalized(theirs) == _normalized(json.loads(codec.encode(obj)))
    # Golden 2: the SDK's parser reading our JSON builds the very message we convert to.
    parsed = json_format.Parse(codec.encode(obj), type(message)())
    assert parsed == message
    # And our JSON decoder reading the SDK's JSON gives the object back (with the defaults
    # written out: a required but empty ``parts`` must be there for our decoder; but not
    # ListTasksRequest's, whose written-out TASK_STATE_UNSPECIFIED would be a filter).
    sdk_json = json_format.MessageToJson(
        message, always_print_fields_with_no_presence=cls is not ListTasksRequest
    )
    assert codec.decode(sdk_json, cls) == obj


@settings(max_examples=40)
@given(_objects)
def test_round_trip_and_golden(obj: WireStruct) -> None:
    _check(obj)


def test_round_trip_and_golden_of_a_full_card() -> None:
    _check(_full_card())


def test_a_fixed_task_converts_to_the_expected_proto() -> None:
    """A hand-written expectation, independent of the converter's own schema walk."""
    task = Task(
        id="t",
        context_id="c",
        status=TaskStatus(
            state=TaskState.INPUT_REQUIRED,
            timestamp=dt.datetime(2026, 1, 2, 3, 4, 5, 6000, tzinfo=dt.UTC),
        ),
        artifacts=(Artifact(artifact_id="a", parts=(Part(data={"n": 42, "x": [True, None]}),)),),
        history=(Message(message_id="m", role=Role.USER, parts=(Part(raw=b"\x00\xff"),)),),
    )
    expected = a2a_pb2.Task(
        id="t",
        context_id="c",
        status=a2a_pb2.TaskStatus(
            state=a2a_pb2.TASK_STATE_INPUT_REQUIRED,
            timestamp={"seconds": 1767323045, "nanos": 6_000_000},
        ),
        artifacts=[
            a2a_pb2.Artifact(
                artifact_id="a",
                parts=[a2a_pb2.Part(data={"struct_value": {"n": 42, "x": [True, None]}})],
            )
        ],
        history=[
            a2a_pb2.Message(
                message_id="m", role=a2a_pb2.ROLE_USER, parts=[a2a_pb2.Part(raw=b"\x00\xff")]
            )
        ],
    )
    assert protobuf.to_proto(task) == expected
    back = protobuf.from_proto(expected, Task)
    assert back == task
    part = back.artifacts[0].parts[0]
    assert type(part.data["n"]) is int  # an integral double is an int again


def test_explicit_false_and_zero_survive_where_the_proto_has_presence() -> None:
    caps = c.AgentCapabilities(streaming=False, push_notifications=None)
    message = protobuf.to_proto(caps)
    assert message.HasField("streaming")
    assert not message.HasField("push_notifications")
    assert protobuf.from_proto(message, c.AgentCapabilities) == caps
    request = GetTaskRequest(id="t", history_length=0)
    assert protobuf.from_proto(protobuf.to_proto(request), GetTaskRequest).history_length == 0
    assert (
        protobuf.from_proto(a2a_pb2.GetTaskRequest(id="t"), GetTaskRequest).history_length is None
    )


def test_an_unspecified_status_filter_is_no_filter() -> None:
    request = protobuf.from_proto(
        a2a_pb2.ListTasksRequest(status=a2a_pb2.TASK_STATE_UNSPECIFIED), ListTasksRequest
    )
    assert request.status is None


# -- invalid content ---------------------------------------------------------------------------


def _invalid(message: Any, cls: Any) -> InvalidParamsError:
    with pytest.raises(InvalidParamsError) as info:
        protobuf.from_proto(message, cls)
    return info.value


@pytest.mark.parametrize(
    ("message", "field", "text"),
    [
        (a2a_pb2.SendMessageRequest(), "message", "missing required field `message`"),
        (
            a2a_pb2.SendMessageRequest(
                message={"message_id": "m", "role": 7, "parts": [{"text": "x"}]}
            ),
            "message.role",
            "7 is not a value of lf.a2a.v1.Role",
        ),
        (
            a2a_pb2.SendMessageRequest(message={"message_id": "m", "role": 1, "parts": [{}]}),
            "message.parts.0",
            "Part must hold exactly one of text, raw, url, data",
        ),
        (
            a2a_pb2.SendMessageRequest(
                message={"message_id": "m", "role": 0, "parts": [{"text": ""}]}
            ),
            "message",
            "role must be ROLE_USER or ROLE_AGENT",
        ),
        (
            a2a_pb2.SendMessageRequest(message={"message_id": "m", "role": 1}),
            "message",
            "parts must not be empty",
        ),
        (a2a_pb2.ListTasksRequest(page_size=0), "page_size", "Expected `int` >= 1"),
        (a2a_pb2.ListTasksRequest(page_size=101), "page_size", "Expected `int` <= 100"),
        (a2a_pb2.GetTaskRequest(history_length=-1), "history_length", "Expected `int` >= 0"),
        (
            a2a_pb2.ListTasksRequest(status_timestamp_after={"seconds": -(10**15)}),
            "status_timestamp_after",
            "timestamp out of range",
        ),
        (
            a2a_pb2.ListTasksRequest(status=cast(Any, 42)),
            "status",
            "42 is not a value of lf.a2a.v1.TaskState",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_invalid_content_is_invalid_params_with_the_proto_path(
    message: Any, field: str, text: str
) -> None:
    cls = {
        "SendMessageRequest": SendMessageRequest,
        "ListTasksRequest": ListTasksRequest,
        "GetTaskRequest": GetTaskRequest,
    }[type(message).__name__]
    error = _invalid(message, cls)
    assert error.field == field
    assert text in error.message
    status = grpc_status.error_to_status(error)
    assert status.code == code_pb2.INVALID_ARGUMENT
    bad = error_details_pb2.BadRequest()
    assert status.details[1].Unpack(bad)
    assert bad.field_violations[0].field == field


def test_a_wrong_message_type_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"expected lf\.a2a\.v1\.Task, got Message"):
        protobuf.from_proto(a2a_pb2.Message(), Task)


def test_malformed_bytes_are_invalid_params() -> None:
    with pytest.raises(
        InvalidParamsError,
        match=r"^malformed protobuf: not a valid lf\.a2a\.v1\.SendMessageRequest",
    ):
        protobuf.decode(b"\x0a\xff\xff\xff", SendMessageRequest)


@given(st.binary(max_size=64), st.sampled_from(sorted(grpc_service.METHODS)))
def test_fuzz_decode_gives_a_request_or_invalid_params(data: bytes, method: str) -> None:
    with contextlib.suppress(InvalidParamsError):  # anything else fails the test
        protobuf.decode(data, grpc_service.METHODS[method].request)


# -- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", list(ERROR_TABLE), ids=[cls.__name__ for cls in ERROR_TABLE])
def test_every_error_becomes_its_status_and_back(cls: type[A2AError]) -> None:
    error = cls("why", metadata={"taskId": "t"})
    status = grpc_status.error_to_status(error)
    assert (
        status.code == code_pb2.Code.Value(error.spec.grpc_status) == grpc_status.status_code(error)
    )
    assert status.message == "why"
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    assert (info.reason, info.domain, dict(info.metadata)) == (
        error.spec.reason,
        "a2a-protocol.org",
        {"taskId": "t"},
    )
    back = grpc_status.error_from_status(status_pb2.Status.FromString(status.SerializeToString()))
    expected = InvalidAgentResponseError if cls is IllegalTransitionError else cls
    assert type(back) is expected
    assert back.remote
    assert back.message == "why"
    assert back.metadata == {"taskId": "t"}
    assert back.data is not None
    assert back.data[0]["reason"] == error.spec.reason


def test_the_sdk_knows_the_a2a_reasons() -> None:
    """The SDK's gRPC client maps ErrorInfo reasons to its error classes: ours match (our
    own codes, -32050 and after, are not A2A's)."""
    for cls, spec in ERROR_TABLE.items():
        if -32049 <= spec.code <= -32001 and cls is not IllegalTransitionError:
            assert A2A_REASON_TO_ERROR[spec.reason].__name__ == cls.__name__


def test_server_busy_carries_retry_info() -> None:
    status = grpc_status.error_to_status(ServerBusyError(retry_after=2.5))
    assert status.code == code_pb2.RESOURCE_EXHAUSTED
    retry = error_details_pb2.RetryInfo()
    assert status.details[-1].Unpack(retry)
    assert retry.retry_delay.ToTimedelta() == dt.timedelta(seconds=2.5)
    back = grpc_status.error_from_status(status)
    assert isinstance(back, ServerBusyError)
    assert back.retry_after == 2.5


def test_a_remote_error_with_odd_details_still_converts() -> None:
    data = [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "TASK_NOT_FOUND",
            "domain": "a2a-protocol.org",
            "metadata": {"errors": [{"field": "x"}], "taskId": "t"},
        },
        {"@type": "type.example.com/unknown.Detail", "x": 1},
        "not a dict",
    ]
    status = grpc_status.error_to_status(TaskNotFoundError("gone", data=data, remote=True))
    assert [d.type_url for d in status.details] == ["type.googleapis.com/google.rpc.ErrorInfo"]
    info = error_details_pb2.ErrorInfo()
    status.details[0].Unpack(info)
    assert json.loads(info.metadata["errors"]) == [{"field": "x"}]


@pytest.mark.parametrize(
    ("code", "cls"),
    [
        (code_pb2.UNAUTHENTICATED, UnauthenticatedError),
        (code_pb2.RESOURCE_EXHAUSTED, ServerBusyError),
        (code_pb2.INVALID_ARGUMENT, InvalidParamsError),
        (code_pb2.UNIMPLEMENTED, MethodNotFoundError),
        (code_pb2.INTERNAL, A2AError),
    ],
)
def test_a_status_without_error_info_maps_by_code(code: int, cls: type[A2AError]) -> None:
    error = grpc_status.error_from_status(status_pb2.Status(code=code, message="m"))
    assert type(error) is cls
    assert (error.message, error.remote, error.data) == ("m", True, [])
    if cls is A2AError:
        assert error.code == InternalError.spec.code


def test_error_info_of_another_domain_is_not_ours() -> None:
    status = status_pb2.Status(code=code_pb2.NOT_FOUND, message="m")
    status.details.add().Pack(error_details_pb2.ErrorInfo(reason="TASK_NOT_FOUND", domain="x"))
    assert type(grpc_status.error_from_status(status)) is A2AError


# -- lazily imported ---------------------------------------------------------------------------


def test_the_json_paths_never_import_protobuf_or_grpc() -> None:
    script = """
import asyncio, json, sys
import a2a_actors, a2a_actors.cli, a2a_actors.client, a2a_actors.server._cli.serve
from a2a_actors import A2AClient, Agent, serve
from a2a_actors.server import ServerConfig, create_app

async def echo(ctx):
    await ctx.complete(ctx.message.text)

async def main():
    app = create_app(echo, ServerConfig())
    async with app.test_app() as test:
        client = test.test_client()
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
            "messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}}
        answer = await client.post("/", json=body, headers={"A2A-Version": "1.0"})
        task = (await answer.get_json())["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        answer = await client.post("/rest/message:send", json=body["params"],
                                   headers={"A2A-Version": "1.0"})
        assert answer.status_code == 200, answer.status_code

asyncio.run(main())
print(json.dumps(sorted(sys.modules)))
"""
    out = subprocess.run(
        [sys.executable, "-I", "-c", script],
        capture_output=True,
        text=True,
        cwd=ROOT,
        # OpenTelemetry's OTLP exporter is protobuf: off, as it is unless configured
        env={k: v for k, v in os.environ.items() if not k.startswith("OTEL_")},
    )
    assert out.returncode == 0, out.stderr
    loaded = json.loads(out.stdout)
    assert "a2a_actors.server._http.asgi" in loaded  # the import really happened
    leaked = [
        m
        for m in loaded
        if m.startswith(("google.protobuf", "grpc", "a2a.types", "a2a_actors.protocol._protobuf"))
        or m in ("a2a_actors.protocol._grpc_service", "a2a_actors.protocol._grpc_status")
        or (m.startswith("a2a_actors.server._grpc.") and m != "a2a_actors.server._config.grpc")
    ]
    assert leaked == []


@pytest.mark.parametrize("module", ["protobuf", "grpc_service", "grpc_status"])
def test_the_grpc_wire_modules_themselves_import_no_io(module: str) -> None:
    """Importing the SDK's package loads anyio (its ``__init__``); our modules do no I/O."""
    tree = ast.parse((ROOT / f"a2a_actors/protocol/_{module}.py").read_text())
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        (node.module or "").split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level == 0
    }
    assert imported <= {
        "__future__",
        "datetime",
        "enum",
        "json",
        "re",
        "collections",
        "dataclasses",
        "typing",
        "msgspec",
        "a2a",
        "google",
        "a2a_actors",  # the protocol's own modules (tests/protocol/test_purity.py)
    }
    assert not any(isinstance(n, ast.AsyncFunctionDef | ast.Await) for n in ast.walk(tree))
