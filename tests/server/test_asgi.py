"""The ASGI fast path for JSON-RPC on ``POST /`` (server/fastpath.py, server/asgi_stream.py).

Which path answered is told by counting calls of the Quart route (``app.handle_jsonrpc``).
The same requests sent with a query string go through the route, so the two answers can be
compared byte for byte (headers included).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from quart import Quart

from a2a_actors.server import ServerConfig, app as app_module, create_app
from a2a_actors.server.jsonrpc import handle_jsonrpc

from .agents import EXTENSION, scenario_agent
from .helpers import TIMEOUT, envelope, post, running_app, send_params, sse_events, stream

pytestmark = pytest.mark.anyio


@pytest.fixture
def route_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths the Quart JSON-RPC route answered."""
    calls: list[str] = []
    original = handle_jsonrpc

    async def counting(service: Any, request: Any) -> Any:
        calls.append(request.full_path)
        return await original(service, request)

    monkeypatch.setattr(app_module, "handle_jsonrpc", counting)
    return calls


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


async def test_fast_path_answers_like_the_route(route_calls: list[str]) -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            for body, headers in CASES:
                fast = await post(client, "/", body, headers)
                assert route_calls == [], body
                slow = await post(client, "/?via=quart", body, headers)
                assert route_calls == ["/?via=quart"], body
                route_calls.clear()
                assert fast[0] == slow[0], body
                assert _comparable(fast[1]) == _comparable(slow[1]), body
                fast_json, slow_json = json.loads(fast[2]), json.loads(slow[2])
                if "result" in fast_json:  # ids and timestamps differ between two calls
                    assert fast_json.keys() == slow_json.keys()
                    assert fast_json["result"].keys() == slow_json["result"].keys()
                else:
                    assert fast_json == slow_json, body


async def test_body_in_several_messages(route_calls: list[str]) -> None:
    body = envelope("SendMessage", send_params("hello"))
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            connection: Any
            headers = {"Content-Type": "application/json", "A2A-Version": "1.0"}
            async with client.request("/", method="POST", headers=headers) as connection:
                await connection.send(body[:10])
                await connection.send(body[10:])
                await connection.send_complete()
                data = b""
                while chunk := await connection.receive():
                    data += chunk
            assert connection.status_code == 200
            assert json.loads(data)["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            assert route_calls == []


async def test_oversized_body_read_in_part_is_replayed_to_quart(route_calls: list[str]) -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=ServerConfig(max_body_bytes=1000)) as client:
            connection: Any
            headers = {"Content-Type": "application/json", "A2A-Version": "1.0"}
            async with client.request("/", method="POST", headers=headers) as connection:
                await connection.send(b"x" * 600)
                await connection.send(b"x" * 600)
                await connection.send_complete()
                data = b""
                while chunk := await connection.receive():
                    data += chunk
            assert connection.status_code == 413
            assert json.loads(data)["error"]["code"] == -32600
            assert route_calls == ["/?"]


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


async def test_streams_are_answered_like_the_route(route_calls: list[str]) -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            for body, headers in STREAM_CASES:
                fast = await stream(client, "/", body, headers)
                assert route_calls == [], body
                slow = await stream(client, "/?via=quart", body, headers)
                assert route_calls == ["/?via=quart"], body
                route_calls.clear()
                assert fast[0] == slow[0], body
                assert _comparable(fast[1]) == _comparable(slow[1]), body
                if fast[1]["content-type"].startswith("text/event-stream"):
                    fast_events, slow_events = sse_events(fast[2]), sse_events(slow[2])
                    assert [e.event for e in fast_events] == [e.event for e in slow_events]
                    assert [_shape(json.loads(e.data)) for e in fast_events] == [
                        _shape(json.loads(e.data)) for e in slow_events
                    ], body
                else:
                    assert fast[2] == slow[2], body


async def test_a_stream_error_after_the_first_event_is_an_error_event(
    monkeypatch: pytest.MonkeyPatch, route_calls: list[str]
) -> None:
    from a2a_actors.runtime import SubscriberDropped, Subscription

    original = Subscription.__anext__

    async def dropped(self: Subscription) -> Any:
        if self.version >= 2:  # after the first event: as if the subscriber fell behind
            raise SubscriberDropped(self.task_id, self.version, 1)
        return await original(self)

    monkeypatch.setattr(Subscription, "__anext__", dropped)
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            status, _, body = await stream(
                client, "/", envelope("SendStreamingMessage", send_params("stream it"))
            )
    assert route_calls == []
    events = sse_events(body)
    assert status == 200
    assert events[0].event == "message"
    assert "task" in json.loads(events[0].data)["result"]
    assert events[-1].event == "error"
    assert json.loads(events[-1].data)["error"]["code"] == -32050


async def test_early_refusals_go_to_quart(route_calls: list[str]) -> None:
    with anyio.fail_after(TIMEOUT):
        config = ServerConfig(api_keys={"good-key": "alice"})
        async with running_app(config=config) as client:
            status, headers, _ = await post(client, "/", envelope("GetTask", {"id": "x"}))
            assert status == 401
            assert "www-authenticate" in _comparable(headers)
            assert len(route_calls) == 1
            status, _, _ = await post(
                client, "/", envelope("GetTask", {"id": "x"}), {"X-API-Key": "good-key"}
            )
            assert status == 200
            assert len(route_calls) == 1  # authenticated: the fast path answered


async def test_request_hooks_turn_the_fast_path_off(route_calls: list[str]) -> None:
    app: Quart = create_app(scenario_agent)
    seen: list[str] = []

    @app.before_request
    async def hook() -> None:
        seen.append("before")

    with anyio.fail_after(TIMEOUT):
        async with app.test_app() as test_app:
            client: Any = test_app.test_client()
            status, _, _ = await post(client, "/", envelope("GetTask", {"id": "x"}))
            assert status == 200
    assert seen == ["before"]
    assert len(route_calls) == 1
