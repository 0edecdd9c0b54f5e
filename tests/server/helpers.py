"""Helpers for in-process server tests (Quart test client, on the running backend)."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
import httpx
import pytest
from quart.testing import QuartClient

from a2a_actors.protocol._sse import SSEEvent, SSEParser
from a2a_actors.server import ServerConfig, create_app, serve

from .agents import scenario_agent

TIMEOUT = 10.0
#: httpx's nested body generators are finalised by trio's GC hook when a stream is left
#: early (the outer one is closed, the inner ones are not); that is httpx's, not ours.
HTTPX_EARLY_EXIT = pytest.mark.filterwarnings(
    r"ignore:Async generator '(httpx|httpcore)\..*' was garbage collected:ResourceWarning"
)
V1 = {"A2A-Version": "1.0"}
JSON_HEADERS = {"Content-Type": "application/json", **V1}


@asynccontextmanager
async def running_app(
    target: object = scenario_agent, config: ServerConfig | None = None, **kwargs: Any
) -> AsyncIterator[QuartClient]:
    """A test client of ``create_app(target, config)`` with its lifespan running."""
    app = create_app(target, config, **kwargs)
    async with app.test_app() as test_app:
        client: QuartClient = test_app.test_client()  # type: ignore[assignment]
        yield client


def message(text: str, *, task_id: str = "", context_id: str = "", mid: str = "") -> dict[str, Any]:
    """A user message in 1.0 ProtoJSON."""
    msg: dict[str, Any] = {
        "messageId": mid or uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    }
    if task_id:
        msg["taskId"] = task_id
    if context_id:
        msg["contextId"] = context_id
    return msg


def send_params(text: str, **kwargs: Any) -> dict[str, Any]:
    config = kwargs.pop("configuration", None)
    params: dict[str, Any] = {"message": message(text, **kwargs)}
    if config is not None:
        params["configuration"] = config
    return params


def envelope(method: str, params: Any = None, *, rid: Any = 1) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        body["params"] = params
    return json.dumps(body).encode()


async def post(
    client: QuartClient, path: str, body: bytes, headers: Mapping[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    """POST raw bytes; (status, headers, body)."""
    response = await client.post(path, data=body, headers=dict(JSON_HEADERS | dict(headers or {})))
    return response.status_code, dict(response.headers), await response.get_data(as_text=False)


async def rpc(
    client: QuartClient,
    method: str,
    params: Any = None,
    *,
    headers: Mapping[str, str] | None = None,
    rid: Any = 1,
) -> dict[str, Any]:
    """One JSON-RPC call; the decoded response object (asserts HTTP 200)."""
    status, _, body = await post(client, "/", envelope(method, params, rid=rid), headers)
    assert status == 200, (status, body)
    decoded: dict[str, Any] = json.loads(body)
    return decoded


async def rpc_result(client: QuartClient, method: str, params: Any = None, **kw: Any) -> Any:
    """The ``result`` of a successful JSON-RPC call."""
    response = await rpc(client, method, params, **kw)
    assert "error" not in response, response
    return response["result"]


async def rpc_error(client: QuartClient, method: str, params: Any = None, **kw: Any) -> Any:
    """The ``error`` of a failing JSON-RPC call."""
    response = await rpc(client, method, params, **kw)
    assert "error" in response, response
    return response["error"]


def sse_events(body: bytes) -> list[SSEEvent]:
    parser = SSEParser()
    return [*parser.feed(body), *parser.close()]


def sse_data(body: bytes) -> list[Any]:
    """The decoded ``data:`` of every event of a complete SSE body."""
    return [json.loads(event.data) for event in sse_events(body)]


async def stream(
    client: QuartClient,
    path: str,
    body: bytes,
    headers: Mapping[str, str] | None = None,
    *,
    method: str = "POST",
) -> tuple[int, dict[str, str], bytes]:
    """A request whose (finite) SSE answer is read to the end."""
    response = await client.open(
        path, method=method, data=body, headers=dict(JSON_HEADERS | dict(headers or {}))
    )
    return response.status_code, dict(response.headers), await response.get_data(as_text=False)


@asynccontextmanager
async def open_stream(
    client: QuartClient,
    path: str,
    body: bytes,
    headers: Mapping[str, str] | None = None,
    *,
    method: str = "POST",
) -> AsyncIterator[AsyncIterator[SSEEvent]]:
    """An SSE request whose events are consumed as they arrive, until the stream ends.

    The Quart test clients cannot leave a streaming response early (quart-trio's waits
    forever after a disconnect), so consume to the end; disconnect tests use
    :func:`served` and httpx instead.
    """
    async with client.request(
        path, method=method, headers=dict(JSON_HEADERS | dict(headers or {}))
    ) as connection:
        await connection.send(body)
        await connection.send_complete()

        async def events() -> AsyncIterator[SSEEvent]:
            parser = SSEParser()
            while chunk := await connection.receive():  # the final body message is empty
                for event in parser.feed(chunk):
                    yield event

        yield events()


@asynccontextmanager
async def sse_lines(response: httpx.Response) -> AsyncIterator[AsyncIterator[str]]:
    """The lines of a streamed httpx response, closed when the block ends."""
    lines = response.aiter_lines()
    try:
        yield lines
    finally:
        await lines.aclose()  # type: ignore[attr-defined]


@asynccontextmanager
async def served(
    target: object = scenario_agent, config: ServerConfig | None = None
) -> AsyncIterator[str]:
    """``serve(target)`` on 127.0.0.1 (ephemeral port) for the block; yields the base URL."""
    async with anyio.create_task_group() as tg:
        url: str = await tg.start(partial(serve, target, config=config))
        try:
            yield url
        finally:
            tg.cancel_scope.cancel()
