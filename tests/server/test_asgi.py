"""The ASGI core (server/_http/asgi.py): one path for every A2A request, whatever its shape.

Every case of the former differential tests (the ASGI fast path against the Quart route)
is kept: each request is sent plainly and with a query string (which the Quart route used
to answer), and the two answers must be the same byte for byte (headers included), while
Quart's request hooks never see an A2A request.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from quart import Quart
from quart.testing import QuartClient

from a2a_actors.runtime import TaskContext, agent
from a2a_actors.server import ServerConfig, create_app

from .agents import EXTENSION, scenario_agent
from .helpers import (
    JSON_HEADERS,
    TIMEOUT,
    envelope,
    message,
    post,
    send_params,
    served,
    sse_events,
    stream,
)

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def hooked_app(
    config: ServerConfig | None = None,
) -> AsyncIterator[tuple[QuartClient, list[str], Quart]]:
    """A running app whose Quart ``before_request`` hook records every path Quart saw."""
    app = create_app(scenario_agent, config)
    seen: list[str] = []

    @app.before_request
    async def record() -> None:
        from quart import request

        seen.append(request.path)

    async with app.test_app() as test_app:
        client: QuartClient = test_app.test_client()  # type: ignore[assignment]
        yield client, seen, app


def _comparable(headers: dict[str, str]) -> dict[str, str]:
    return {k.lower(): v for k, v in headers.items() if k.lower() not in ("date", "server")}


CASES: list[tuple[bytes, dict[str, str]]] = [
    (envelope("GetTask", {"id": "nope"}, rid="r-7"), {}),
    (envelope("SendMessage", send_params("whoami")), {"A2A-Extensions": EXTENSION}),
    (b"{'jsonrpc': '2.0'}", {}),  # -32700
    (b'{"jsonrpc": "1.0", "id": 1, "method": "GetTask"}', {}),  # -32600
    (envelope("GetTask", {"id": "x"}), {"A2A-Version": "2.0"}),  # -32009
    (envelope("GetTask", {"id": "x"}), {"A2A-Version": ""}),  # 0.3 does not serve 1.0
    (envelope("NoSuchMethod", {}), {}),  # -32601
    (envelope("GetTask", {"bad": 1}), {}),  # -32602
    (envelope("tasks/get", {"id": "nope"}), {"A2A-Version": ""}),  # 0.3 caller
]


async def test_a_query_string_changes_no_answer() -> None:
    with anyio.fail_after(TIMEOUT):
        async with hooked_app() as (client, seen, _):
            for body, headers in CASES:
                plain = await post(client, "/", body, headers)
                queried = await post(client, "/?via=query", body, headers)
                assert plain[0] == queried[0], body
                assert _comparable(plain[1]) == _comparable(queried[1]), body
                plain_json, queried_json = json.loads(plain[2]), json.loads(queried[2])
                if "result" in plain_json:  # ids and timestamps differ between two calls
                    assert plain_json.keys() == queried_json.keys()
                    assert plain_json["result"].keys() == queried_json["result"].keys()
                else:
                    assert plain_json == queried_json, body
            assert seen == []  # Quart saw none of them


async def test_the_version_may_come_in_the_query_string() -> None:
    headers = {"Content-Type": "application/json"}
    with anyio.fail_after(TIMEOUT):
        async with hooked_app() as (client, _, _app):
            body = envelope("GetTask", {"id": "nope"})
            response = await client.post("/?A2A-Version=1.0", data=body, headers=headers)
            assert (await response.get_json())["error"]["code"] == -32001
            response = await client.post("/?A2A-Version=9", data=body, headers=headers)
            assert (await response.get_json())["error"]["code"] == -32009


async def test_body_in_several_messages() -> None:
    body = envelope("SendMessage", send_params("hello"))
    with anyio.fail_after(TIMEOUT):
        async with hooked_app() as (client, seen, _):
            connection: Any
            async with client.request("/", method="POST", headers=JSON_HEADERS) as connection:
                await connection.send(body[:10])
                await connection.send(body[10:])
                await connection.send_complete()
                data = b""
                while chunk := await connection.receive():
                    data += chunk
            assert connection.status_code == 200
            assert json.loads(data)["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            assert seen == []


async def test_an_oversized_body_read_in_part_is_refused_and_the_connection_closed() -> None:
    with anyio.fail_after(TIMEOUT):
        async with hooked_app(ServerConfig(max_body_bytes=1000)) as (client, seen, _):
            connection: Any
            async with client.request("/", method="POST", headers=JSON_HEADERS) as connection:
                await connection.send(b"x" * 600)
                await connection.send(b"x" * 600)
                await connection.send_complete()
                data = b""
                while chunk := await connection.receive():
                    data += chunk
            assert connection.status_code == 413
            assert dict(connection.headers)["connection"] == "close"
            assert json.loads(data)["error"]["code"] == -32052
            assert seen == []


async def test_a_body_that_does_not_arrive_in_time_is_408() -> None:
    with anyio.fail_after(TIMEOUT):
        async with hooked_app() as (client, _, app):
            app.config["BODY_TIMEOUT"] = 0.2
            for path in ("/", "/rest/message:send"):
                headers = {**JSON_HEADERS, "Content-Length": "100"}
                connection: Any
                async with client.request(path, method="POST", headers=headers) as connection:
                    await connection.send(b'{"jsonrpc"')  # and nothing more
                    data = b""
                    while chunk := await connection.receive():
                        data += chunk
                assert connection.status_code == 408, path
                assert dict(connection.headers)["connection"] == "close"
                answer = json.loads(data)
                code = answer["error"]["code"]
                assert code == (-32600 if path == "/" else 408), answer


def _shape(value: Any) -> Any:
    """``value`` with ids and timestamps (which differ between two calls) blanked."""
    if isinstance(value, dict):
        return {
            key: "*"
            if key in ("id", "taskId", "contextId", "messageId", "timestamp")
            else _shape(v)
            for key, v in value.items()
        }
    if isinstance(value, list):
        return [_shape(item) for item in value]
    return value


STREAM_CASES: list[tuple[bytes, dict[str, str]]] = [
    (envelope("SendStreamingMessage", send_params("stream it"), rid="s-1"), {}),
    (envelope("SendStreamingMessage", send_params("hello")), {"A2A-Extensions": EXTENSION}),
    (envelope("SendStreamingMessage", send_params("message back")), {}),
    (envelope("SendStreamingMessage", send_params("boom")), {}),
    (envelope("SubscribeToTask", {"id": "nope"}, rid=9), {}),  # refused before the first event
    (envelope("message/stream", send_params("stream it")), {"A2A-Version": ""}),  # 0.3 caller
]


async def test_streams_do_not_depend_on_the_query_string() -> None:
    with anyio.fail_after(TIMEOUT):
        async with hooked_app() as (client, seen, _):
            for body, headers in STREAM_CASES:
                plain = await stream(client, "/", body, headers)
                queried = await stream(client, "/?via=query", body, headers)
                assert plain[0] == queried[0], body
                assert _comparable(plain[1]) == _comparable(queried[1]), body
                if plain[1]["content-type"].startswith("text/event-stream"):
                    plain_events, queried_events = sse_events(plain[2]), sse_events(queried[2])
                    assert [e.event for e in plain_events] == [e.event for e in queried_events]
                    assert [_shape(json.loads(e.data)) for e in plain_events] == [
                        _shape(json.loads(e.data)) for e in queried_events
                    ], body
                else:
                    assert plain[2] == queried[2], body
            assert seen == []


async def test_rest_streams_are_written_by_the_same_writer() -> None:
    body = json.dumps({"message": message("stream it")}).encode()
    with anyio.fail_after(TIMEOUT):
        async with hooked_app() as (client, seen, _):
            status, headers, raw = await stream(client, "/rest/message:stream", body)
            assert status == 200
            assert headers["content-type"] == "text/event-stream"
            assert headers["cache-control"] == "no-store"
            events = sse_events(raw)
            assert "task" in json.loads(events[0].data)
            last = json.loads(events[-1].data)
            assert last["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
            task_id = json.loads(events[0].data)["task"]["id"]
            status, _, raw = await stream(
                client, f"/rest/tasks/{task_id}:subscribe", b"", method="GET"
            )
            assert status == 400  # a terminal task cannot be subscribed to: a JSON error
            assert json.loads(raw)["error"]["details"][0]["reason"] == "UNSUPPORTED_OPERATION"
            assert seen == []


async def test_a_stream_error_after_the_first_event_is_an_error_event(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from a2a_actors.runtime import SubscriberDropped, Subscription

    original = Subscription.__anext__

    async def dropped(self: Subscription) -> Any:
        if self.version >= 2:  # after the first event: as if the subscriber fell behind
            raise SubscriberDropped(self.task_id, self.version, 1)
        return await original(self)

    monkeypatch.setattr(Subscription, "__anext__", dropped)
    with anyio.fail_after(TIMEOUT):
        async with hooked_app() as (client, _, _app):
            status, _, body = await stream(
                client, "/", envelope("SendStreamingMessage", send_params("stream it"))
            )
            rest_status, _, rest_body = await stream(
                client, "/rest/message:stream", json.dumps({"message": message("stream")}).encode()
            )
    for code, raw in ((status, body), (rest_status, rest_body)):
        events = sse_events(raw)
        assert code == 200
        assert events[0].event == "message"
        assert events[-1].event == "error"
    assert "task" in json.loads(sse_events(body)[0].data)["result"]
    assert json.loads(sse_events(body)[-1].data)["error"]["code"] == -32050
    assert json.loads(sse_events(rest_body)[-1].data)["error"]["code"] == 429


async def test_early_refusals_are_answered_by_the_core_too() -> None:
    with anyio.fail_after(TIMEOUT):
        async with hooked_app(ServerConfig(api_keys={"good-key": "alice"})) as (client, seen, _):
            body = envelope("GetTask", {"id": "x"})
            status, headers, _ = await post(client, "/", body, {"Content-Length": str(len(body))})
            assert status == 401
            assert "www-authenticate" in _comparable(headers)
            assert _comparable(headers)["connection"] == "close"  # the body was not read
            status, _, _ = await post(
                client, "/", envelope("GetTask", {"id": "x"}), {"X-API-Key": "good-key"}
            )
            assert status == 200
            assert seen == []


async def test_quart_hooks_see_only_quart_routes() -> None:
    with anyio.fail_after(TIMEOUT):
        async with hooked_app() as (client, seen, _):
            status, _, _ = await post(client, "/", envelope("GetTask", {"id": "x"}))
            assert status == 200
            response = await client.get("/.well-known/agent-card.json")
            assert response.status_code == 200
            response = await client.get("/")  # 405 comes from Quart's routing
            assert response.status_code == 405
            response = await client.options("/rest/tasks")
            assert response.status_code == 200
            assert "GET" in response.headers["Allow"]
    assert seen == ["/.well-known/agent-card.json", "/", "/rest/tasks"]


async def _exchange(port: int, request: bytes, *, expect_continue: bool = False) -> bytes:
    """Send raw ``request`` bytes (head, then body after a 100 Continue if asked); read all."""
    head, _, body = request.partition(b"\r\n\r\n")
    async with await anyio.connect_tcp("127.0.0.1", port) as sock:
        if expect_continue:
            await sock.send(head + b"\r\n\r\n")
            interim = b""
            while b"\r\n\r\n" not in interim:
                interim += await sock.receive()
            assert interim.startswith(b"HTTP/1.1 100 "), interim
            await sock.send(body)
        else:
            await sock.send(request)
        received = b""
        with pytest.raises((anyio.EndOfStream, anyio.BrokenResourceError)):  # noqa: PT012
            while True:
                received += await sock.receive()
    return received


async def test_http_1_0_and_expect_100_continue() -> None:
    body = envelope("SendMessage", send_params("hi"))
    with anyio.fail_after(TIMEOUT):
        async with served() as url:
            port = int(url.rsplit(":", 1)[1])
            head = (
                "POST / HTTP/1.0\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\n"
                f"Content-Length: {len(body)}\r\n\r\n"
            )
            answer = await _exchange(port, head.encode() + body)  # closed after the answer
            assert answer.startswith(b"HTTP/1.1 200")
            result = json.loads(answer.partition(b"\r\n\r\n")[2])["result"]
            assert result["task"]["status"]["state"] == "TASK_STATE_COMPLETED"

            head = (
                "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                "A2A-Version: 1.0\r\nExpect: 100-continue\r\nConnection: close\r\n"
                f"Content-Length: {len(body)}\r\n\r\n"
            )
            answer = await _exchange(port, head.encode() + body, expect_continue=True)
            assert answer.startswith(b"HTTP/1.1 200"), answer
            result = json.loads(answer.partition(b"\r\n\r\n")[2])["result"]
            assert result["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_a_client_leaving_while_its_body_is_read_gets_nothing() -> None:
    with anyio.fail_after(TIMEOUT):
        async with served() as url:
            port = int(url.rsplit(":", 1)[1])
            head = (
                b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"A2A-Version: 1.0\r\nContent-Length: 1000\r\n\r\n"
            )
            async with await anyio.connect_tcp("127.0.0.1", port) as sock:
                await sock.send(head + b'{"jsonrpc": "2.0"')
            # the server carries on
            body = envelope("SendMessage", send_params("hi"))
            request = head.replace(b"1000", str(len(body)).encode()).replace(
                b"HTTP/1.1\r\n", b"HTTP/1.1\r\nConnection: close\r\n"
            )
            answer = await _exchange(port, request + body)
            assert answer.startswith(b"HTTP/1.1 200")


async def test_an_answer_that_leaves_the_body_unread_closes_the_connection() -> None:
    headers = {**JSON_HEADERS, "Content-Length": str(10**9)}  # too large to wait for
    with anyio.fail_after(TIMEOUT):
        async with hooked_app() as (client, seen, _):
            for path, method, status in [
                ("/no/such/path", "POST", 404),  # answered by Quart
                ("/", "GET", 405),  # answered by Quart's routing
                ("/rest/tasks", "GET", 200),  # a GET's body is never read
                ("/rest/no/such/route", "POST", 404),  # routed by the HTTP+JSON binding
            ]:
                connection: Any
                async with client.request(path, method=method, headers=headers) as connection:
                    data = b""
                    while chunk := await connection.receive():
                        data += chunk
                assert connection.status_code == status, path
                assert dict(connection.headers)["connection"] == "close", path
                assert json.loads(data), path
    assert seen == ["/no/such/path", "/"]


async def test_an_app_mounted_below_a_root_path() -> None:
    body = envelope("GetTask", {"id": "nope"})
    with anyio.fail_after(TIMEOUT):
        async with hooked_app() as (client, seen, _):
            response = await client.post("/api/", data=body, headers=JSON_HEADERS, root_path="/api")
            assert (await response.get_json())["error"]["code"] == -32001
            response = await client.get("/api/rest/tasks", headers=JSON_HEADERS, root_path="/api")
            assert response.status_code == 200
            response = await client.post(
                "/other/", data=body, headers=JSON_HEADERS, root_path="/api"
            )
            assert response.status_code == 404  # not below the root: Quart's 404
    assert len(seen) == 1  # only the path outside the root reached Quart


async def test_an_early_refusal_waits_a_little_for_the_rest_of_a_small_body(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from a2a_actors.server._http import asgi

    monkeypatch.setattr(asgi, "DRAIN_TIMEOUT", 0.1)
    headers = {**JSON_HEADERS, "Content-Length": "100"}
    with anyio.fail_after(TIMEOUT):
        async with hooked_app(ServerConfig(api_keys={"k": "alice"})) as (client, _, _app):
            for rest in (b"x" * 90, b""):  # the rest of the body comes, or never does
                connection: Any
                async with client.request("/", method="POST", headers=headers) as connection:
                    await connection.send(b"x" * 10)
                    if rest:
                        await connection.send(rest)
                    data = b""
                    while chunk := await connection.receive():
                        data += chunk
                assert connection.status_code == 401
                assert dict(connection.headers)["connection"] == "close"
                assert json.loads(data)["error"]["code"] == -32051


async def test_a_unary_call_whose_client_leaves_runs_to_its_end() -> None:
    # docs/architecture.md: once the body is read, a unary call is not watched for a
    # disconnect on any path; the task finishes and only the answer is dropped.
    started, release = anyio.Event(), anyio.Event()
    task_ids: list[str] = []

    @agent(name="gated")
    async def gated(ctx: TaskContext) -> str:
        task_ids.append(ctx.task_id)
        started.set()
        await release.wait()
        return "finished"

    body = envelope("SendMessage", send_params("hello"))
    with anyio.fail_after(TIMEOUT):
        app = create_app(gated)
        async with app.test_app() as test_app:
            client: QuartClient = test_app.test_client()  # type: ignore[assignment]
            for path in ("/", "/?via=query"):
                started, release = anyio.Event(), anyio.Event()
                connection: Any
                async with client.request(path, method="POST", headers=JSON_HEADERS) as connection:
                    await connection.send(body)
                    await connection.send_complete()
                    await started.wait()
                    await connection.disconnect()
                    # A watcher, were there one, has now seen the disconnect and cancelled.
                    await anyio.wait_all_tasks_blocked()
                    release.set()
                status, _, answer = await post(
                    client, "/", envelope("GetTask", {"id": task_ids[-1]})
                )
                assert status == 200
                state = json.loads(answer)["result"]["status"]["state"]
                assert state == "TASK_STATE_COMPLETED", path
