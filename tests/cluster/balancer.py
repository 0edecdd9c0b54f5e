"""A load balancer for the cluster tests: a real HTTP proxy in front of a cluster's nodes.

Each request goes where a rule says, read from the request itself (method and path, and
the JSON-RPC method of a POST): :func:`new_tasks_to_first` sends every SendMessage and
SendStreamingMessage to the first node and everything else (cards, GetTask,
SubscribeToTask, CancelTask, …) to the second, so every later call about a task lands
on a node that does not own it — the worst a real balancer could do, made deterministic.
Bodies are streamed both ways (SSE included); hop-by-hop headers are dropped. A backend
that cannot be reached is a 502; one that dies mid-answer cuts the answer there.
"""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Callable, MutableMapping, Sequence
from typing import Any

import anyio
import anyio.abc
import httpx
from hypercorn.asyncio import serve as asyncio_serve
from hypercorn.config import Config as HypercornConfig

__all__ = ("Rule", "balance", "new_tasks_to_first")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Rule = Callable[[str, str, bytes], int]  # (HTTP method, path, body) -> backend index

_HOP_BY_HOP = {b"connection", b"keep-alive", b"transfer-encoding", b"host", b"content-length"}
_NEW_TASK = ("SendMessage", "SendStreamingMessage", "message/send", "message/stream")


def new_tasks_to_first(method: str, path: str, body: bytes) -> int:
    """0 for a SendMessage or SendStreamingMessage (JSON-RPC or REST), else 1."""
    if path.endswith(("/message:send", "/message:stream")):
        return 0
    if method == "POST" and body:
        try:
            called = json.loads(body).get("method")
        except (ValueError, AttributeError):
            return 1
        return 0 if called in _NEW_TASK else 1
    return 1


class _Proxy:
    """The ASGI app: one request in, the same request to the chosen backend, its answer out."""

    def __init__(self, backends: Sequence[str], rule: Rule, http: httpx.AsyncClient) -> None:
        self._backends = backends  # read at each request: filled once the nodes run
        self._rule = rule
        self._http = http

    async def __call__(
        self,
        scope: Scope,
        receive: Callable[[], Any],
        send: Callable[[Message], Any],
    ) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        index = self._rule(scope["method"], scope["path"], body)
        url = self._backends[index].rstrip("/") + scope["raw_path"].decode()
        if scope["query_string"]:
            url += "?" + scope["query_string"].decode()
        headers = [(k, v) for k, v in scope["headers"] if k.lower() not in _HOP_BY_HOP]
        request = self._http.build_request(scope["method"], url, headers=headers, content=body)
        try:
            response = await self._http.send(request, stream=True)
        except httpx.TransportError:  # the backend is gone: 502, as a balancer says it
            await send({"type": "http.response.start", "status": 502, "headers": []})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        try:
            out = [(k.lower(), v) for k, v in response.headers.raw if k.lower() not in _HOP_BY_HOP]
            await send(
                {"type": "http.response.start", "status": response.status_code, "headers": out}
            )
            try:
                async for chunk in response.aiter_raw():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
            except httpx.TransportError:
                pass  # the backend died mid-answer: the answer ends where it was cut
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            await response.aclose()


async def balance(
    backends: Sequence[str],
    rule: Rule = new_tasks_to_first,
    *,
    task_status: anyio.abc.TaskStatus[str] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Serve a balancer over ``backends`` on 127.0.0.1 (a free port) until cancelled;
    reports its base URL once the socket listens. asyncio only (Hypercorn's).

    ``backends`` is read at each request, so it may be filled after the balancer started
    (the nodes behind it advertise the balancer's URL, so they start after it).
    """
    sock = socket.create_server(("127.0.0.1", 0))
    host, port = sock.getsockname()[:2]
    config = HypercornConfig()
    config.bind = [f"fd://{sock.detach()}"]
    config.accesslog = None
    config.errorlog = logging.getLogger("tests.balancer")
    config.graceful_timeout = 1.0
    stop = anyio.Event()
    shield = anyio.CancelScope(shield=True)  # Hypercorn stops on its trigger, not cancelled
    timeout = httpx.Timeout(30.0, read=None)  # streams stay open as long as their task
    async with httpx.AsyncClient(timeout=timeout) as http, anyio.create_task_group() as tg:
        app = _Proxy(backends, rule, http)

        async def run() -> None:
            with shield:
                await asyncio_serve(app, config, shutdown_trigger=stop.wait)  # type: ignore[arg-type]

        tg.start_soon(run)
        try:
            task_status.started(f"http://{host}:{port}")
            await anyio.sleep_forever()
        finally:
            stop.set()
            shield.deadline = anyio.current_time() + 5.0
