"""A2A 0.3 callers: slash methods on ``POST /`` and the root aliases (both backends)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import anyio
import pytest
from quart.testing import QuartClient

from a2a_actors.server import ServerConfig

from .agents import QUESTION
from .helpers import TIMEOUT, envelope, rpc_result, running_app, send_params, sse_data

pytestmark = pytest.mark.anyio

LEGACY_HEADERS = {"Content-Type": "application/json"}  # no A2A-Version: 0.3


def legacy_message(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "kind": "message",
        "messageId": uuid.uuid4().hex,
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
        **extra,
    }


async def legacy_call(
    client: QuartClient, method: str, params: Any, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    response = await client.post(
        "/", data=envelope(method, params), headers={**LEGACY_HEADERS, **(headers or {})}
    )
    assert response.status_code == 200
    decoded: dict[str, Any] = json.loads(await response.get_data(as_text=False))
    return decoded


async def test_message_send_and_tasks_get_in_0_3_form() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            answer = await legacy_call(client, "message/send", {"message": legacy_message("hi")})
            task = answer["result"]
            assert task["kind"] == "task"
            assert task["status"]["state"] == "completed"
            assert task["artifacts"][0]["parts"] == [{"kind": "text", "text": "hi"}]
            assert task["history"][0]["role"] == "user"

            got = await legacy_call(client, "tasks/get", {"id": task["id"]})
            assert got["result"]["id"] == task["id"]
            # the same task through 1.0
            v1 = await rpc_result(client, "GetTask", {"id": task["id"]})
            assert v1["status"]["state"] == "TASK_STATE_COMPLETED"

            reply = await legacy_call(
                client, "message/send", {"message": legacy_message("message x")}
            )
            assert reply["result"]["kind"] == "message"
            assert reply["result"]["role"] == "agent"


async def test_multi_turn_cancel_and_errors_in_0_3_form() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            first = (
                await legacy_call(client, "message/send", {"message": legacy_message("input")})
            )["result"]
            assert first["status"]["state"] == "input-required"
            assert first["status"]["message"]["parts"][0]["text"] == QUESTION
            second = await legacy_call(
                client, "message/send", {"message": legacy_message("Ada", taskId=first["id"])}
            )
            assert second["result"]["status"]["state"] == "completed"

            sleeping = (
                await legacy_call(
                    client,
                    "message/send",
                    {"message": legacy_message("sleep"), "configuration": {"blocking": False}},
                )
            )["result"]
            canceled = await legacy_call(client, "tasks/cancel", {"id": sleeping["id"]})
            assert canceled["result"]["status"]["state"] == "canceled"
            again = await legacy_call(client, "tasks/cancel", {"id": sleeping["id"]})
            assert again["error"] == {
                "code": -32002,
                "message": again["error"]["message"],
                "data": None,
            }
            missing = await legacy_call(client, "tasks/get", {"id": "nope"})
            assert missing["error"]["code"] == -32001
            assert missing["error"]["data"] is None


async def test_message_stream_in_0_3_form() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            response = await client.post(
                "/",
                data=envelope("message/stream", {"message": legacy_message("stream")}),
                headers=LEGACY_HEADERS,
            )
            events = [e["result"] for e in sse_data(await response.get_data(as_text=False))]
            kinds = [e["kind"] for e in events]
            assert kinds[0] == "task"
            assert kinds[-1] == "status-update"
            assert events[-1]["final"] is True
            assert events[-1]["status"]["state"] == "completed"
            assert "artifact-update" in kinds
            assert all(e["final"] is False for e in events[1:-1] if e["kind"] == "status-update")

            response = await client.post(
                "/",
                data=envelope("message/stream", {"message": legacy_message("input")}),
                headers=LEGACY_HEADERS,
            )
            last = sse_data(await response.get_data(as_text=False))[-1]["result"]
            assert (last["status"]["state"], last["final"]) == ("input-required", True)


async def test_push_config_and_card_in_0_3_form() -> None:
    config = ServerConfig(push_notifications=True, declare_extended_card=True)
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=config) as client:
            task = (await legacy_call(client, "message/send", {"message": legacy_message("x")}))[
                "result"
            ]
            created = await legacy_call(
                client,
                "tasks/pushNotificationConfig/set",
                {
                    "taskId": task["id"],
                    "pushNotificationConfig": {"id": "c", "url": "https://h.example", "token": "t"},
                },
            )
            assert created["result"] == {
                "taskId": task["id"],
                "pushNotificationConfig": {"id": "c", "url": "https://h.example"},
            }
            listed = await legacy_call(
                client, "tasks/pushNotificationConfig/list", {"id": task["id"]}
            )
            assert [c["pushNotificationConfig"]["id"] for c in listed["result"]] == ["c"]
            deleted = await legacy_call(
                client,
                "tasks/pushNotificationConfig/delete",
                {"id": task["id"], "pushNotificationConfigId": "c"},
            )
            assert deleted["result"] is None
            card = await legacy_call(client, "agent/getAuthenticatedExtendedCard", None)
            assert card["error"]["code"] == -32007


async def test_version_routing() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            # a 1.0 method without a 1.x version
            answer = await legacy_call(client, "SendMessage", send_params("x"))
            assert answer["error"]["code"] == -32009
            # a 0.3 method with a 1.0 version is not a 1.0 method
            answer = await legacy_call(
                client, "message/send", {"message": legacy_message("x")}, {"A2A-Version": "1.0"}
            )
            assert answer["error"]["code"] == -32601
            # explicit 0.3 works like no header
            answer = await legacy_call(
                client, "message/send", {"message": legacy_message("x")}, {"A2A-Version": "0.3"}
            )
            assert answer["result"]["kind"] == "task"
            bad = await legacy_call(client, "message/send", {"message": {"kind": "message"}})
            assert bad["error"]["code"] == -32602
        async with running_app(config=ServerConfig(legacy_v0_3=False)) as client:
            answer = await legacy_call(client, "message/send", {"message": legacy_message("x")})
            assert answer["error"]["code"] == -32009
            response = await client.post("/message:send", data=b"{}", headers=LEGACY_HEADERS)
            assert response.status_code == 404


@pytest.mark.parametrize("path", ["/message:send", "/tasks/send"])
async def test_root_aliases(path: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            bare = {"message": legacy_message("hello")}
            response = await client.post(
                path, data=json.dumps(bare).encode(), headers=LEGACY_HEADERS
            )
            assert response.status_code == 200
            task = await response.get_json()
            assert (task["kind"], task["status"]["state"]) == ("task", "completed")

            wrapped = envelope("message/send", bare, rid="a1")
            response = await client.post(path, data=wrapped, headers=LEGACY_HEADERS)
            answer = await response.get_json()
            assert answer["id"] == "a1"
            assert answer["result"]["status"]["state"] == "completed"

            response = await client.post(
                path,
                data=json.dumps({"message": legacy_message("x", taskId="nope")}).encode(),
                headers=LEGACY_HEADERS,
            )
            assert response.status_code == 404
            assert (await response.get_json())["error"]["code"] == -32001
            response = await client.post(path, data=b"{nope", headers=LEGACY_HEADERS)
            assert response.status_code == 400
            assert (await response.get_json())["error"]["code"] == -32700
            response = await client.post(path, data=b"x", headers={"Content-Type": "text/plain"})
            assert response.status_code == 415
