"""The request-check order, one row at a time, on both bindings (both backends)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from quart.testing import QuartClient

from a2a_actors.server import ServerConfig

from .helpers import (
    JSON_HEADERS,
    TIMEOUT,
    V1,
    envelope,
    post,
    rpc_result,
    running_app,
    send_params,
)

pytestmark = pytest.mark.anyio

AUTH = ServerConfig(api_keys={"good-key": "alice"}, max_body_bytes=1000)
SMALL = ServerConfig(max_body_bytes=1000)
BAD_JSON = b"{'jsonrpc': '2.0', 'method': 'SendMessage'}"  # a Python repr, as the TCK sends


async def _request(
    client: QuartClient, path: str, *, method: str = "POST", headers: dict[str, str], body: bytes
) -> tuple[int, dict[str, str], Any]:
    """Send headers and ``body`` as given (no header is added); decode a JSON answer."""
    connection: Any
    async with client.request(path, method=method, headers=headers) as connection:
        if body:
            await connection.send(body)
        await connection.send_complete()
        data = b""
        while chunk := await connection.receive():
            data += chunk
    status = connection.status_code
    assert status is not None
    answer = dict(connection.headers or {})
    return status, {k.lower(): v for k, v in answer.items()}, json.loads(data) if data else None


async def _unsent_body(client: QuartClient, path: str, headers: dict[str, str]) -> tuple[int, Any]:
    """A request announcing a huge body that is never sent: answered only if not read."""
    connection: Any
    async with client.request(path, method="POST", headers=headers) as connection:
        data = b""
        while chunk := await connection.receive():
            data += chunk
    assert connection.status_code is not None
    return connection.status_code, json.loads(data)


# -- row by row, JSON-RPC -----------------------------------------------------------------------


async def test_1_method_not_allowed() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=AUTH) as client:
            for method in ("GET", "PUT", "DELETE"):
                response = await client.open("/", method=method)
                assert response.status_code == 405
                assert "POST" in response.headers["Allow"].split(", ")
                assert response.headers["Content-Type"] == "application/json"


async def test_2_credentials_checked_before_the_body_is_read() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=AUTH) as client:
            headers = {**JSON_HEADERS, "Content-Length": str(10**9)}
            status, body = await _unsent_body(client, "/", headers)
            assert status == 401
            assert body["error"]["code"] == -32051
            status, body = await _unsent_body(client, "/rest/message:send", headers)
            assert status == 401
            assert body["error"]["status"] == "UNAUTHENTICATED"
            response = await client.post("/", data=b"{}", headers={**JSON_HEADERS})
            assert response.status_code == 401
            assert response.headers["WWW-Authenticate"].startswith("ApiKey")


async def test_3_content_type_before_size_and_json() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=SMALL) as client:
            headers = {**V1, "Content-Type": "text/plain"}
            status, _, body = await _request(client, "/", headers=headers, body=BAD_JSON)
            assert status == 200
            assert body["error"]["code"] == -32005
            assert body["error"]["data"][0]["reason"] == "CONTENT_TYPE_NOT_SUPPORTED"
            # even with an oversized body announced
            status, body = await _unsent_body(
                client, "/", {**headers, "Content-Length": str(10**9)}
            )
            assert (status, body["error"]["code"]) == (200, -32005)
            # JSON variants are accepted
            for content_type in ("application/json; charset=utf-8", "application/a2a+json"):
                status, _, body = await _request(
                    client,
                    "/",
                    headers={**V1, "Content-Type": content_type},
                    body=envelope("GetTask", {"id": "x"}),
                )
                assert body["error"]["code"] == -32001, content_type


async def test_4_body_size_before_json() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=SMALL) as client:
            status, body = await _unsent_body(
                client, "/", {**JSON_HEADERS, "Content-Length": str(10**9)}
            )
            assert status == 413
            assert body["error"]["code"] == -32052  # PayloadTooLargeError: not retryable
            assert "limit of 1000 bytes" in body["error"]["message"]
            # no Content-Length: counted while streaming
            status, _, body = await _request(
                client, "/", headers=dict(JSON_HEADERS), body=b"{" + b" " * 2000
            )
            assert status == 413
            # exactly at the limit is fine (and then it is the JSON that is wrong)
            status, _, body = await _request(
                client, "/", headers=dict(JSON_HEADERS), body=b"[" + b" " * 998 + b"]"
            )
            assert (status, body["error"]["code"]) == (200, -32600)


async def test_5_malformed_json() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            status, _, body = await post(client, "/", BAD_JSON, {"A2A-Version": "99.0"})
            assert status == 200
            assert json.loads(body)["error"]["code"] == -32700
            assert json.loads(body)["id"] is None


@pytest.mark.parametrize(
    "payload",
    [
        b'[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}]',
        b'{"jsonrpc":"1.0","id":1,"method":"GetTask","params":{"id":"x"}}',
        b'{"id":1,"method":"GetTask"}',
        b'{"jsonrpc":"2.0","id":true,"method":"GetTask"}',
        b'{"jsonrpc":"2.0","id":1,"method":42}',
        b'"just a string"',
    ],
)
async def test_6_not_a_single_jsonrpc_request(payload: bytes) -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            status, _, body = await post(client, "/", payload, {"A2A-Version": "99.0"})
            assert status == 200
            assert json.loads(body)["error"]["code"] == -32600


async def test_7_version() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            body = envelope("NoSuchMethod", {})
            for version in ("99.0", "2.0", "abc", "0.2"):
                _, _, raw = await post(client, "/", body, {"A2A-Version": version})
                error = json.loads(raw)["error"]
                assert error["code"] == -32009, version
                assert error["data"][0]["reason"] == "VERSION_NOT_SUPPORTED"
            # missing or empty means 0.3, which does not serve 1.0 methods
            for headers in ({"Content-Type": "application/json"}, {"A2A-Version": ""}):
                status, _, raw = await _request(
                    client,
                    "/",
                    headers={"Content-Type": "application/json", **headers},
                    body=envelope("GetTask", {"id": "x"}),
                )
                assert (status, raw["error"]["code"]) == (200, -32009)
            # any 1.x is served, and the query parameter counts too
            for version in ("1.0", "1", "1.1", "1.0.3"):
                _, _, raw = await post(
                    client, "/", envelope("GetTask", {"id": "x"}), {"A2A-Version": version}
                )
                assert json.loads(raw)["error"]["code"] == -32001, version
            status, _, raw = await _request(
                client,
                "/?A2A-Version=1.0",
                headers={"Content-Type": "application/json"},
                body=envelope("GetTask", {"id": "x"}),
            )
            assert raw["error"]["code"] == -32001


async def test_8_unknown_method() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            _, _, raw = await post(client, "/", envelope("message/sendd", {"bad": 1}))
            assert json.loads(raw)["error"]["code"] == -32601
            _, _, raw = await post(client, "/", envelope("NoSuchMethod"))
            assert json.loads(raw)["error"]["code"] == -32601


async def test_9_bad_params_name_the_field() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            params = {"message": {"role": "ROLE_USER", "parts": [{"text": "x"}]}}
            _, _, raw = await post(client, "/", envelope("SendMessage", params))
            error = json.loads(raw)["error"]
            assert error["code"] == -32602
            violations = [d for d in error["data"] if d["@type"].endswith("BadRequest")]
            assert violations[0]["fieldViolations"][0]["field"] == "message.messageId"
            _, _, raw = await post(
                client, "/", envelope("GetTask", {"id": "x", "historyLength": -1})
            )
            assert json.loads(raw)["error"]["code"] == -32602
            _, _, raw = await post(client, "/", envelope("GetTask", []))
            assert json.loads(raw)["error"]["code"] == -32602


# -- REST ----------------------------------------------------------------------------------------


async def test_rest_rows() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=SMALL) as client:
            response = await client.open("/rest/message:send", method="GET", headers=V1)
            assert response.status_code == 405
            assert response.headers["Allow"] == "POST"
            response = await client.open("/rest/no/such/route", method="GET", headers=V1)
            assert response.status_code == 404
            assert (await response.get_json())["error"]["details"][0]["reason"] == (
                "METHOD_NOT_FOUND"
            )

            headers = {**V1, "Content-Type": "text/plain"}
            status, answer, body = await _request(
                client, "/rest/message:send", headers=headers, body=BAD_JSON
            )
            assert status == 415
            assert answer["content-type"] == "application/json"
            assert body["error"]["code"] == 415
            assert body["error"]["details"][0]["reason"] == "CONTENT_TYPE_NOT_SUPPORTED"

            status, body = await _unsent_body(
                client, "/rest/message:send", {**JSON_HEADERS, "Content-Length": str(10**9)}
            )
            assert status == 413

            status, _, body = await _request(
                client, "/rest/message:send", headers=dict(JSON_HEADERS), body=BAD_JSON
            )
            assert status == 400
            assert body["error"]["details"][0]["reason"] == "PARSE_ERROR"

            status, _, body = await _request(
                client,
                "/rest/message:send",
                headers={"Content-Type": "application/json", "A2A-Version": "99.0"},
                body=json.dumps(send_params("x")).encode(),
            )
            assert status == 400
            assert body["error"]["details"][0]["reason"] == "VERSION_NOT_SUPPORTED"

            status, _, body = await _request(
                client, "/rest/message:send", headers=dict(JSON_HEADERS), body=b'{"message":{}}'
            )
            assert status == 400
            assert body["error"]["details"][0]["reason"] == "INVALID_PARAMS"
            assert body["error"]["status"] == "INVALID_ARGUMENT"


async def test_order_precedence() -> None:
    """Each earlier check wins over every later one."""
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=AUTH) as client:
            # wrong credentials + wrong content type + oversized + bad JSON → 401
            headers = {"X-API-Key": "bad", "Content-Type": "text/plain", "A2A-Version": "9"}
            status, _, _ = await _request(client, "/", headers=headers, body=b"x" * 5000)
            assert status == 401
            headers["X-API-Key"] = "good-key"
            # content type + oversized + bad JSON → -32005
            status, _, body = await _request(client, "/", headers=headers, body=b"x" * 5000)
            assert (status, body["error"]["code"]) == (200, -32005)
            headers["Content-Type"] = "application/json"
            # oversized + bad JSON → 413
            status, _, body = await _request(client, "/", headers=headers, body=b"x" * 5000)
            assert status == 413
            # bad JSON + bad version → -32700
            status, _, body = await _request(client, "/", headers=headers, body=b"x")
            assert body["error"]["code"] == -32700
            # bad version + unknown method + bad params → -32009
            body_bytes = envelope("Nope", {"id": 5})
            status, _, body = await _request(client, "/", headers=headers, body=body_bytes)
            assert body["error"]["code"] == -32009
            headers["A2A-Version"] = "1.0"
            status, _, body = await _request(client, "/", headers=headers, body=body_bytes)
            assert body["error"]["code"] == -32601
            # and with everything right, it works
            result = await rpc_result(
                client, "SendMessage", send_params("hi"), headers={"X-API-Key": "good-key"}
            )
            assert result["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
