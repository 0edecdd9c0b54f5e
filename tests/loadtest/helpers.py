"""Helpers of the ``a2a-actors bench`` tests: real servers on 127.0.0.1, the CLI as a process.

The bench command always runs as its own process (with its generator processes below it),
as a user runs it; the servers it measures run in the test's trio loop: our agents through
:func:`a2a_actors.server._serve`, misbehaving ones as a few lines of raw HTTP on
``trio.serve_tcp`` (:func:`raw_server`).
"""

from __future__ import annotations

import contextlib
import json
import os
import ssl
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

import trio

from a2a_actors.server import ServerConfig, serve

#: Short runs: the machine is small and shared; the numbers are not what is tested.
QUICK = ("--duration", "0.6", "--warmup", "0.2", "--concurrency", "4")
TIMEOUT = 60.0


@dataclass(frozen=True)
class BenchRun:
    """What one ``a2a-actors bench`` process did."""

    status: int
    stdout: str
    stderr: str

    def objects(self) -> list[dict[str, Any]]:
        """The ``--json`` objects it printed."""
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]

    def only(self) -> dict[str, Any]:
        """The one ``--json`` object it printed."""
        objects = self.objects()
        assert len(objects) == 1, self
        return objects[0]


async def bench(*args: str, env: Mapping[str, str] | None = None) -> BenchRun:
    """Run ``a2a-actors bench ARGS`` in a process (with ``env`` added) and wait for it."""
    command = [sys.executable, "-m", "a2a_actors.loadtest._cli", *args]
    done = await trio.run_process(
        command,
        capture_stdout=True,
        capture_stderr=True,
        check=False,
        env={**os.environ, **env} if env else None,
    )
    return BenchRun(done.returncode, done.stdout.decode(), done.stderr.decode())


@asynccontextmanager
async def served(agent: object, config: ServerConfig | None = None) -> AsyncIterator[str]:
    """Serve ``agent`` on 127.0.0.1 (port 0) for the block; yields its base URL."""
    async with trio.open_nursery() as nursery:
        url: str = await nursery.start(partial(serve, agent, config=config))
        try:
            yield url
        finally:
            nursery.cancel_scope.cancel()


@dataclass(frozen=True)
class Request:
    """One request a raw server received (``number`` counts from 0 over all connections)."""

    number: int
    line: str
    body: bytes

    @property
    def rpc(self) -> dict[str, Any]:
        """The body as JSON."""
        decoded: dict[str, Any] = json.loads(self.body)
        return decoded


#: A raw server's answer to a request: response bytes, or None to close the connection.
Handler = Callable[[Request], Awaitable[bytes | None]]


def http(
    body: bytes | str, *, status: str = "200 OK", content_type: str = "application/json"
) -> bytes:
    """A complete response with a Content-Length."""
    data = body.encode() if isinstance(body, str) else body
    head = (
        f"HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {len(data)}\r\n\r\n"
    )
    return head.encode() + data


def rpc_result(result: object) -> bytes:
    """A JSON-RPC success response (HTTP 200)."""
    return http(json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}))


def task(state: str, task_id: str = "t-1") -> dict[str, Any]:
    """A Task in ``TASK_STATE_<state>``."""
    return {"id": task_id, "contextId": "c-1", "status": {"state": f"TASK_STATE_{state}"}}


async def _connection(stream: trio.abc.Stream, handler: Handler, counter: list[int]) -> None:
    # The generator drops its connections when its window ends, answers in flight or not.
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
        await _serve_connection(stream, handler, counter)


async def _serve_connection(stream: trio.abc.Stream, handler: Handler, counter: list[int]) -> None:
    buffer = bytearray()
    async with stream:
        while True:
            while (end := buffer.find(b"\r\n\r\n")) < 0:
                data = await stream.receive_some()
                if not data:
                    return
                buffer += data
            head = bytes(buffer[:end]).decode()
            length = 0
            for line in head.split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            while len(buffer) < end + 4 + length:
                data = await stream.receive_some()
                if not data:
                    return
                buffer += data
            body = bytes(buffer[end + 4 : end + 4 + length])
            del buffer[: end + 4 + length]
            line = head.split("\r\n")[0]
            if "/.well-known/" in line:  # these servers have no card
                await stream.send_all(http("no card", status="404 Not Found"))
                continue
            request = Request(counter[0], line, body)
            counter[0] += 1
            answer = await handler(request)
            if answer is None:
                return
            await stream.send_all(answer)


@asynccontextmanager
async def raw_server(handler: Handler, tls: ssl.SSLContext | None = None) -> AsyncIterator[str]:
    """An HTTP/1.1 server on 127.0.0.1 answering each request with ``handler``; yields its URL.

    It serves no agent card (a 404), so the bench is pointed at it with ``--binding``.
    With ``tls`` (a server context), it serves HTTPS.
    """
    counter = [0]
    async with trio.open_nursery() as nursery:
        serve_connection = partial(_connection, handler=handler, counter=counter)
        if tls is None:
            listeners = await nursery.start(
                partial(trio.serve_tcp, serve_connection, 0, host="127.0.0.1")
            )
        else:
            listeners = await nursery.start(
                partial(trio.serve_ssl_over_tcp, serve_connection, 0, tls, host="127.0.0.1")
            )
        first = listeners[0]
        sock = first.transport_listener.socket if tls is not None else first.socket
        port = sock.getsockname()[1]
        try:
            yield f"{'https' if tls is not None else 'http'}://127.0.0.1:{port}/"
        finally:
            nursery.cancel_scope.cancel()
