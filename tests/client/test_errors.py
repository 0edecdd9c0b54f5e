"""How replies become typed errors: A2A bodies, bare HTTP statuses, broken connections.

The peer is an ``httpx.MockTransport``: these are the replies no well-behaved agent sends on
purpose (a 401 from a proxy, a plain-text 404, a 429 with Retry-After, an HTML 502).
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Callable
from typing import Any

import anyio
import httpx
import pytest

from a2a_actors.client import A2AClient, A2AConnectionError, EventStream
from a2a_actors.client._errors import error_from_http, parse_retry_after
from a2a_actors.protocol._errors import (
    A2AError,
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    ServerBusyError,
    TaskNotFoundError,
    UnauthenticatedError,
    UnsupportedOperationError,
)
from a2a_actors.protocol._models import StreamResponse, TaskState

TIMEOUT = 5.0
Handler = Callable[[httpx.Request], httpx.Response]


def client_for(handler: Handler, binding: str = "JSONRPC") -> A2AClient:
    http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return A2AClient("http://agent.test/a2a", binding=binding, http_client=http)


def reply(status: int, body: bytes | str = b"", **headers: str) -> Handler:
    content = body.encode() if isinstance(body, str) else body
    return lambda request: httpx.Response(status, content=content, headers=headers)


async def get_task_error(handler: Handler, binding: str = "JSONRPC") -> A2AError:
    """The error of one GetTask (callers hold the fail_after guard)."""
    async with client_for(handler, binding) as client:
        with pytest.raises(A2AError) as caught:
            await client.get_task("t-1")
    return caught.value


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
@pytest.mark.parametrize(
    ("status", "body", "headers", "expected", "retry_after"),
    [
        (401, "Unauthorized", {"www-authenticate": "Bearer"}, UnauthenticatedError, None),
        (403, "", {}, UnauthenticatedError, None),
        (404, "Not Found", {"content-type": "text/plain"}, MethodNotFoundError, None),
        (405, "", {}, MethodNotFoundError, None),
        (400, "bad", {}, InvalidRequestError, None),
        (429, "slow down", {"retry-after": "7"}, ServerBusyError, 7.0),
        (503, "", {"retry-after": "2"}, ServerBusyError, 2.0),
        (503, "", {}, InternalError, None),
        (502, "<html>Bad Gateway</html>", {"content-type": "text/html"}, InternalError, None),
    ],
)
async def test_http_status_without_a2a_body(
    binding: str,
    status: int,
    body: str,
    headers: dict[str, str],
    expected: type[A2AError],
    retry_after: float | None,
) -> None:
    with anyio.fail_after(TIMEOUT):
        error = await get_task_error(reply(status, body, **headers), binding)
        assert type(error) is expected
        assert error.remote
        assert error.message.startswith(f"HTTP {status} from http://agent.test/a2a")
        assert error.metadata["httpStatus"] == str(status)
        if body:
            assert body in error.message
        if retry_after is not None:
            assert isinstance(error, ServerBusyError)
            assert error.retry_after == retry_after


async def test_jsonrpc_error_kept_verbatim() -> None:
    with anyio.fail_after(TIMEOUT):
        info = {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "TASK_NOT_FOUND",
            "domain": "a2a-protocol.org",
            "metadata": {"taskId": "t-1"},
        }
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32001, "message": "gone", "data": [info]},
        }
        error = await get_task_error(reply(200, json.dumps(body)))
        assert isinstance(error, TaskNotFoundError)
        assert (error.code, error.message, error.data, error.remote) == (
            -32001,
            "gone",
            [info],
            True,
        )
        assert error.metadata == {"taskId": "t-1"}


async def test_jsonrpc_error_with_http_error_status() -> None:
    """Our server answers capacity errors with 429 and a JSON-RPC body: both are read."""
    with anyio.fail_after(TIMEOUT):
        body = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32050, "message": "busy"}}
        error = await get_task_error(reply(429, json.dumps(body), **{"retry-after": "3"}))
        assert isinstance(error, ServerBusyError)
        assert error.message == "busy"
        assert error.retry_after == 3.0


async def test_unknown_jsonrpc_code_keeps_the_code() -> None:
    with anyio.fail_after(TIMEOUT):
        body = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32099, "message": "custom"}}
        error = await get_task_error(reply(200, json.dumps(body)))
        assert type(error) is A2AError
        assert error.code == -32099
        assert error.message == "custom"


async def test_rest_status_body_mapped_by_reason() -> None:
    with anyio.fail_after(TIMEOUT):
        body = {
            "error": {
                "code": 400,
                "status": "FAILED_PRECONDITION",
                "message": "terminal",
                "details": [
                    {
                        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                        "reason": "UNSUPPORTED_OPERATION",
                        "domain": "a2a-protocol.org",
                        "metadata": {"taskId": "t-1"},
                    }
                ],
            }
        }
        error = await get_task_error(reply(400, json.dumps(body)), "HTTP+JSON")
        assert isinstance(error, UnsupportedOperationError)
        assert error.message == "terminal"
        assert error.code == -32004
        assert error.data == body["error"]["details"]
        assert error.metadata == {"taskId": "t-1"}


async def test_rest_status_body_without_reason_uses_the_status() -> None:
    with anyio.fail_after(TIMEOUT):
        body = {"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": "bad id"}}
        error = await get_task_error(reply(400, json.dumps(body)), "HTTP+JSON")
        assert type(error) is InvalidRequestError
        assert error.message == "bad id"


async def test_problem_json_body() -> None:
    with anyio.fail_after(TIMEOUT):
        body = {"type": "about:blank", "title": "Not Found", "status": 404, "detail": "no task"}
        error = await get_task_error(reply(404, json.dumps(body)), "HTTP+JSON")
        assert isinstance(error, MethodNotFoundError)
        assert error.message == "no task"


async def test_malformed_success_reply_is_a_local_internal_error() -> None:
    with anyio.fail_after(TIMEOUT):
        error = await get_task_error(reply(200, "not json"))
        assert isinstance(error, InternalError)
        assert not error.remote
        error = await get_task_error(reply(200, '{"jsonrpc": "2.0", "id": 1, "result": {"x": 1}}'))
        assert isinstance(error, InternalError)
        assert "invalid result" in error.message
        error = await get_task_error(reply(200, '{"id": 1}'), "HTTP+JSON")
        assert isinstance(error, InternalError)


@pytest.mark.parametrize(
    "failure",
    [
        httpx.ConnectError("refused"),
        httpx.ReadTimeout("slow"),
        httpx.RemoteProtocolError("peer closed connection"),
    ],
)
async def test_transport_failures(failure: httpx.TransportError) -> None:
    with anyio.fail_after(TIMEOUT):

        def handler(request: httpx.Request) -> httpx.Response:
            raise failure

        error = await get_task_error(handler)
        assert isinstance(error, A2AConnectionError)
        assert error.__cause__ is failure
        assert not error.remote


async def test_stream_error_before_first_event() -> None:
    """An error answered as plain JSON to a streaming request raises on entering."""
    body = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32004, "message": "terminal task"}}
    with anyio.fail_after(TIMEOUT):
        async with client_for(reply(200, json.dumps(body))) as client:
            with pytest.raises(UnsupportedOperationError, match="terminal task"):
                async with client.subscribe("t-1"):
                    pass  # pragma: no cover


def sse_frames(*objects: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return b"".join(f"{head}data: {json.dumps(o)}\r\n\r\n".encode() for o in objects)


async def test_stream_error_event_after_events() -> None:
    task = {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}
    error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "bad chunk"}}
    content = sse_frames({"jsonrpc": "2.0", "id": 1, "result": {"task": task}})
    content += sse_frames(error, event="error")
    handler = reply(200, content, **{"content-type": "text/event-stream"})
    with anyio.fail_after(TIMEOUT):
        async with client_for(handler) as client, client.stream_message("hi") as events:
            first = await events.__anext__()
            assert first.task is not None
            assert first.task.status.state is TaskState.WORKING
            with pytest.raises(InvalidParamsError, match="bad chunk"):
                await events.__anext__()


async def test_rest_stream_error_event() -> None:
    task = {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}
    status_body = {
        "error": {
            "code": 500,
            "status": "INTERNAL",
            "message": "agent crashed",
            "details": [{"reason": "INVALID_AGENT_RESPONSE", "domain": "a2a-protocol.org"}],
        }
    }
    content = sse_frames({"task": task}) + sse_frames(status_body, event="error")
    handler = reply(200, content, **{"content-type": "text/event-stream"})
    with anyio.fail_after(TIMEOUT):
        async with (
            client_for(handler, "HTTP+JSON") as client,
            client.stream_message("hi") as events,
        ):
            assert (await events.__anext__()).task is not None
            with pytest.raises(A2AError, match="agent crashed") as caught:
                await events.__anext__()
            assert caught.value.reason == "INVALID_AGENT_RESPONSE"


def test_parse_retry_after() -> None:
    now = _dt.datetime(2026, 1, 1, 12, 0, 0, tzinfo=_dt.UTC)
    assert parse_retry_after("120", now=now) == 120.0
    assert parse_retry_after("Thu, 01 Jan 2026 12:00:30 GMT", now=now) == 30.0
    assert parse_retry_after("Thu, 01 Jan 2026 11:00:00 GMT", now=now) == 0.0
    assert parse_retry_after("soon", now=now) is None
    assert parse_retry_after(None) is None


def test_error_from_http_busy_hint_from_details() -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32050, "message": "busy", "data": [{"metadata": {"retryAfter": "4"}}]},
    }
    error = error_from_http(503, {}, json.dumps(body).encode(), url="http://x")
    assert isinstance(error, ServerBusyError)
    assert error.retry_after == 4.0


async def test_rest_subscribe_falls_back_to_get() -> None:
    """POST …:subscribe (the prose) first; GET (the proto) when the route is missing."""
    task = {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"}}
    verbs: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        verbs.append(request.method)
        assert request.url.path == "/a2a/tasks/t-1:subscribe"
        if request.method == "POST":
            return httpx.Response(405, text="Method Not Allowed")
        frames = sse_frames({"task": task})
        return httpx.Response(200, content=frames, headers={"content-type": "text/event-stream"})

    with anyio.fail_after(TIMEOUT):
        async with (
            client_for(handler, "HTTP+JSON") as client,
            client.subscribe("t-1") as events,
        ):
            seen = [event async for event in events]
    assert verbs == ["POST", "GET"]
    assert seen[0].task is not None


async def test_rest_subscribe_does_not_retry_an_a2a_error() -> None:
    body = {
        "error": {
            "code": 404,
            "status": "NOT_FOUND",
            "message": "Task not found",
            "details": [{"reason": "TASK_NOT_FOUND", "domain": "a2a-protocol.org"}],
        }
    }
    verbs: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        verbs.append(request.method)
        return httpx.Response(404, json=body)

    with anyio.fail_after(TIMEOUT):
        async with client_for(handler, "HTTP+JSON") as client:
            with pytest.raises(TaskNotFoundError):
                await collect_events(client.subscribe("t-1"))
    assert verbs == ["POST"]


async def collect_events(stream: EventStream) -> list[StreamResponse]:
    async with stream:
        return [event async for event in stream]
