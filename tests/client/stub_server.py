"""A tiny scripted ASGI server on Hypercorn (trio) for the client's edge-case tests.

Each route is a coroutine ``(StubRequest) -> StubResponse``; every request is recorded. A
response can stream its body in chunks and then *break the connection* (``then_fail``): the
app raises after the last chunk, so Hypercorn drops the connection without ending the chunked
body, which is exactly what a crashed agent or a cut network looks like to the client.

``serve_stub(app)`` binds 127.0.0.1:0 in the running trio nursery and yields the base URL;
leaving the block cancels the server.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any, cast

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

__all__ = [
    "StubApp",
    "StubRequest",
    "StubResponse",
    "json_response",
    "jsonrpc_result",
    "serve_stub",
    "sse",
]

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class StubRequest:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class StubResponse:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    chunks: list[bytes] | None = None
    then_fail: bool = False


Handler = Callable[[StubRequest], Awaitable[StubResponse]]


def json_response(
    obj: Any, status: int = 200, headers: dict[str, str] | None = None
) -> StubResponse:
    return StubResponse(
        status,
        {"content-type": "application/json", **(headers or {})},
        json.dumps(obj).encode(),
    )


def jsonrpc_result(request: StubRequest, result: Any) -> StubResponse:
    return json_response({"jsonrpc": "2.0", "id": request.json().get("id"), "result": result})


def sse(*events: Any, then_fail: bool = False) -> StubResponse:
    """An SSE response with one ``data:`` event per object."""
    chunks = [f"data: {json.dumps(e)}\n\n".encode() for e in events]
    return StubResponse(
        200, {"content-type": "text/event-stream"}, chunks=chunks, then_fail=then_fail
    )


class StubApp:
    """Routes by (method, path); records every request in :attr:`requests`."""

    def __init__(self, routes: dict[tuple[str, str], Handler]) -> None:
        self.routes = routes
        self.requests: list[StubRequest] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = StubRequest(
            scope["method"],
            scope["path"],
            scope["query_string"].decode(),
            {k.decode().lower(): v.decode() for k, v in scope["headers"]},
            body,
        )
        self.requests.append(request)
        handler = self.routes.get((request.method, request.path))
        response = (
            await handler(request)
            if handler is not None
            else StubResponse(404, {"content-type": "text/plain"}, b"Not Found")
        )
        headers = [(k.encode(), v.encode()) for k, v in response.headers.items()]
        await send({"type": "http.response.start", "status": response.status, "headers": headers})
        for chunk in response.chunks or []:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        if response.then_fail:
            raise ConnectionAbortedError("stub: dropping the connection mid-stream")
        await send({"type": "http.response.body", "body": response.body, "more_body": False})


@asynccontextmanager
async def serve_stub(app: StubApp) -> AsyncIterator[str]:
    """Serve ``app`` on 127.0.0.1:0 (trio); yields ``http://127.0.0.1:PORT``."""
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    config.errorlog = None
    async with trio.open_nursery() as nursery:
        binds: list[str] = await nursery.start(partial(serve, cast(Any, app), config))
        try:
            yield binds[0]
        finally:
            nursery.cancel_scope.cancel()
