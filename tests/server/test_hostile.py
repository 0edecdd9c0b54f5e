"""Hostile bodies: each gets its precise error, never a 500, and no other task changes."""

from __future__ import annotations

import json

import anyio
import pytest

from .helpers import TIMEOUT, post, rpc_result, running_app, send_params

pytestmark = pytest.mark.anyio

DEEP = 100_000


def _rpc(method: str, params_json: str) -> bytes:
    return f'{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{params_json}}}'.encode()


def _msg(message_json: str) -> bytes:
    return _rpc("SendMessage", f'{{"message":{message_json}}}')


GOOD_PART = '[{"text":"x"}]'

#: (label, body, expected JSON-RPC code)
JSONRPC_CASES: list[tuple[str, bytes, int]] = [
    ("empty body", b"", -32700),
    ("whitespace", b"   ", -32700),
    ("deep array", b"[" * DEEP + b"]" * DEEP, -32700),
    ("deep object", b'{"a":' * DEEP + b"1" + b"}" * DEEP, -32700),
    ("deep params", _rpc("GetTask", '{"id":' + "[" * DEEP + "]" * DEEP + "}"), -32700),
    (
        "deep data part",
        _msg(
            '{"messageId":"m","role":"ROLE_USER","parts":[{"data":'
            + "[" * DEEP
            + "]" * DEEP
            + "}]}"
        ),
        -32700,
    ),
    ("invalid utf-8", b'{"jsonrpc":"2.0","id":1,"method":"\xff\xfe"}', -32700),
    ("invalid utf-8 in params", _rpc("GetTask", '{"id":"') + b"\xc3\x28" + b'"}', -32700),
    ("lone surrogate", _rpc("GetTask", '{"id":"\\ud800"}'), -32700),
    ("raw NUL outside strings", b'{"jsonrpc":"2.0",\x00"id":1}', -32700),
    ("truncated", b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"', -32700),
    ("batch", b"[" + _rpc("GetTask", '{"id":"x"}') + b"]", -32600),
    ("id object", b'{"jsonrpc":"2.0","id":{},"method":"GetTask"}', -32600),
    ("id float overflow", b'{"jsonrpc":"2.0","id":1e400,"method":"GetTask"}', -32700),
    ("method array", b'{"jsonrpc":"2.0","id":1,"method":[]}', -32600),
    ("method NUL", b'{"jsonrpc":"2.0","id":1,"method":"Get\\u0000Task"}', -32601),
    ("params string", _rpc("GetTask", '"x"'), -32602),
    ("id null", _rpc("GetTask", '{"id":null}'), -32602),
    ("id number", _rpc("GetTask", '{"id":12}'), -32602),
    ("historyLength string", _rpc("GetTask", '{"id":"x","historyLength":"ten"}'), -32602),
    (
        "historyLength -huge",
        _rpc("GetTask", '{"id":"x","historyLength":-1' + "0" * 40 + "}"),
        -32602,
    ),
    ("message string", _rpc("SendMessage", '{"message":"hello"}'), -32602),
    ("parts object", _msg('{"messageId":"m","role":"ROLE_USER","parts":{}}'), -32602),
    ("parts empty", _msg('{"messageId":"m","role":"ROLE_USER","parts":[]}'), -32602),
    (
        "role unknown",
        _msg('{"messageId":"m","role":"ROLE_ROBOT","parts":' + GOOD_PART + "}"),
        -32602,
    ),
    ("role number", _msg('{"messageId":"m","role":99,"parts":' + GOOD_PART + "}"), -32602),
    (
        "two contents",
        _msg('{"messageId":"m","role":"ROLE_USER","parts":[{"text":"a","url":"b"}]}'),
        -32602,
    ),
    (
        "raw not base64",
        _msg('{"messageId":"m","role":"ROLE_USER","parts":[{"raw":"***"}]}'),
        -32602,
    ),
    (
        "metadata string",
        _msg('{"messageId":"m","role":"ROLE_USER","parts":' + GOOD_PART + ',"metadata":"x"}'),
        -32602,
    ),
    (
        "configuration array",
        _rpc(
            "SendMessage",
            '{"message":{"messageId":"m","role":"ROLE_USER","parts":'
            + GOOD_PART
            + '},"configuration":[]}',
        ),
        -32602,
    ),
    ("pageSize zero", _rpc("ListTasks", '{"pageSize":0}'), -32602),
    ("status bogus", _rpc("ListTasks", '{"status":"TASK_STATE_BOGUS"}'), -32602),
    ("timestamp bogus", _rpc("ListTasks", '{"statusTimestampAfter":"yesterday"}'), -32602),
    ("push url missing", _rpc("CreateTaskPushNotificationConfig", '{"taskId":"t"}'), -32602),
    ("NUL in task id", _rpc("GetTask", '{"id":"a\\u0000b"}'), -32001),
    ("huge task id", _rpc("GetTask", '{"id":"' + "x" * 500_000 + '"}'), -32001),
    (
        "unknown task follow-up",
        _msg('{"messageId":"m","role":"ROLE_USER","taskId":"\\u0000","parts":' + GOOD_PART + "}"),
        -32001,
    ),
]


async def test_jsonrpc_barrage_leaves_other_tasks_untouched() -> None:
    with anyio.fail_after(TIMEOUT * 3):
        async with running_app() as client:
            before = (await rpc_result(client, "SendMessage", send_params("keep me")))["task"]
            waiting = (await rpc_result(client, "SendMessage", send_params("input")))["task"]
            for label, body, code in JSONRPC_CASES:
                status, _, raw = await post(client, "/", body)
                assert status == 200, label
                answer = json.loads(raw)
                assert answer["error"]["code"] == code, (label, answer)
                # a streaming method with the same bad body answers the same way, not as SSE
                if b'"method":"SendMessage"' in body:
                    streaming = body.replace(b'"SendMessage"', b'"SendStreamingMessage"')
                    status, headers, raw = await post(client, "/", streaming)
                    assert headers["content-type"] == "application/json", label
                    assert json.loads(raw)["error"]["code"] == code, label
            after = await rpc_result(client, "GetTask", {"id": before["id"]})
            assert after == before
            still = await rpc_result(client, "GetTask", {"id": waiting["id"]})
            assert still == waiting
            resumed = await rpc_result(
                client, "SendMessage", send_params("Ada", task_id=waiting["id"])
            )
            assert resumed["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_rest_barrage() -> None:
    with anyio.fail_after(TIMEOUT * 3):
        async with running_app() as client:
            before = (await rpc_result(client, "SendMessage", send_params("keep me")))["task"]
            cases: list[tuple[str, str, bytes, int]] = [
                ("POST", "/rest/message:send", b"", 400),
                ("POST", "/rest/message:send", b"[" * DEEP + b"]" * DEEP, 400),
                ("POST", "/rest/message:send", b'{"message":"x"}', 400),
                ("POST", "/rest/message:send", b"\xff\xfe", 400),
                ("POST", "/rest/message:send", b"[]", 400),
                ("POST", "/rest/message:stream", b'{"message":{"parts":5}}', 400),
                ("POST", f"/rest/tasks/{before['id']}:cancel", b"[1,2]", 400),
                ("POST", "/rest/tasks/%00:cancel", b"{}", 404),
                ("GET", "/rest/tasks?pageSize=abc", b"", 400),
                ("GET", "/rest/tasks?pageSize=0", b"", 400),
                ("GET", "/rest/tasks?status=nonsense", b"", 400),
                ("GET", "/rest/tasks?includeArtifacts=maybe", b"", 400),
                ("GET", f"/rest/tasks/{before['id']}?historyLength=-3", b"", 400),
                ("GET", "/rest/tasks/" + "x" * 10_000, b"", 404),
                ("POST", f"/rest/tasks/{before['id']}/pushNotificationConfigs", b"{}", 400),
            ]
            for method, path, body, expected in cases:
                response = await client.open(
                    path,
                    method=method,
                    data=body,
                    headers={"A2A-Version": "1.0", "Content-Type": "application/json"},
                )
                assert response.status_code == expected, (method, path, body[:40])
                error = (await response.get_json())["error"]
                assert error["code"] == expected
                assert error["details"][0]["@type"].endswith("ErrorInfo")
            after = await rpc_result(client, "GetTask", {"id": before["id"]})
            assert after == before
