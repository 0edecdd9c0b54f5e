"""``null`` means absent in every request the server decodes (both bindings, 1.0 and 0.3).

1.0 requests are the official SDK's JSON for each method with a ``null`` for every field it
left out (``tests.null_fields.nulled``: the SDK's own parser reads them as absent); 0.3
requests are the SDK's 0.3 pydantic requests dumped as 0.3 Python agents send them (a null
for every unset field). Each must be served exactly as without the nulls; a null for a
required field is still -32602 / 400 naming the field; a Part ``{"data": null}`` is a data
part whose value is null, and is stored and returned as such.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import anyio
import pytest
from a2a import types as sdk
from a2a.compat.v0_3 import types as v03
from pydantic import BaseModel
from quart.testing import QuartClient

from a2a_actors.server import ExtendedCard, ServerConfig
from tests.null_fields import dump_v0_3, nulled, send_params_v0_3

from .agents import CHUNKS
from .helpers import JSON_HEADERS, TIMEOUT, rpc_error, rpc_result, running_app, sse_data

pytestmark = pytest.mark.anyio

CONFIG = ServerConfig(push_notifications=True, extended_card=ExtendedCard(name="more"))
HOOK = "https://hooks.example.com"


def send_request(text: str, **configuration: Any) -> dict[str, Any]:
    """A nulled SDK SendMessageRequest: every unset field, configuration's included, null."""
    return nulled(
        sdk.SendMessageRequest(
            message=sdk.Message(
                message_id=uuid.uuid4().hex, role=sdk.Role.ROLE_USER, parts=[sdk.Part(text=text)]
            ),
            configuration=sdk.SendMessageConfiguration(**configuration),
        )
    )


async def rest(client: QuartClient, method: str, path: str, body: Any) -> tuple[int, Any]:
    response = await client.open(
        path, method=method, data=json.dumps(body).encode(), headers=JSON_HEADERS
    )
    raw = await response.get_data(as_text=False)
    if response.headers["content-type"].startswith("text/event-stream"):
        return response.status_code, sse_data(raw)
    return response.status_code, json.loads(raw)


async def test_every_jsonrpc_method_with_nulls() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=CONFIG) as client:
            params = send_request("hello")
            assert params["message"]["referenceTaskIds"] is None
            assert params["configuration"]["acceptedOutputModes"] is None
            task = (await rpc_result(client, "SendMessage", params))["task"]
            assert task["status"]["state"] == "TASK_STATE_COMPLETED"
            assert task["artifacts"][0]["parts"] == [{"text": "hello"}]
            tid = task["id"]

            got = await rpc_result(client, "GetTask", nulled(sdk.GetTaskRequest(id=tid)))
            assert got["id"] == tid
            listed = await rpc_result(client, "ListTasks", nulled(sdk.ListTasksRequest()))
            assert [t["id"] for t in listed["tasks"]] == [tid]

            sleeping = await rpc_result(
                client, "SendMessage", send_request("sleep", return_immediately=True)
            )
            canceled = await rpc_result(
                client, "CancelTask", nulled(sdk.CancelTaskRequest(id=sleeping["task"]["id"]))
            )
            assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
            # decoded: refused for the task's state, not for its params
            error = await rpc_error(
                client, "SubscribeToTask", nulled(sdk.SubscribeToTaskRequest(id=tid))
            )
            assert error["code"] == -32004

            config = nulled(sdk.TaskPushNotificationConfig(task_id=tid, url=HOOK))
            assert config["authentication"] is None
            created = await rpc_result(client, "CreateTaskPushNotificationConfig", config)
            assert created["url"] == HOOK
            ids = {"task_id": tid, "id": created["id"]}
            got_config = await rpc_result(
                client,
                "GetTaskPushNotificationConfig",
                nulled(sdk.GetTaskPushNotificationConfigRequest(**ids)),
            )
            assert got_config == created
            configs = await rpc_result(
                client,
                "ListTaskPushNotificationConfigs",
                nulled(sdk.ListTaskPushNotificationConfigsRequest(task_id=tid)),
            )
            assert configs["configs"] == [created]
            await rpc_result(
                client,
                "DeleteTaskPushNotificationConfig",
                nulled(sdk.DeleteTaskPushNotificationConfigRequest(**ids)),
            )
            card = await rpc_result(
                client, "GetExtendedAgentCard", nulled(sdk.GetExtendedAgentCardRequest())
            )
            assert card["name"] == "more"


async def test_streaming_with_nulls_on_both_bindings() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=CONFIG) as client:
            envelope = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendStreamingMessage",
                "params": send_request("stream"),
            }
            status, events = await rest(client, "POST", "/", envelope)
            assert status == 200
            assert len(events) == len(CHUNKS) + 3
            assert events[-1]["result"]["statusUpdate"]["status"]["state"] == (
                "TASK_STATE_COMPLETED"
            )
            status, events = await rest(
                client, "POST", "/rest/message:stream", send_request("stream")
            )
            assert status == 200
            assert len(events) == len(CHUNKS) + 3


async def test_every_rest_body_with_nulls() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=CONFIG) as client:
            status, answer = await rest(client, "POST", "/rest/message:send", send_request("hi"))
            assert status == 200, answer
            assert answer["task"]["status"]["state"] == "TASK_STATE_COMPLETED"

            status, answer = await rest(
                client, "POST", "/rest/message:send", send_request("sleep", return_immediately=True)
            )
            tid = answer["task"]["id"]
            status, canceled = await rest(
                client, "POST", f"/rest/tasks/{tid}:cancel", nulled(sdk.CancelTaskRequest(id=tid))
            )
            assert status == 200, canceled
            assert canceled["status"]["state"] == "TASK_STATE_CANCELED"

            config = nulled(sdk.TaskPushNotificationConfig(task_id=tid, url=HOOK))
            status, created = await rest(
                client, "POST", f"/rest/tasks/{tid}/pushNotificationConfigs", config
            )
            assert status == 200, created
            assert (created["taskId"], created["url"]) == (tid, HOOK)


async def test_a_null_required_field_names_the_field_on_both_bindings() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            params = send_request("hi")
            params["message"]["role"] = None
            error = await rpc_error(client, "SendMessage", params)
            assert error["code"] == -32602
            assert error["data"][0]["metadata"]["field"] == "message.role"

            status, body = await rest(client, "POST", "/rest/message:send", params)
            assert status == 400
            violations = body["error"]["details"][1]["fieldViolations"]
            assert [v["field"] for v in violations] == ["message.role"]


async def test_a_data_part_of_null_is_kept() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            params = send_request("x")
            params["message"]["parts"] = [
                {"data": None, "text": None, "mediaType": None},
                {"data": {"k": None}, "metadata": {"m": None}, "filename": None},
            ]
            task = (await rpc_result(client, "SendMessage", params))["task"]
            got = await rpc_result(client, "GetTask", {"id": task["id"]})
            assert got["history"][0]["parts"] == [
                {"data": None},
                {"data": {"k": None}, "metadata": {"m": None}},
            ]


# -- A2A 0.3 -------------------------------------------------------------------------------

LEGACY_HEADERS = {"Content-Type": "application/json"}  # no A2A-Version: 0.3


async def legacy(client: QuartClient, request: BaseModel, path: str = "/") -> Any:
    """Post the SDK's dump of a 0.3 request (nulls included); the decoded answer."""
    body = json.dumps(dump_v0_3(request)).encode()
    response = await client.post(path, data=body, headers=LEGACY_HEADERS)
    raw = await response.get_data(as_text=False)
    if response.headers["content-type"].startswith("text/event-stream"):
        return [event["result"] for event in sse_data(raw)]
    answer = json.loads(raw)
    assert response.status_code == 200, answer
    return answer


async def test_every_0_3_method_with_the_sdk_nulls() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=CONFIG) as client:
            answer = await legacy(
                client, v03.SendMessageRequest(id=1, params=send_params_v0_3("hi"))
            )
            task = answer["result"]
            assert (task["kind"], task["status"]["state"]) == ("task", "completed")
            assert task["history"][0]["parts"][1] == {
                "kind": "data",
                "data": {"kept": None, "list": [None]},
            }
            tid = task["id"]

            got = await legacy(client, v03.GetTaskRequest(id=2, params=v03.TaskQueryParams(id=tid)))
            assert got["result"]["id"] == tid

            sleeping = await legacy(
                client,
                v03.SendMessageRequest(id=3, params=send_params_v0_3("sleep", blocking=False)),
            )
            cancel = v03.CancelTaskRequest(
                id=4, params=v03.TaskIdParams(id=sleeping["result"]["id"])
            )
            assert (await legacy(client, cancel))["result"]["status"]["state"] == "canceled"

            events = await legacy(
                client, v03.SendStreamingMessageRequest(id=5, params=send_params_v0_3("stream"))
            )
            assert (events[-1]["status"]["state"], events[-1]["final"]) == ("completed", True)
            resubscribe = v03.TaskResubscriptionRequest(id=6, params=v03.TaskIdParams(id=tid))
            assert (await legacy(client, resubscribe))["error"]["code"] == -32004  # terminal

            push = v03.TaskPushNotificationConfig(
                task_id=tid,
                push_notification_config=v03.PushNotificationConfig(
                    url=HOOK,
                    authentication=v03.PushNotificationAuthenticationInfo(schemes=["Bearer"]),
                ),
            )
            created = await legacy(
                client, v03.SetTaskPushNotificationConfigRequest(id=7, params=push)
            )
            config_id = created["result"]["pushNotificationConfig"]["id"]
            get = v03.GetTaskPushNotificationConfigRequest(
                id=8,
                params=v03.GetTaskPushNotificationConfigParams(
                    id=tid, push_notification_config_id=config_id
                ),
            )
            assert (await legacy(client, get))["result"] == created["result"]
            listed = v03.ListTaskPushNotificationConfigRequest(
                id=9, params=v03.ListTaskPushNotificationConfigParams(id=tid)
            )
            assert (await legacy(client, listed))["result"] == [created["result"]]
            delete = v03.DeleteTaskPushNotificationConfigRequest(
                id=10,
                params=v03.DeleteTaskPushNotificationConfigParams(
                    id=tid, push_notification_config_id=config_id
                ),
            )
            assert (await legacy(client, delete))["result"] is None
            card = await legacy(client, v03.GetAuthenticatedExtendedCardRequest(id=11))
            assert card["result"]["name"] == "more"


async def test_0_3_root_alias_with_the_sdk_nulls() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            answer = await legacy(client, send_params_v0_3("bare"), "/message:send")
            assert (answer["kind"], answer["status"]["state"]) == ("task", "completed")
            request = v03.SendMessageRequest(id=1, params=send_params_v0_3("wrapped"))
            answer = await legacy(client, request, "/tasks/send")
            assert answer["result"]["artifacts"][0]["parts"][0]["text"] == "wrapped"
