"""A valid token for one subject cannot read, list, cancel, subscribe to, or continue
another subject's tasks, on JSON-RPC and REST (both backends)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from quart.testing import QuartClient

from a2a_actors.server import ServerConfig
from a2a_actors.server._config.trust import JWTOptions

from ..server.helpers import (
    JSON_HEADERS,
    TIMEOUT,
    envelope,
    rpc_error,
    rpc_result,
    running_app,
    send_params,
    stream,
)
from .keys import AUDIENCE, ISSUER, SigningKey, jwks

pytestmark = pytest.mark.anyio

KEY = SigningKey.make("k1", "ES256")
CONFIG = ServerConfig(jwt=JWTOptions(jwks=jwks(KEY), issuer=ISSUER, audience=AUDIENCE))


def _as(sub: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {KEY.token(sub)}"}


async def _rest(
    client: QuartClient, method: str, path: str, headers: dict[str, str], body: Any = None
) -> tuple[int, Any]:
    response = await client.open(
        path,
        method=method,
        data=json.dumps(body if body is not None else {}).encode(),
        headers={**JSON_HEADERS, **headers},
    )
    raw = await response.get_data(as_text=False)
    return response.status_code, json.loads(raw) if raw.strip() else None


async def test_one_subject_cannot_touch_anothers_tasks() -> None:
    alice, bob = _as("alice"), _as("bob")
    with anyio.fail_after(TIMEOUT * 2):
        async with running_app(config=CONFIG) as client:
            done = (await rpc_result(client, "SendMessage", send_params("x"), headers=alice))[
                "task"
            ]
            waiting = (
                await rpc_result(client, "SendMessage", send_params("input"), headers=alice)
            )["task"]
            assert waiting["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
            for task in (done, waiting):
                tid = task["id"]
                for method, params in (
                    ("GetTask", {"id": tid}),
                    ("CancelTask", {"id": tid}),
                    ("SendMessage", send_params("hijack", task_id=tid)),
                ):
                    error = await rpc_error(client, method, params, headers=bob)
                    assert error["code"] == -32001, method
                for method, params in (
                    ("SubscribeToTask", {"id": tid}),
                    ("SendStreamingMessage", send_params("hijack", task_id=tid)),
                ):
                    _, _, raw = await stream(client, "/", envelope(method, params), bob)
                    assert json.loads(raw)["error"]["code"] == -32001, method
                for method, path, body in (
                    ("GET", f"/rest/tasks/{tid}", None),
                    ("POST", f"/rest/tasks/{tid}:cancel", None),
                    ("GET", f"/rest/tasks/{tid}:subscribe", None),
                    ("POST", f"/rest/tasks/{tid}:subscribe", None),
                    ("POST", "/rest/message:send", send_params("hijack", task_id=tid)),
                    ("POST", "/rest/message:stream", send_params("hijack", task_id=tid)),
                ):
                    status, answer = await _rest(client, method, path, bob, body)
                    assert status == 404, (method, path)
                    assert answer["error"]["details"][0]["reason"] == "TASK_NOT_FOUND"
            assert (await rpc_result(client, "ListTasks", {}, headers=bob))["tasks"] == []
            status, listed = await _rest(client, "GET", "/rest/tasks", bob)
            assert (status, listed["tasks"]) == (200, [])

            # a fresh token for the same subject (another iat/exp) is the same caller
            mine = await rpc_result(client, "ListTasks", {}, headers=_as("alice"))
            assert {t["id"] for t in mine["tasks"]} == {done["id"], waiting["id"]}
            assert await rpc_result(client, "GetTask", {"id": waiting["id"]}, headers=alice) == (
                waiting
            )
            resumed = await rpc_result(
                client, "SendMessage", send_params("Ada", task_id=waiting["id"]), headers=alice
            )
            assert resumed["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
