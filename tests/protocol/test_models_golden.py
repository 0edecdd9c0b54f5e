"""Golden round trips of every A2A 1.0 wire type against the official SDK (a2a-sdk 1.3).

Each case builds the object with the SDK's protobuf classes, serialises it with the SDK's own
serializer (``google.protobuf.json_format``, as the SDK's routes do), decodes that JSON into
our Struct, re-encodes it, and requires (1) JSON-equality with the SDK's output and (2) that
the SDK's *strict* parser (no ``ignore_unknown_fields``) reads our bytes back into an object
equal to the original. Numbers inside ``google.protobuf.Struct``/``Value`` come out of the SDK
as doubles (``1.0``); parsed with :func:`json.loads` they compare equal to ints, so no number
normalisation is needed. Timestamps are compared as instants: the SDK writes 0/3/6/9
fractional digits and we write 0 or 6, both valid ProtoJSON.

``UNSPECIFIED`` enum values cannot round-trip where the field is REQUIRED
(``TaskStatus.state``, ``Message.role``): ProtoJSON omits the zero value, and our decoder
then reports the required field as missing, as the SDK server does (-32602). Those cases
are asserted as rejections below.
"""

from __future__ import annotations

import datetime as dt
import importlib
import json
import re
from collections.abc import Callable
from typing import Any, TypeVar

import msgspec
import pytest
from a2a import types as sdk
from msgspec import inspect as mi

from a2a_actors.protocol import (
    _card as card,
    _jsonrpc as jsonrpc,
    _models as models,
    _requests as requests,
    codec,
)
from a2a_actors.protocol._card import AgentCard
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
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    SendMessageRequest,
    SendMessageResponse,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
)
from tests.null_fields import nulled, plain

# google.protobuf ships no type stubs in this environment; its API is used untyped.
json_format: Any = importlib.import_module("google.protobuf.json_format")

T = TypeVar("T")
_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")


def _instants(value: Any) -> Any:
    """Replace RFC 3339 strings by aware datetimes, so precision spellings compare equal."""
    if isinstance(value, dict):
        return {k: _instants(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_instants(v) for v in value]
    if isinstance(value, str) and _TIMESTAMP.match(value):
        return dt.datetime.fromisoformat(value)
    return value


def golden(obj: Any, ours: type[T]) -> T:
    """SDK → SDK JSON → our Struct → our JSON: JSON-equal, and strictly parsable back."""
    theirs = json_format.MessageToJson(obj)
    decoded = codec.decode(theirs.encode(), ours)
    out = codec.encode(decoded)
    assert _instants(json.loads(out)) == _instants(json.loads(theirs))
    reparsed = json_format.Parse(out, type(obj)())  # strict: unknown fields would raise
    assert reparsed == obj
    return decoded


# -- SDK object builders ---------------------------------------------------------------------


def ts(text: str) -> Any:
    stamp = sdk.TaskStatus().timestamp.__class__()
    stamp.FromJsonString(text)
    return stamp


def struct(value: dict[str, Any]) -> Any:
    holder = sdk.Message()
    json_format.ParseDict(value, holder.metadata)
    return holder.metadata


def data_part(value: Any, **kw: Any) -> Any:
    part = sdk.Part(**kw)
    json_format.ParseDict(value, part.data)
    return part


META = {"snake_key": "v", "camelKey": 1, "nested": {"message_id": [1.5, None, True, "s"]}}

PARTS: dict[str, Any] = {
    "text": sdk.Part(
        text="hello", media_type="text/plain", filename="hello.txt", metadata=struct(META)
    ),
    "text-empty": sdk.Part(text=""),
    "raw": sdk.Part(
        raw=bytes(range(256)), filename="all.bin", media_type="application/octet-stream"
    ),
    "raw-empty": sdk.Part(raw=b""),
    "url": sdk.Part(
        url="https://files.example.com/a.pdf", filename="a.pdf", media_type="application/pdf"
    ),
    "data-object": data_part(
        {"any": "json", "context_id": {"task_id": [1, 2.5]}}, media_type="application/json"
    ),
    "data-array": data_part([1, "two", None, False, {"k": []}]),
    "data-string": data_part("plain"),
    "data-number-int": data_part(42),
    "data-number-float": data_part(-3.25),
    "data-bool-true": data_part(True),
    "data-bool-false": data_part(False),
    "data-null": data_part(None),
}


def message(role: Any = sdk.Role.ROLE_USER, message_id: str = "m-1") -> Any:
    return sdk.Message(
        message_id=message_id,
        context_id="ctx-1",
        task_id="task-1",
        role=role,
        parts=[PARTS["text"], PARTS["data-object"]],
        metadata=struct(META),
        extensions=["https://example.com/ext/geo/v1"],
        reference_task_ids=["task-0", "task-00"],
    )


def status(state: Any = sdk.TaskState.TASK_STATE_WORKING) -> Any:
    return sdk.TaskStatus(
        state=state,
        message=message(sdk.Role.ROLE_AGENT, "m-status"),
        timestamp=ts("2026-11-30T03:13:44.077745Z"),
    )


def artifact(artifact_id: str = "art-1") -> Any:
    return sdk.Artifact(
        artifact_id=artifact_id,
        name="Report",
        description="The report",
        parts=[PARTS["text"], PARTS["raw"], PARTS["url"], PARTS["data-array"]],
        metadata=struct({"k": "v"}),
        extensions=["https://example.com/ext/a/v1"],
    )


def task(state: Any = sdk.TaskState.TASK_STATE_COMPLETED) -> Any:
    return sdk.Task(
        id="task-1",
        context_id="ctx-1",
        status=status(state),
        artifacts=[artifact("art-1"), artifact("art-2")],
        history=[message(), message(sdk.Role.ROLE_AGENT, "m-2")],
        metadata=struct({"priority": 3, "tags": ["a", "b"]}),
    )


def status_update() -> Any:
    return sdk.TaskStatusUpdateEvent(
        task_id="task-1", context_id="ctx-1", status=status(), metadata=struct({"seq": 7})
    )


def artifact_update(append: bool = True, last_chunk: bool = True) -> Any:
    return sdk.TaskArtifactUpdateEvent(
        task_id="task-1",
        context_id="ctx-1",
        artifact=artifact(),
        append=append,
        last_chunk=last_chunk,
        metadata=struct({"chunk": 2}),
    )


def push_config(task_id: str = "task-1") -> Any:
    return sdk.TaskPushNotificationConfig(
        tenant="acme",
        id="cfg-2",
        task_id=task_id,
        url="https://client.example.com/hook",
        token="tok-2",
        authentication=sdk.AuthenticationInfo(scheme="Bearer", credentials="secret"),
    )


def send_request(history_length: int = 2, return_immediately: bool = True) -> Any:
    return sdk.SendMessageRequest(
        tenant="acme",
        message=message(),
        configuration=sdk.SendMessageConfiguration(
            accepted_output_modes=["text/plain", "application/json"],
            task_push_notification_config=push_config(task_id=""),
            history_length=history_length,
            return_immediately=return_immediately,
        ),
        metadata=struct({"trace": "abc"}),
    )


def scheme(**member: Any) -> Any:
    return sdk.SecurityScheme(**member)


def oauth(**flow: Any) -> Any:
    return scheme(
        oauth2_security_scheme=sdk.OAuth2SecurityScheme(
            description="oauth",
            flows=sdk.OAuthFlows(**flow),
            oauth2_metadata_url="https://auth.example.com/.well-known/oauth-authorization-server",
        )
    )


def requirement(**schemes: list[str]) -> Any:
    return sdk.SecurityRequirement(
        schemes={name: sdk.StringList(list=scopes) for name, scopes in schemes.items()}
    )


def agent_card() -> Any:
    scopes = {"read": "Read", "write": "Write"}
    return sdk.AgentCard(
        name="Weather",
        description="Forecasts",
        supported_interfaces=[
            sdk.AgentInterface(
                url="https://w.example.com/a2a", protocol_binding="JSONRPC", protocol_version="1.0"
            ),
            sdk.AgentInterface(
                url="https://w.example.com/rest",
                protocol_binding="HTTP+JSON",
                protocol_version="1.0",
                tenant="acme",
            ),
            sdk.AgentInterface(
                url="w.example.com:443", protocol_binding="GRPC", protocol_version="1.0"
            ),
        ],
        provider=sdk.AgentProvider(organization="Example Org", url="https://example.com"),
        version="1.2.3",
        documentation_url="https://docs.example.com",
        capabilities=sdk.AgentCapabilities(
            streaming=True,
            push_notifications=False,
            extended_agent_card=True,
            extensions=[
                sdk.AgentExtension(
                    uri="https://example.com/ext/geo/v1",
                    description="geo",
                    required=True,
                    params=struct({"max_radius_km": 10, "units": ["km"]}),
                ),
                sdk.AgentExtension(uri="https://example.com/ext/plain/v1"),
            ],
        ),
        security_schemes={
            "apikey": scheme(
                api_key_security_scheme=sdk.APIKeySecurityScheme(
                    location="header", name="X-API-Key", description="key"
                )
            ),
            "bearer": scheme(
                http_auth_security_scheme=sdk.HTTPAuthSecurityScheme(
                    scheme="Bearer", bearer_format="JWT", description="jwt"
                )
            ),
            "oauth-ac": oauth(
                authorization_code=sdk.AuthorizationCodeOAuthFlow(
                    authorization_url="https://auth.example.com/authorize",
                    token_url="https://auth.example.com/token",
                    refresh_url="https://auth.example.com/refresh",
                    scopes=scopes,
                    pkce_required=True,
                )
            ),
            "oauth-cc": oauth(
                client_credentials=sdk.ClientCredentialsOAuthFlow(
                    token_url="https://auth.example.com/token",
                    refresh_url="https://auth.example.com/refresh",
                    scopes=scopes,
                )
            ),
            "oauth-dc": oauth(
                device_code=sdk.DeviceCodeOAuthFlow(
                    device_authorization_url="https://auth.example.com/device",
                    token_url="https://auth.example.com/token",
                    refresh_url="https://auth.example.com/refresh",
                    scopes=scopes,
                )
            ),
            "oauth-implicit": oauth(
                implicit=sdk.ImplicitOAuthFlow(
                    authorization_url="https://auth.example.com/authorize",
                    refresh_url="https://auth.example.com/refresh",
                    scopes=scopes,
                )
            ),
            "oauth-password": oauth(
                password=sdk.PasswordOAuthFlow(
                    token_url="https://auth.example.com/token",
                    refresh_url="https://auth.example.com/refresh",
                    scopes=scopes,
                )
            ),
            "oidc": scheme(
                open_id_connect_security_scheme=sdk.OpenIdConnectSecurityScheme(
                    open_id_connect_url="https://accounts.example.com/.well-known/openid-configuration",
                    description="oidc",
                )
            ),
            "mtls": scheme(mtls_security_scheme=sdk.MutualTlsSecurityScheme(description="cert")),
            "mtls-bare": scheme(mtls_security_scheme=sdk.MutualTlsSecurityScheme()),
        },
        security_requirements=[requirement(bearer=[]), requirement(**{"oauth-cc": ["read"]})],
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain", "application/json"],
        skills=[
            sdk.AgentSkill(
                id="forecast",
                name="Forecast",
                description="Weather forecast",
                tags=["weather", "forecast"],
                examples=["Rain in Paris?"],
                input_modes=["text/plain"],
                output_modes=["application/json"],
                security_requirements=[requirement(apikey=[], mtls=[])],
            ),
            sdk.AgentSkill(id="plain", name="Plain", description="No extras", tags=["misc"]),
        ],
        signatures=[
            sdk.AgentCardSignature(
                protected="eyJhbGciOiJFUzI1NiJ9",
                signature="c2ln",
                header=struct({"kid": "key-1"}),
            ),
            sdk.AgentCardSignature(protected="eyJhbGciOiJSUzI1NiJ9", signature="c2lnMg"),
        ],
        icon_url="https://example.com/icon.png",
    )


# -- the golden table ------------------------------------------------------------------------

Case = tuple[str, Callable[[], Any], type[Any]]
ACTIVE_STATES: list[Any] = [
    v for _, v in sdk.TaskState.items() if v != sdk.TaskState.TASK_STATE_UNSPECIFIED
]
ROLES: list[Any] = [sdk.Role.ROLE_USER, sdk.Role.ROLE_AGENT]

CASES: list[Case] = [
    *[(f"part-{name}", lambda p=p: p, Part) for name, p in PARTS.items()],
    *[(f"message-{sdk.Role.Name(r)}", lambda r=r: message(r), Message) for r in ROLES],
    *[
        (f"status-{sdk.TaskState.Name(s)}", lambda s=s: status(s), TaskStatus)
        for s in ACTIVE_STATES
    ],
    *[(f"task-{sdk.TaskState.Name(s)}", lambda s=s: task(s), Task) for s in ACTIVE_STATES],
    ("status-bare", lambda: sdk.TaskStatus(state=sdk.TaskState.TASK_STATE_SUBMITTED), TaskStatus),
    (
        "task-bare",
        lambda: sdk.Task(id="t", status=sdk.TaskStatus(state=sdk.TaskState.TASK_STATE_SUBMITTED)),
        Task,
    ),
    ("artifact", artifact, Artifact),
    ("status-update", status_update, TaskStatusUpdateEvent),
    *[
        (
            f"artifact-update-append={a}-last={lc}",
            lambda a=a, lc=lc: artifact_update(a, lc),
            TaskArtifactUpdateEvent,
        )
        for a in (True, False)
        for lc in (True, False)
    ],
    ("stream-task", lambda: sdk.StreamResponse(task=task()), StreamResponse),
    (
        "stream-message",
        lambda: sdk.StreamResponse(message=message(sdk.Role.ROLE_AGENT)),
        StreamResponse,
    ),
    ("stream-status", lambda: sdk.StreamResponse(status_update=status_update()), StreamResponse),
    (
        "stream-artifact",
        lambda: sdk.StreamResponse(artifact_update=artifact_update()),
        StreamResponse,
    ),
    ("send-request-full", send_request, SendMessageRequest),
    ("send-request-history-0", lambda: send_request(0, False), SendMessageRequest),
    ("send-request-bare", lambda: sdk.SendMessageRequest(message=message()), SendMessageRequest),
    ("send-response-task", lambda: sdk.SendMessageResponse(task=task()), SendMessageResponse),
    (
        "send-response-message",
        lambda: sdk.SendMessageResponse(message=message(sdk.Role.ROLE_AGENT)),
        SendMessageResponse,
    ),
    (
        "get-task",
        lambda: sdk.GetTaskRequest(tenant="acme", id="task-1", history_length=10),
        GetTaskRequest,
    ),
    (
        "get-task-history-0",
        lambda: sdk.GetTaskRequest(id="task-1", history_length=0),
        GetTaskRequest,
    ),
    (
        "list-tasks",
        lambda: sdk.ListTasksRequest(
            tenant="acme",
            context_id="ctx-1",
            status=sdk.TaskState.TASK_STATE_WORKING,
            page_size=10,
            page_token="tok",
            history_length=0,
            status_timestamp_after=ts("2026-01-01T00:00:00Z"),
            include_artifacts=False,
        ),
        ListTasksRequest,
    ),
    ("list-tasks-empty", sdk.ListTasksRequest, ListTasksRequest),
    (
        "cancel-task",
        lambda: sdk.CancelTaskRequest(tenant="acme", id="task-1", metadata=struct({"why": "user"})),
        CancelTaskRequest,
    ),
    (
        "subscribe",
        lambda: sdk.SubscribeToTaskRequest(tenant="acme", id="task-1"),
        SubscribeToTaskRequest,
    ),
    ("push-config", push_config, TaskPushNotificationConfig),
    (
        "push-config-bare",
        lambda: sdk.TaskPushNotificationConfig(url="https://h"),
        TaskPushNotificationConfig,
    ),
    (
        "get-push",
        lambda: sdk.GetTaskPushNotificationConfigRequest(
            tenant="acme", task_id="task-1", id="cfg-2"
        ),
        GetTaskPushNotificationConfigRequest,
    ),
    (
        "list-push",
        lambda: sdk.ListTaskPushNotificationConfigsRequest(
            tenant="acme", task_id="task-1", page_size=5, page_token="p"
        ),
        ListTaskPushNotificationConfigsRequest,
    ),
    (
        "list-push-response",
        lambda: sdk.ListTaskPushNotificationConfigsResponse(
            configs=[push_config(), push_config("task-2")], next_page_token="n"
        ),
        ListTaskPushNotificationConfigsResponse,
    ),
    (
        "list-push-response-empty",
        sdk.ListTaskPushNotificationConfigsResponse,
        ListTaskPushNotificationConfigsResponse,
    ),
    (
        "delete-push",
        lambda: sdk.DeleteTaskPushNotificationConfigRequest(
            tenant="acme", task_id="task-1", id="cfg-2"
        ),
        DeleteTaskPushNotificationConfigRequest,
    ),
    (
        "extended-card-request",
        lambda: sdk.GetExtendedAgentCardRequest(tenant="acme"),
        GetExtendedAgentCardRequest,
    ),
    ("extended-card-request-empty", sdk.GetExtendedAgentCardRequest, GetExtendedAgentCardRequest),
    ("agent-card", agent_card, AgentCard),
]


@pytest.mark.parametrize(("build", "ours"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_golden_round_trip(build: Callable[[], Any], ours: type[Any]) -> None:
    decoded = golden(build(), ours)
    assert isinstance(decoded, ours)


def test_every_method_has_golden_params_and_result() -> None:
    covered = {c[2] for c in CASES} | {ListTasksResponse}  # ListTasksResponse: see below
    for spec in jsonrpc.METHODS.values():
        assert spec.params in covered, spec.name
        assert spec.result is None or spec.result in covered, spec.name


def test_decoded_values_are_typed() -> None:
    """Spot checks that decoding produced our types, not just JSON-equal builtins."""
    t = golden(task(sdk.TaskState.TASK_STATE_INPUT_REQUIRED), Task)
    assert t.status.state is TaskState.INPUT_REQUIRED
    assert t.status.timestamp == dt.datetime(2026, 11, 30, 3, 13, 44, 77745, tzinfo=dt.UTC)
    assert t.history[1].role is Role.AGENT
    assert t.artifacts[0].parts[1].raw == bytes(range(256))
    assert t.artifacts[0].parts[3].data == [1, "two", None, False, {"k": []}]
    assert [p.kind for p in t.artifacts[0].parts] == ["text", "raw", "url", "data"]
    assert t.metadata == {"priority": 3, "tags": ["a", "b"]}
    null = golden(PARTS["data-null"], Part)
    assert null.kind == "data"
    assert null.data is None
    req = golden(send_request(0, False), SendMessageRequest)
    assert req.configuration is not None
    assert req.configuration.history_length == 0  # explicit presence kept
    assert req.configuration.task_push_notification_config is not None
    auth = req.configuration.task_push_notification_config.authentication
    assert auth == requests.AuthenticationInfo(scheme="Bearer", credentials="secret")
    listed = golden(sdk.ListTasksRequest(include_artifacts=False), ListTasksRequest)
    assert listed.include_artifacts is False


def test_list_tasks_response_as_the_sdk_serialises_it() -> None:
    """The SDK prints every no-presence field in ListTasks results; we print only the four
    REQUIRED top-level ones, and the SDK's strict parser reads ours back unchanged."""
    obj = sdk.ListTasksResponse(
        tasks=[task(), task()], next_page_token="", page_size=2, total_size=2
    )
    theirs = json_format.MessageToDict(obj, always_print_fields_with_no_presence=True)
    assert theirs["tasks"][0]["history"][0]["parts"][0]["filename"] == "hello.txt"
    assert theirs["tasks"][0]["artifacts"][0]["parts"][1]["filename"] == "all.bin"
    assert theirs["tasks"][0]["status"]["message"]["parts"][1]["filename"] == ""
    decoded = codec.decode(json.dumps(theirs), ListTasksResponse)
    ours = json.loads(codec.encode(decoded))
    expected = json.loads(json_format.MessageToJson(obj))
    assert "nextPageToken" not in expected  # plain ProtoJSON drops "" ...
    expected["nextPageToken"] = ""  # ... but the field is REQUIRED, so we always send it
    assert _instants(ours) == _instants(expected)
    assert json_format.Parse(codec.encode(decoded), sdk.ListTasksResponse()) == obj


def test_list_tasks_response_plain_protojson_last_page_decodes() -> None:
    """Default ProtoJSON omits ``[]``, ``""`` and ``0``: an empty last page is ``{}``."""
    empty = json_format.MessageToJson(sdk.ListTasksResponse(page_size=50))
    assert json.loads(empty) == {"pageSize": 50}
    decoded = codec.decode(empty, ListTasksResponse)
    assert decoded == ListTasksResponse(tasks=(), next_page_token="", page_size=50, total_size=0)
    assert json.loads(codec.encode(decoded)) == {
        "tasks": [],
        "nextPageToken": "",
        "pageSize": 50,
        "totalSize": 0,
    }


def test_delete_push_config_result_is_null_or_empty() -> None:
    assert jsonrpc.encode_result(1, None) == b'{"jsonrpc":"2.0","id":1,"result":null}'
    spec = jsonrpc.METHODS["DeleteTaskPushNotificationConfig"]
    assert spec.result is None
    for body in (
        b'{"jsonrpc":"2.0","id":1,"result":null}',
        b'{"jsonrpc":"2.0","id":1,"result":{}}',
    ):
        assert jsonrpc.decode_response(body, spec.result) is None


# -- schema parity ---------------------------------------------------------------------------

OURS_BY_NAME: dict[str, type[Any]] = {
    name: obj
    for module in (models, requests, card)
    for name, obj in vars(module).items()
    if isinstance(obj, type) and issubclass(obj, models.WireStruct) and obj is not models.WireStruct
}
SDK_MESSAGES = sorted(
    name
    for name in dir(sdk)
    if hasattr(getattr(sdk, name), "DESCRIPTOR")
    and hasattr(getattr(sdk, name).DESCRIPTOR, "fields")
)


def test_every_sdk_message_has_a_struct() -> None:
    assert len(SDK_MESSAGES) >= 40
    assert set(SDK_MESSAGES) <= set(OURS_BY_NAME)


@pytest.mark.parametrize("name", SDK_MESSAGES)
def test_field_names_match_the_proto(name: str) -> None:
    descriptor = getattr(sdk, name).DESCRIPTOR
    info = mi.type_info(OURS_BY_NAME[name])
    assert isinstance(info, mi.StructType)
    assert {f.encode_name for f in info.fields} == {f.json_name for f in descriptor.fields}


# -- enums -----------------------------------------------------------------------------------


@pytest.mark.parametrize("state", ACTIVE_STATES, ids=sdk.TaskState.Name)
def test_every_task_state(state: Any) -> None:
    decoded = golden(sdk.TaskStatus(state=state), TaskStatus)
    assert decoded.state.value == sdk.TaskState.Name(state)
    as_int = codec.decode(b'{"state":%d}' % state, TaskStatus)
    assert as_int == decoded


@pytest.mark.parametrize("role", ROLES, ids=sdk.Role.Name)
def test_every_role(role: Any) -> None:
    decoded = golden(sdk.Message(message_id="m", role=role, parts=[sdk.Part(text="x")]), Message)
    assert decoded.role.value == sdk.Role.Name(role)


def test_unspecified_state_is_rejected_where_required() -> None:
    theirs = json_format.MessageToJson(sdk.TaskStatus(state=sdk.TaskState.TASK_STATE_UNSPECIFIED))
    assert json.loads(theirs) == {}
    with pytest.raises(msgspec.ValidationError, match=r"^Object missing required field `state`$"):
        codec.decode(theirs, TaskStatus)


def test_unspecified_role_is_rejected() -> None:
    theirs = json_format.MessageToJson(sdk.Message(message_id="m", parts=[sdk.Part(text="x")]))
    with pytest.raises(msgspec.ValidationError, match=r"^Object missing required field `role`$"):
        codec.decode(theirs, Message)
    explicit = b'{"messageId":"m","role":"ROLE_UNSPECIFIED","parts":[{"text":"x"}]}'
    with pytest.raises(msgspec.ValidationError, match=r"^role must be ROLE_USER or ROLE_AGENT$"):
        codec.decode(explicit, Message)
    with pytest.raises(msgspec.ValidationError, match=r"^role must be ROLE_USER or ROLE_AGENT$"):
        codec.decode(explicit.replace(b'"ROLE_UNSPECIFIED"', b"0"), Message)


def test_unspecified_state_filter_round_trips() -> None:
    """``ListTasksRequest.status`` is optional: the zero value is omitted and stays unset."""
    decoded = golden(
        sdk.ListTasksRequest(status=sdk.TaskState.TASK_STATE_UNSPECIFIED), ListTasksRequest
    )
    assert decoded.status is None


def test_an_explicit_unspecified_state_filter_is_no_filter() -> None:
    """Written out (``"TASK_STATE_UNSPECIFIED"`` or ``0``), the zero value still means no
    filter, as on the gRPC binding, where it cannot be told from an absent one."""
    for spelling in (b'"TASK_STATE_UNSPECIFIED"', b"0"):
        decoded = codec.decode(b'{"status":' + spelling + b"}", ListTasksRequest)
        assert decoded.status is None
        assert codec.encode(decoded) == b"{}"


def test_an_artifact_with_no_parts_is_read_as_the_sdk_writes_it() -> None:
    """ProtoJSON leaves an empty repeated field out: the SDK's artifact with no parts has
    no ``parts`` key, and we read it (and write it) the same way."""
    theirs = json_format.MessageToJson(sdk.Artifact(artifact_id="a", name="empty")).encode()
    assert b"parts" not in theirs
    decoded = codec.decode(theirs, Artifact)
    assert decoded == Artifact(artifact_id="a", name="empty")
    assert json.loads(codec.encode(decoded)) == json.loads(theirs)


# -- alternative spellings -------------------------------------------------------------------

SPELLINGS: list[tuple[str, Callable[[], Any], type[Any], tuple[str, ...]]] = [
    (
        "send",
        lambda: send_request(3),
        SendMessageRequest,
        (
            "message_id",
            "context_id",
            "task_id",
            "history_length",
            "reference_task_ids",
            "return_immediately",
        ),
    ),
    (
        "task",
        lambda: task(sdk.TaskState.TASK_STATE_AUTH_REQUIRED),
        Task,
        ("context_id", "artifact_id", "media_type"),
    ),
    (
        "list-tasks",
        lambda: sdk.ListTasksRequest(
            page_size=7,
            include_artifacts=True,
            history_length=1,
            status=sdk.TaskState.TASK_STATE_WORKING,
        ),
        ListTasksRequest,
        ("page_size", "include_artifacts", "history_length"),
    ),
    (
        "list-push",
        lambda: sdk.ListTaskPushNotificationConfigsRequest(task_id="t", page_size=3),
        ListTaskPushNotificationConfigsRequest,
        ("task_id", "page_size"),
    ),
    (
        "card",
        agent_card,
        AgentCard,
        (
            "supported_interfaces",
            "security_schemes",
            "api_key_security_scheme",
            "device_authorization_url",
        ),
    ),
]


@pytest.mark.parametrize(
    ("build", "ours", "keys"), [s[1:] for s in SPELLINGS], ids=[s[0] for s in SPELLINGS]
)
def test_snake_case_and_integer_enums_decode_the_same(
    build: Callable[[], Any], ours: type[Any], keys: tuple[str, ...]
) -> None:
    obj = build()
    canonical = codec.decode(json_format.MessageToJson(obj), ours)
    proto_names = json_format.MessageToJson(
        obj, preserving_proto_field_name=True, use_integers_for_enums=True
    )
    for key in keys:  # the alternative spelling is really exercised
        assert f'"{key}"' in proto_names
    assert codec.decode(proto_names, ours) == canonical


def test_keys_inside_metadata_and_data_are_never_rewritten() -> None:
    obj = message()
    snake = json_format.MessageToJson(obj, preserving_proto_field_name=True)
    assert '"message_id"' in snake
    decoded = codec.decode(snake, Message)
    assert decoded.metadata == META
    assert decoded.parts[1].data == {"any": "json", "context_id": {"task_id": [1, 2.5]}}
    out = json.loads(codec.encode(decoded))
    assert out["messageId"] == "m-1"
    assert "message_id" not in out
    assert out["metadata"]["nested"] == {"message_id": [1.5, None, True, "s"]}
    assert out["metadata"]["snake_key"] == "v"
    assert out["parts"][1]["data"]["context_id"] == {"task_id": [1, 2.5]}


def test_url_safe_and_unpadded_base64_are_accepted() -> None:
    payload = bytes([0xFB, 0xFF, 0xBF])  # standard "+/+/", url-safe "-_-_"
    for spelling in ("+/+/", "-_-_"):
        assert codec.decode(b'{"raw":"%s"}' % spelling.encode(), Part).raw == payload
    assert codec.decode(b'{"raw":"AP8"}', Part).raw == b"\x00\xff"
    assert json.loads(codec.encode(Part(raw=payload))) == {"raw": "+/+/"}


# -- timestamps ------------------------------------------------------------------------------

TIMESTAMPS = [
    ("2025-06-01T12:34:56Z", "2025-06-01T12:34:56Z"),
    ("2025-06-01T12:34:56.123Z", "2025-06-01T12:34:56.123000Z"),
    ("2025-06-01T12:34:56.123456Z", "2025-06-01T12:34:56.123456Z"),
    ("2025-06-01T12:34:56.123456789Z", "2025-06-01T12:34:56.123457Z"),  # nanos: rounded to µs
    ("2025-06-01T13:34:56.5+01:00", "2025-06-01T12:34:56.500000Z"),
    ("2025-06-01T11:34:56.250-01:00", "2025-06-01T12:34:56.250000Z"),
    ("2025-06-01T12:34:56+00:00", "2025-06-01T12:34:56Z"),
]


@pytest.mark.parametrize(("given", "written"), TIMESTAMPS)
def test_timestamps_decode_and_reencode_as_utc_z(given: str, written: str) -> None:
    body = json.dumps({"state": "TASK_STATE_WORKING", "timestamp": given})
    decoded = codec.decode(body, TaskStatus)
    assert decoded.timestamp is not None
    assert decoded.timestamp.tzinfo is dt.UTC
    out = json.loads(codec.encode(decoded))
    assert out["timestamp"] == written
    if len(given.split(".")[-1].rstrip("Z")) != 9:  # the SDK keeps nanoseconds; we keep µs
        assert json_format.Parse(codec.encode(decoded), sdk.TaskStatus()) == json_format.Parse(
            body, sdk.TaskStatus()
        )


def test_list_tasks_timestamp_filter_is_written_in_utc() -> None:
    decoded = codec.decode(
        b'{"statusTimestampAfter":"2026-01-01T01:00:00+01:00"}', ListTasksRequest
    )
    assert json.loads(codec.encode(decoded)) == {"statusTimestampAfter": "2026-01-01T00:00:00Z"}
    built = ListTasksRequest(
        status_timestamp_after=dt.datetime(2026, 1, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    )
    assert built == decoded


def test_naive_timestamps_are_rejected() -> None:
    with pytest.raises(
        msgspec.ValidationError,
        match=r"^Expected `datetime` with a timezone component - at `\$\.timestamp`$",
    ):
        codec.decode(
            b'{"state":"TASK_STATE_WORKING","timestamp":"2025-06-01T12:34:56"}', TaskStatus
        )
    with pytest.raises(ValueError, match=r"^timestamp must be timezone-aware$"):
        TaskStatus(state=TaskState.WORKING, timestamp=dt.datetime(2025, 6, 1))


def test_timestamps_outside_the_utc_range_are_validation_errors() -> None:
    body = b'{"state":"TASK_STATE_WORKING","timestamp":"0001-01-01T00:00:00+01:00"}'
    with pytest.raises(msgspec.ValidationError, match=r"^timestamp is out of range in UTC$"):
        codec.decode(body, TaskStatus)


# -- leniency and validation -----------------------------------------------------------------


def test_unknown_fields_are_ignored_everywhere() -> None:
    plain = json.loads(json_format.MessageToJson(task()))
    noisy = json.loads(json.dumps(plain))
    noisy["kind"] = "task"
    noisy["createdAt"] = "2026-01-01T00:00:00Z"
    noisy["status"]["final"] = True
    noisy["history"][0]["kind"] = "message"
    noisy["history"][0]["parts"][0]["kind"] = "text"
    noisy["artifacts"][0]["index"] = 0
    assert codec.decode(json.dumps(noisy), Task) == codec.decode(json.dumps(plain), Task)


def test_two_content_members_in_a_part_are_rejected_with_the_path() -> None:
    body = json.dumps(
        {
            "message": {
                "messageId": "m",
                "role": "ROLE_USER",
                "parts": [{"text": "ok"}, {"text": "a", "url": "https://x"}],
            }
        }
    )
    with pytest.raises(msgspec.ValidationError) as info:
        codec.decode(body, SendMessageRequest)
    assert str(info.value) == (
        "Part must hold exactly one of text, raw, url, data; got 2 - at `$.message.parts[1]`"
    )
    assert codec.error_path(info.value) == (
        "Part must hold exactly one of text, raw, url, data; got 2",
        "message.parts.1",
    )


def test_a_part_with_no_content_is_rejected() -> None:
    with pytest.raises(
        msgspec.ValidationError, match=r"^Part must hold exactly one of text, raw, url, data$"
    ):
        codec.decode(b'{"mediaType":"text/plain"}', Part)


def test_stream_response_needs_exactly_one_member() -> None:
    with pytest.raises(
        msgspec.ValidationError,
        match=r"^StreamResponse must hold exactly one of task, message, statusUpdate, "
        r"artifactUpdate; got task, message$",
    ):
        codec.decode(
            json.dumps(
                {
                    "task": json.loads(json_format.MessageToJson(task())),
                    "message": json.loads(json_format.MessageToJson(message())),
                }
            ),
            StreamResponse,
        )


@pytest.mark.parametrize(("build", "ours"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_golden_with_a_null_for_every_unset_field(
    build: Callable[[], Any], ours: type[Any]
) -> None:
    """The SDK's JSON with ``null`` for every field of the proto it left out (which the
    SDK's own parser reads as absent, checked by :func:`nulled`) decodes to what the
    SDK's plain JSON decodes to, on both entry points of the codec."""
    obj = build()
    expected = codec.decode(plain(obj), ours)
    with_nulls = nulled(obj)
    assert codec.decode(json.dumps(with_nulls).encode(), ours) == expected
    assert codec.convert(with_nulls, ours) == expected
