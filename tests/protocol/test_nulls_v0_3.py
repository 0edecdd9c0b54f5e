"""A2A 0.3 objects as 0.3 Python agents send them (a ``null`` for every unset field).

Every input here is the official SDK's own output: its 0.3 pydantic types dumped with
``model_dump(mode="json", by_alias=True)``, nulls included. Each must decode exactly as the
same dump without its nulls does: requests (every 0.3 method, as the whole JSON-RPC request
the SDK writes), results and stream items (every result type), and the card.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from a2a.compat.v0_3 import types as v03
from pydantic import BaseModel

from a2a_actors.protocol import _jsonrpc as jsonrpc, _legacy_v0_3 as legacy_v0_3
from a2a_actors.protocol._card import AgentCard
from a2a_actors.protocol._legacy_card import card_from_v0_3
from a2a_actors.protocol._models import Message, StreamResponse, Task, TaskState
from a2a_actors.protocol._requests import SendMessageRequest, SendMessageResponse
from tests.null_fields import (
    bare_v0_3,
    card_v0_3,
    dump_v0_3,
    message_v0_3,
    send_params_v0_3,
    task_v0_3,
)


def push_config_v0_3(config_id: str | None = None) -> v03.TaskPushNotificationConfig:
    auth = v03.PushNotificationAuthenticationInfo(schemes=["Bearer"])
    return v03.TaskPushNotificationConfig(
        task_id="t-03",
        push_notification_config=v03.PushNotificationConfig(
            id=config_id, url="https://hooks.example.com", authentication=auth
        ),
    )


#: One SDK request per 0.3 method (the whole JSON-RPC request, as the SDK writes it).
REQUESTS: list[BaseModel] = [
    v03.SendMessageRequest(id=1, params=send_params_v0_3("hi", blocking=True)),
    v03.SendStreamingMessageRequest(id=2, params=send_params_v0_3("stream")),
    v03.GetTaskRequest(id=3, params=v03.TaskQueryParams(id="t-03")),
    v03.CancelTaskRequest(id=4, params=v03.TaskIdParams(id="t-03")),
    v03.TaskResubscriptionRequest(id=5, params=v03.TaskIdParams(id="t-03")),
    v03.SetTaskPushNotificationConfigRequest(id=6, params=push_config_v0_3()),
    v03.GetTaskPushNotificationConfigRequest(
        id=7, params=v03.GetTaskPushNotificationConfigParams(id="t-03")
    ),
    v03.ListTaskPushNotificationConfigRequest(
        id=8, params=v03.ListTaskPushNotificationConfigParams(id="t-03")
    ),
    v03.DeleteTaskPushNotificationConfigRequest(
        id=9,
        params=v03.DeleteTaskPushNotificationConfigParams(
            id="t-03", push_notification_config_id="cfg"
        ),
    ),
    v03.GetAuthenticatedExtendedCardRequest(id=10),
]


def _decode_request(obj: Any) -> jsonrpc.Call:
    envelope = jsonrpc.decode_envelope(json.dumps(obj).encode())
    assert isinstance(envelope, jsonrpc.Envelope), envelope
    call = legacy_v0_3.decode_params_v0_3(envelope)
    assert isinstance(call, jsonrpc.Call), call
    return call


def test_every_0_3_method_has_a_request() -> None:
    assert {dump_v0_3(r)["method"] for r in REQUESTS} == set(legacy_v0_3.V0_3_METHODS)


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: dump_v0_3(r)["method"])
def test_sdk_requests_with_nulls_decode_as_without(request_: BaseModel) -> None:
    with_nulls = dump_v0_3(request_)
    assert "params" not in with_nulls or "null" in json.dumps(with_nulls["params"])
    call = _decode_request(with_nulls)
    assert call.params == _decode_request(bare_v0_3(request_)).params
    assert call.id == with_nulls["id"]


def test_send_params_with_nulls_read_in_full() -> None:
    params = legacy_v0_3.params_from_v0_3(
        "message/send", dump_v0_3(send_params_v0_3("hi", blocking=False))
    )
    assert isinstance(params, SendMessageRequest)
    message = params.message
    assert (message.message_id, message.text, message.reference_task_ids) == ("m-1", "hi", ())
    assert message.parts[1].data == {"kept": None, "list": [None]}  # nulls inside: kept
    assert message.parts[2].url == "https://f.example.com/a"
    assert (message.parts[3].raw, message.parts[3].filename) == (b"hi", "hi.txt")
    assert params.configuration is not None
    assert params.configuration.return_immediately is True
    assert params.configuration.accepted_output_modes == ()


_STATUS = v03.TaskStatusUpdateEvent(
    task_id="t-03",
    context_id="c-03",
    status=v03.TaskStatus(state=v03.TaskState.working),
    final=False,
)
_CHUNK = v03.TaskArtifactUpdateEvent(
    task_id="t-03",
    context_id="c-03",
    artifact=v03.Artifact(artifact_id="a-1", parts=[v03.Part(root=v03.TextPart(text="x"))]),
)

#: (1.0 method, an SDK 0.3 result of it)
RESULTS: list[tuple[str, Any]] = [
    ("SendMessage", task_v0_3()),
    ("SendMessage", message_v0_3("reply", v03.Role.agent)),
    ("SendStreamingMessage", task_v0_3(state=v03.TaskState.submitted)),
    ("SendStreamingMessage", _STATUS),
    ("SendStreamingMessage", _CHUNK),
    ("SubscribeToTask", _STATUS),
    ("GetTask", task_v0_3()),
    ("CancelTask", task_v0_3(state=v03.TaskState.canceled)),
    ("CreateTaskPushNotificationConfig", push_config_v0_3("cfg")),
    ("GetTaskPushNotificationConfig", push_config_v0_3("cfg")),
    ("ListTaskPushNotificationConfigs", [push_config_v0_3("cfg"), push_config_v0_3("c2")]),
    ("GetExtendedAgentCard", card_v0_3("https://legacy.example.com/rpc")),
]


def _dump(result: Any, *, nulls: bool) -> Any:
    dump = dump_v0_3 if nulls else bare_v0_3
    return [dump(r) for r in result] if isinstance(result, list) else dump(result)


@pytest.mark.parametrize(
    ("method", "result"), RESULTS, ids=[f"{m}-{type(r).__name__}" for m, r in RESULTS]
)
def test_sdk_results_with_nulls_decode_as_without(method: str, result: Any) -> None:
    expected = legacy_v0_3.result_from_v0_3(method, _dump(result, nulls=False))
    assert legacy_v0_3.result_from_v0_3(method, _dump(result, nulls=True)) == expected
    # and as the whole JSON-RPC response, the way a client reads it off the wire
    response = {"jsonrpc": "2.0", "id": 1, "result": _dump(result, nulls=True)}
    assert legacy_v0_3.decode_response_v0_3(json.dumps(response), method) == expected


def test_sdk_task_with_nulls_read_in_full() -> None:
    response = v03.SendMessageSuccessResponse(id=1, result=task_v0_3())
    result = legacy_v0_3.decode_response_v0_3(json.dumps(dump_v0_3(response)), "SendMessage")
    assert isinstance(result, SendMessageResponse)
    task = result.payload
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert isinstance(task.status.message, Message)
    assert task.status.message.parts[1].data == {"kept": None, "list": [None]}
    assert task.artifacts[0].parts[0].text == "x"
    assert (task.artifacts[0].name, task.artifacts[0].extensions) == ("", ())
    assert task.metadata is None
    event = legacy_v0_3.decode_response_v0_3(
        json.dumps(dump_v0_3(v03.SendStreamingMessageSuccessResponse(id=1, result=_CHUNK))),
        "SendStreamingMessage",
    )
    assert isinstance(event, StreamResponse)
    assert event.artifact_update is not None
    assert (event.artifact_update.append, event.artifact_update.last_chunk) == (False, False)


def test_sdk_card_with_nulls_reads_as_without() -> None:
    sdk_card = card_v0_3("https://legacy.example.com/rpc")
    with_nulls = dump_v0_3(sdk_card)
    assert with_nulls["capabilities"]["extensions"][0]["description"] is None
    card = card_from_v0_3(with_nulls)
    assert card == card_from_v0_3(bare_v0_3(sdk_card))
    assert isinstance(card, AgentCard)
    assert [i.url for i in card.supported_interfaces] == ["https://legacy.example.com/rpc"]
    assert card.capabilities.streaming is True
    assert card.capabilities.push_notifications is None
    assert [e.uri for e in card.capabilities.extensions] == ["urn:ext"]
    assert card.capabilities.extensions[0].required is False
    assert sorted(card.security_schemes) == ["key", "oauth"]
    assert [sorted(r.schemes) for r in card.security_requirements] == [["key"]]
    assert card.skills[0].examples == ()
    assert card.provider is None


def test_a_null_required_0_3_field_is_still_missing() -> None:
    params = dump_v0_3(send_params_v0_3("hi"))
    params["message"]["messageId"] = None
    request = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": params}
    envelope = jsonrpc.decode_envelope(json.dumps(request).encode())
    assert isinstance(envelope, jsonrpc.Envelope)
    reply = legacy_v0_3.decode_params_v0_3(envelope)
    assert isinstance(reply, jsonrpc.ErrorReply)
    assert reply.error.code == -32602
    assert getattr(reply.error, "field", None) == "message.messageId"


def test_null_1_0_members_of_a_0_3_card_do_not_hide_its_0_3_members() -> None:
    """A 0.3 card that also carries the 1.0 names as ``null`` is read from its 0.3 ones."""
    sdk_card = card_v0_3("https://legacy.example.com/rpc")
    with_nulls = dump_v0_3(sdk_card)
    with_nulls.update(supportedInterfaces=None, securityRequirements=None)
    with_nulls["skills"][0].update(securityRequirements=None, security=[{"key": ["read"]}])
    with_nulls["securitySchemes"]["key"]["apiKeySecurityScheme"] = None
    card = card_from_v0_3(with_nulls)
    bare = bare_v0_3(sdk_card)
    bare["skills"][0]["security"] = [{"key": ["read"]}]
    assert card == card_from_v0_3(bare)
    assert [i.url for i in card.supported_interfaces] == ["https://legacy.example.com/rpc"]
    assert card.skills[0].security_requirements[0].schemes["key"].list == ("read",)
    assert card.security_schemes["key"].api_key_security_scheme is not None
