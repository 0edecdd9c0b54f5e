"""Task isolation between principals on the paths test_auth.py leaves out (both backends).

An intruder holding another principal's task id gets exactly what an unknown id gets, on
REST ``message:send`` / ``message:stream`` (a follow-up naming the task), on every A2A 0.3
method and root alias, and on every tenant-prefixed REST route; and the owner's task is left
as it was (no message appended, not canceled, no push config created).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import anyio
import pytest
from quart.testing import QuartClient

from a2a_actors.server import ServerConfig

from .helpers import (
    JSON_HEADERS,
    TIMEOUT,
    envelope,
    message,
    rpc_result,
    running_app,
    send_params,
    sse_data,
)

pytestmark = pytest.mark.anyio

ALICE = {"X-API-Key": "alice-key"}
BOB = {"X-API-Key": "bob-key"}
CAROL = {"Authorization": "Bearer carol-token"}
INTRUDERS = (BOB, CAROL)
CONFIG = ServerConfig(
    api_keys={"alice-key": "alice", "bob-key": "bob"},
    bearer_tokens={"carol-token": "carol"},
    push_notifications=True,
)
LEGACY = {"Content-Type": "application/json"}  # no A2A-Version: the 0.3 protocol


async def _rest(
    client: QuartClient, method: str, path: str, headers: dict[str, str], body: Any = None
) -> tuple[int, str, bytes]:
    """One REST call: (status, content type, raw body)."""
    response = await client.open(
        path,
        method=method,
        data=b"" if body is None else json.dumps(body).encode(),
        headers={**JSON_HEADERS, **headers},
    )
    raw = await response.get_data(as_text=False)
    return response.status_code, response.headers.get("content-type", ""), raw


def _assert_rest_not_found(status: int, content_type: str, raw: bytes, what: object) -> None:
    """The answer to an unknown task: a JSON 404 TASK_NOT_FOUND, never a stream."""
    assert status == 404, (what, status, raw)
    assert content_type == "application/json", what
    assert json.loads(raw)["error"]["details"][0]["reason"] == "TASK_NOT_FOUND", what


async def _legacy(
    client: QuartClient, method: str, params: Any, headers: dict[str, str]
) -> tuple[int, str, bytes]:
    response = await client.post("/", data=envelope(method, params), headers={**LEGACY, **headers})
    raw = await response.get_data(as_text=False)
    return response.status_code, response.headers.get("content-type", ""), raw


def _legacy_message(text: str, task_id: str) -> dict[str, Any]:
    return {
        "kind": "message",
        "messageId": uuid.uuid4().hex,
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
        "taskId": task_id,
    }


async def _alices_tasks(client: QuartClient) -> tuple[dict[str, Any], dict[str, Any]]:
    """A completed task and one waiting for input, both alice's."""
    done = (await rpc_result(client, "SendMessage", send_params("x"), headers=ALICE))["task"]
    waiting = (await rpc_result(client, "SendMessage", send_params("input"), headers=ALICE))["task"]
    assert waiting["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    return done, waiting


async def _assert_untouched(client: QuartClient, *tasks: dict[str, Any]) -> None:
    """Alice's tasks are as they were, and she can still finish the waiting one."""
    for task in tasks:
        now = await rpc_result(client, "GetTask", {"id": task["id"]}, headers=ALICE)
        assert now == task
        configs = await rpc_result(
            client, "ListTaskPushNotificationConfigs", {"taskId": task["id"]}, headers=ALICE
        )
        assert configs.get("configs", []) == []
    waiting = next(t for t in tasks if t["status"]["state"] == "TASK_STATE_INPUT_REQUIRED")
    resumed = await rpc_result(
        client, "SendMessage", send_params("Ada", task_id=waiting["id"]), headers=ALICE
    )
    assert resumed["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert resumed["task"]["artifacts"][0]["parts"][0]["text"] == "Ada"


@pytest.mark.parametrize("prefix", ["/rest", "/rest/acme"], ids=["plain", "tenant"])
async def test_rest_follow_ups_naming_anothers_task_are_not_found(prefix: str) -> None:
    with anyio.fail_after(TIMEOUT * 2):
        async with running_app(config=CONFIG) as client:
            tasks = await _alices_tasks(client)
            for task in tasks:
                tid, ctx = task["id"], task["contextId"]
                for intruder in INTRUDERS:
                    for route in ("message:send", "message:stream"):
                        for follow_up in (
                            message("hijack", task_id=tid),
                            message("hijack", task_id=tid, context_id=ctx),
                        ):
                            answer = await _rest(
                                client,
                                "POST",
                                f"{prefix}/{route}",
                                intruder,
                                {"message": follow_up},
                            )
                            _assert_rest_not_found(*answer, (route, intruder))
                    # the same for an id nobody has: indistinguishable
                    unknown = await _rest(
                        client,
                        "POST",
                        f"{prefix}/message:send",
                        intruder,
                        {"message": message("hijack", task_id="no-such-task")},
                    )
                    _assert_rest_not_found(*unknown, "unknown id")
            await _assert_untouched(client, *tasks)


async def test_every_tenant_prefixed_route_hides_anothers_task() -> None:
    with anyio.fail_after(TIMEOUT * 2):
        async with running_app(config=CONFIG) as client:
            # alice's tasks made on the tenant route; the intruder uses the same tenant
            status, _, raw = await _rest(
                client, "POST", "/rest/acme/message:send", ALICE, {"message": message("x")}
            )
            assert status == 200, raw
            done = json.loads(raw)["task"]
            status, _, raw = await _rest(
                client, "POST", "/rest/acme/message:send", ALICE, {"message": message("input")}
            )
            waiting = json.loads(raw)["task"]
            hook = {"id": "c", "url": "https://hooks.example.com/a2a"}
            for task in (done, waiting):
                base = f"/rest/acme/tasks/{task['id']}"
                for intruder in INTRUDERS:
                    for method, path, body in (
                        ("GET", base, None),
                        ("GET", f"{base}?historyLength=5", None),
                        ("POST", f"{base}:cancel", {}),
                        ("GET", f"{base}:subscribe", None),
                        ("POST", f"{base}:subscribe", {}),
                        ("POST", f"{base}/pushNotificationConfigs", hook),
                        ("GET", f"{base}/pushNotificationConfigs", None),
                        ("GET", f"{base}/pushNotificationConfigs/c", None),
                        ("DELETE", f"{base}/pushNotificationConfigs/c", None),
                    ):
                        answer = await _rest(client, method, path, intruder, body)
                        _assert_rest_not_found(*answer, (method, path, intruder))
                    status, _, raw = await _rest(client, "GET", "/rest/acme/tasks", intruder)
                    assert (status, json.loads(raw)["tasks"]) == (200, [])
            status, _, raw = await _rest(client, "GET", "/rest/acme/tasks", ALICE)
            assert {t["id"] for t in json.loads(raw)["tasks"]} == {done["id"], waiting["id"]}
            await _assert_untouched(client, done, waiting)


async def test_every_0_3_method_hides_anothers_task() -> None:
    with anyio.fail_after(TIMEOUT * 2):
        async with running_app(config=CONFIG) as client:
            tasks = await _alices_tasks(client)
            for task in tasks:
                tid = task["id"]
                unary: list[tuple[str, Any]] = [
                    ("message/send", {"message": _legacy_message("hijack", tid)}),
                    ("tasks/get", {"id": tid}),
                    ("tasks/cancel", {"id": tid}),
                    (
                        "tasks/pushNotificationConfig/set",
                        {
                            "taskId": tid,
                            "pushNotificationConfig": {"id": "c", "url": "https://h.example"},
                        },
                    ),
                    (
                        "tasks/pushNotificationConfig/get",
                        {"id": tid, "pushNotificationConfigId": "c"},
                    ),
                    ("tasks/pushNotificationConfig/list", {"id": tid}),
                    (
                        "tasks/pushNotificationConfig/delete",
                        {"id": tid, "pushNotificationConfigId": "c"},
                    ),
                ]
                for intruder in INTRUDERS:
                    for method, params in unary:
                        status, _, raw = await _legacy(client, method, params, intruder)
                        assert status == 200, (method, raw)
                        error = json.loads(raw)["error"]
                        assert (error["code"], error["data"]) == (-32001, None), (method, intruder)
                    # streaming methods answer as for an unknown task: JSON, not a stream
                    for method, params in (
                        ("message/stream", {"message": _legacy_message("hijack", tid)}),
                        ("tasks/resubscribe", {"id": tid}),
                    ):
                        status, content_type, raw = await _legacy(client, method, params, intruder)
                        assert (status, content_type) == (200, "application/json"), method
                        assert json.loads(raw)["error"]["code"] == -32001, (method, intruder)
            await _assert_untouched(client, *tasks)
            # the control: the owner's 0.3 follow-up on the same path streams
            _, waiting = await _alices_tasks(client)
            params = {"message": _legacy_message("Ada", waiting["id"])}
            status, content_type, raw = await _legacy(client, "message/stream", params, ALICE)
            assert (status, content_type.split(";")[0]) == (200, "text/event-stream")
            last = sse_data(raw)[-1]["result"]
            assert (last["status"]["state"], last["final"]) == ("completed", True)


@pytest.mark.parametrize("path", ["/message:send", "/tasks/send"])
async def test_0_3_root_aliases_hide_anothers_task(path: str) -> None:
    with anyio.fail_after(TIMEOUT * 2):
        async with running_app(config=CONFIG) as client:
            tasks = await _alices_tasks(client)
            for task in tasks:
                for intruder in INTRUDERS:
                    bare = {"message": _legacy_message("hijack", task["id"])}
                    response = await client.post(
                        path, data=json.dumps(bare).encode(), headers={**LEGACY, **intruder}
                    )
                    assert response.status_code == 404, (path, intruder)
                    error = (await response.get_json())["error"]
                    assert (error["code"], error["data"]) == (-32001, None)
                    wrapped = envelope("message/send", bare, rid="w")
                    response = await client.post(path, data=wrapped, headers={**LEGACY, **intruder})
                    answer = await response.get_json()
                    assert (answer["id"], answer["error"]["code"]) == ("w", -32001)
            await _assert_untouched(client, *tasks)


async def test_the_owner_still_streams_a_follow_up_on_the_tenant_route() -> None:
    """The control: the same follow-up the intruders sent works for the owner."""
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=CONFIG) as client:
            _, waiting = await _alices_tasks(client)
            status, content_type, raw = await _rest(
                client,
                "POST",
                "/rest/acme/message:stream",
                ALICE,
                {"message": message("Ada", task_id=waiting["id"])},
            )
            assert (status, content_type.split(";")[0]) == (200, "text/event-stream")
            events = sse_data(raw)
            assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
            assert events[-1]["statusUpdate"]["taskId"] == waiting["id"]
