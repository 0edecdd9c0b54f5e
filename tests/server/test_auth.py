"""Authentication on every route, and task isolation between principals (both backends)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest
from quart.testing import QuartClient

from a2a_actors.server import ExtendedCard, ServerConfig

from .helpers import (
    HTTPX_EARLY_EXIT,
    JSON_HEADERS,
    TIMEOUT,
    envelope,
    post,
    rpc_error,
    rpc_result,
    running_app,
    send_params,
    served,
    stream,
)

pytestmark = pytest.mark.anyio

ALICE = {"X-API-Key": "alice-key"}
BOB = {"X-API-Key": "bob-key"}
CAROL = {"Authorization": "Bearer carol-token"}
CONFIG = ServerConfig(
    api_keys={"alice-key": "alice", "bob-key": "bob"},
    bearer_tokens={"carol-token": "carol"},
    push_notifications=True,
    extended_card=ExtendedCard(name="extended"),
)

JSONRPC_CALLS: list[tuple[str, Any]] = [
    ("SendMessage", send_params("hi")),
    ("SendStreamingMessage", send_params("hi")),
    ("GetTask", {"id": "t"}),
    ("ListTasks", {}),
    ("CancelTask", {"id": "t"}),
    ("SubscribeToTask", {"id": "t"}),
    ("CreateTaskPushNotificationConfig", {"taskId": "t", "url": "https://x"}),
    ("GetTaskPushNotificationConfig", {"taskId": "t", "id": "c"}),
    ("ListTaskPushNotificationConfigs", {"taskId": "t"}),
    ("DeleteTaskPushNotificationConfig", {"taskId": "t", "id": "c"}),
    ("GetExtendedAgentCard", {}),
    (
        "message/send",
        {"message": {"kind": "message", "messageId": "m", "role": "user", "parts": []}},
    ),
]

REST_CALLS: list[tuple[str, str]] = [
    ("POST", "/rest/message:send"),
    ("POST", "/rest/message:stream"),
    ("GET", "/rest/tasks/t"),
    ("GET", "/rest/tasks"),
    ("POST", "/rest/tasks/t:cancel"),
    ("GET", "/rest/tasks/t:subscribe"),
    ("POST", "/rest/tasks/t:subscribe"),
    ("POST", "/rest/tasks/t/pushNotificationConfigs"),
    ("GET", "/rest/tasks/t/pushNotificationConfigs"),
    ("GET", "/rest/tasks/t/pushNotificationConfigs/c"),
    ("DELETE", "/rest/tasks/t/pushNotificationConfigs/c"),
    ("GET", "/rest/extendedAgentCard"),
    ("POST", "/message:send"),
    ("POST", "/tasks/send"),
]

BAD_CREDENTIALS: list[dict[str, str]] = [
    {},
    {"X-API-Key": "wrong"},
    {"X-API-Key": ""},
    {"X-API-Key": "alice-key "},
    {"Authorization": "Bearer wrong"},
    {"Authorization": "Bearer "},
    {"Authorization": "Basic YWxpY2U6cHc="},
    {"Authorization": "alice-key"},
    {"X-Api-Token": "alice-key"},
]


async def _rest(
    client: QuartClient, method: str, path: str, headers: dict[str, str], body: Any = None
) -> tuple[int, dict[str, str], bytes]:
    response = await client.open(
        path,
        method=method,
        data=json.dumps(body).encode() if body is not None else b"",
        headers={**JSON_HEADERS, **headers},
    )
    return response.status_code, dict(response.headers), await response.get_data(as_text=False)


async def test_every_route_needs_credentials() -> None:
    with anyio.fail_after(TIMEOUT * 2):
        async with running_app(config=CONFIG) as client:
            for credentials in BAD_CREDENTIALS:
                for method, params in JSONRPC_CALLS:
                    status, headers, raw = await post(
                        client, "/", envelope(method, params), credentials
                    )
                    assert status == 401, (method, credentials)
                    assert "www-authenticate" in {k.lower() for k in headers}
                    assert json.loads(raw)["error"]["code"] == -32051
                for method, path in REST_CALLS:
                    status, headers, _ = await _rest(client, method, path, credentials, {})
                    assert status == 401, (method, path, credentials)
                    assert {k.lower(): v for k, v in headers.items()}["www-authenticate"] == (
                        'Bearer realm="a2a", ApiKey realm="a2a", header="X-API-Key"'
                    )
            # the public card is public
            for path in ("/.well-known/agent-card.json", "/.well-known/agent.json"):
                response = await client.get(path)
                assert response.status_code == 200


async def test_the_card_advertises_the_schemes() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=CONFIG) as client:
            card = await (await client.get("/.well-known/agent-card.json")).get_json()
            schemes = card["securitySchemes"]
            assert schemes["apiKey"]["apiKeySecurityScheme"] == {
                "location": "header",
                "name": "X-API-Key",
                "description": "API key",
            }
            assert schemes["bearer"]["httpAuthSecurityScheme"] == {
                "scheme": "Bearer",
                "description": "Bearer token",
            }
            assert card["securityRequirements"] == [
                {"schemes": {"apiKey": {}}},
                {"schemes": {"bearer": {}}},
            ]


async def test_principals_reach_the_agent() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=CONFIG) as client:
            for headers, principal in ((ALICE, "alice"), (BOB, "bob"), (CAROL, "carol")):
                result = await rpc_result(
                    client, "SendMessage", send_params("whoami"), headers=headers
                )
                assert result["message"]["parts"][0]["text"] == f"{principal}|"
            lower = {"authorization": "bearer carol-token"}
            result = await rpc_result(client, "SendMessage", send_params("whoami"), headers=lower)
            assert result["message"]["parts"][0]["text"] == "carol|"


async def test_one_principal_cannot_touch_anothers_tasks() -> None:
    with anyio.fail_after(TIMEOUT * 2):
        async with running_app(config=CONFIG) as client:
            done = (await rpc_result(client, "SendMessage", send_params("x"), headers=ALICE))[
                "task"
            ]
            waiting = (
                await rpc_result(client, "SendMessage", send_params("input"), headers=ALICE)
            )["task"]
            await rpc_result(
                client,
                "CreateTaskPushNotificationConfig",
                {"taskId": done["id"], "id": "c", "url": "https://a.example"},
                headers=ALICE,
            )

            for task in (done, waiting):
                tid = task["id"]
                for method, params in (
                    ("GetTask", {"id": tid}),
                    ("CancelTask", {"id": tid}),
                    ("SendMessage", send_params("hijack", task_id=tid)),
                    ("CreateTaskPushNotificationConfig", {"taskId": tid, "url": "https://b"}),
                    ("GetTaskPushNotificationConfig", {"taskId": tid, "id": "c"}),
                    ("ListTaskPushNotificationConfigs", {"taskId": tid}),
                    ("DeleteTaskPushNotificationConfig", {"taskId": tid, "id": "c"}),
                ):
                    for intruder in (BOB, CAROL):
                        error = await rpc_error(client, method, params, headers=intruder)
                        assert error["code"] == -32001, (method, intruder)
                # SSE subscribe: a plain JSON error, as for an unknown task
                _, headers, raw = await stream(
                    client, "/", envelope("SubscribeToTask", {"id": tid}), BOB
                )
                assert headers["content-type"] == "application/json"
                assert json.loads(raw)["error"]["code"] == -32001
                _, _, raw = await stream(
                    client,
                    "/",
                    envelope("SendStreamingMessage", send_params("hijack", task_id=tid)),
                    BOB,
                )
                assert json.loads(raw)["error"]["code"] == -32001
                # REST: 404 everywhere, like an unknown task
                for method, path in (
                    ("GET", f"/rest/tasks/{tid}"),
                    ("POST", f"/rest/tasks/{tid}:cancel"),
                    ("GET", f"/rest/tasks/{tid}:subscribe"),
                    ("POST", f"/rest/tasks/{tid}:subscribe"),
                    ("GET", f"/rest/tasks/{tid}/pushNotificationConfigs"),
                    ("GET", f"/rest/tasks/{tid}/pushNotificationConfigs/c"),
                    ("DELETE", f"/rest/tasks/{tid}/pushNotificationConfigs/c"),
                ):
                    status, _, raw = await _rest(client, method, path, BOB, {})
                    assert status == 404, (method, path)
                    assert json.loads(raw)["error"]["details"][0]["reason"] == "TASK_NOT_FOUND"

            listed = await rpc_result(client, "ListTasks", {}, headers=BOB)
            assert listed["tasks"] == []
            status, _, raw = await _rest(client, "GET", "/rest/tasks", CAROL)
            assert (status, json.loads(raw)["tasks"]) == (200, [])

            # alice still sees both, unchanged, and can finish hers
            mine = await rpc_result(client, "ListTasks", {}, headers=ALICE)
            assert {t["id"] for t in mine["tasks"]} == {done["id"], waiting["id"]}
            assert await rpc_result(client, "GetTask", {"id": waiting["id"]}, headers=ALICE) == (
                waiting
            )
            configs = await rpc_result(
                client, "ListTaskPushNotificationConfigs", {"taskId": done["id"]}, headers=ALICE
            )
            assert [c["id"] for c in configs["configs"]] == ["c"]
            resumed = await rpc_result(
                client, "SendMessage", send_params("Ada", task_id=waiting["id"]), headers=ALICE
            )
            assert resumed["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_extended_card_auth_switch() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=CONFIG) as client:
            card = await rpc_result(client, "GetExtendedAgentCard", {}, headers=CAROL)
            assert card["name"] == "extended"
        public = CONFIG.replace(extended_card_requires_auth=False)
        async with running_app(config=public) as client:
            card = await rpc_result(client, "GetExtendedAgentCard", {})
            assert card["name"] == "extended"
            status, _, raw = await _rest(client, "GET", "/rest/extendedAgentCard", {})
            assert (status, json.loads(raw)["name"]) == (200, "extended")
            # everything else still needs credentials
            status, _, raw = await post(client, "/", envelope("GetTask", {"id": "x"}))
            assert status == 401
            status, _, _ = await _rest(client, "GET", "/rest/tasks", {})
            assert status == 401


async def test_only_the_owner_manages_push_configs_over_both_bindings() -> None:
    with anyio.fail_after(TIMEOUT * 2):
        async with running_app(config=CONFIG.replace(allow_private_push=True)) as client:
            task = (await rpc_result(client, "SendMessage", send_params("x"), headers=ALICE))[
                "task"
            ]
            tid = task["id"]
            hook = {"id": "c", "url": "http://127.0.0.1:9/hook"}
            rest = f"/rest/tasks/{tid}/pushNotificationConfigs"
            for intruder in (BOB, CAROL):
                # JSON-RPC: all four methods answer as for an unknown task (-32001).
                for method, params in (
                    ("CreateTaskPushNotificationConfig", {"taskId": tid, **hook}),
                    ("GetTaskPushNotificationConfig", {"taskId": tid, "id": "c"}),
                    ("ListTaskPushNotificationConfigs", {"taskId": tid}),
                    ("DeleteTaskPushNotificationConfig", {"taskId": tid, "id": "c"}),
                ):
                    error = await rpc_error(client, method, params, headers=intruder)
                    assert error["code"] == -32001, (method, intruder)
                # HTTP+JSON: all four routes are 404 TASK_NOT_FOUND.
                for method, path, body in (
                    ("POST", rest, hook),
                    ("GET", rest, None),
                    ("GET", f"{rest}/c", None),
                    ("DELETE", f"{rest}/c", None),
                ):
                    status, _, raw = await _rest(client, method, path, intruder, body)
                    assert status == 404, (method, path, intruder)
                    assert json.loads(raw)["error"]["details"][0]["reason"] == "TASK_NOT_FOUND"
            # Nothing was created by the intruders; the owner manages configs on both.
            listed = await rpc_result(
                client, "ListTaskPushNotificationConfigs", {"taskId": tid}, headers=ALICE
            )
            assert listed.get("configs", []) == []
            status, _, raw = await _rest(client, "POST", rest, ALICE, hook)
            assert (status, json.loads(raw)["id"]) == (200, "c")
            got = await rpc_result(
                client, "GetTaskPushNotificationConfig", {"taskId": tid, "id": "c"}, headers=ALICE
            )
            assert got == json.loads(raw)
            status, _, raw = await _rest(client, "GET", rest, ALICE)
            assert [c["id"] for c in json.loads(raw)["configs"]] == ["c"]
            status, _, _ = await _rest(client, "DELETE", f"{rest}/c", ALICE)
            assert status == 200
            # An intruder's delete of an existing config is refused, and changes nothing.
            await rpc_result(
                client, "CreateTaskPushNotificationConfig", {"taskId": tid, **hook}, headers=ALICE
            )
            status, _, _ = await _rest(client, "DELETE", f"{rest}/c", BOB)
            assert status == 404
            await rpc_result(
                client, "GetTaskPushNotificationConfig", {"taskId": tid, "id": "c"}, headers=ALICE
            )


@HTTPX_EARLY_EXIT  # httpx leaves its request-body generator unfinished when answered early
@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
async def test_early_refusals_leave_the_keep_alive_connection_usable(chunked: bool) -> None:
    """Two unauthenticated POSTs on one keep-alive connection: both get their 401.

    The 401 is answered without reading the body; the connection is then closed
    (``Connection: close``) rather than left with the unread rest of the body in it, which
    stalled the next request on that connection. The same holds for 413 and 415.
    """

    def body() -> bytes | AsyncIterator[bytes]:
        if not chunked:
            return b"x" * 900_000  # within max_body_bytes, more than the socket buffers

        async def chunks() -> AsyncIterator[bytes]:
            for _ in range(10):
                yield b"x" * 1000

        return chunks()

    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    with anyio.fail_after(TIMEOUT * 2):
        async with (
            served(config=CONFIG) as url,
            httpx.AsyncClient(limits=limits, timeout=TIMEOUT / 2) as http,
        ):
            for _ in range(2):
                response = await http.post(url, content=body(), headers=JSON_HEADERS)
                assert response.status_code == 401
                assert "www-authenticate" in response.headers
            # 415: refused before the body is read.
            text = {**JSON_HEADERS, **ALICE, "Content-Type": "text/plain"}
            response = await http.post(url, content=body(), headers=text)
            assert response.json()["error"]["code"] == -32005
            # 413: announced too large, refused unread, and the connection is closed.
            big = b"x" * (CONFIG.max_body_bytes + 1)
            response = await http.post(url, content=big, headers={**JSON_HEADERS, **ALICE})
            assert response.status_code == 413
            assert response.headers["connection"] == "close"
            # And the client carries on normally.
            task = await http.post(
                url,
                content=envelope("SendMessage", send_params("x")),
                headers={**JSON_HEADERS, **ALICE},
            )
            assert task.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
