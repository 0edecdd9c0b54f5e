"""``serve()`` on a real loopback Hypercorn, on both backends."""

from __future__ import annotations

import json
import subprocess
import sys
from functools import partial

import anyio
import httpx
import hypercorn.config
import pytest

from a2a_actors.protocol._models import Message, Part, Role
from a2a_actors.protocol._requests import SendMessageRequest
from a2a_actors.runtime import Supervisor
from a2a_actors.server import ServerConfig, create_app, serve
from a2a_actors.server._app import Backend, current_backend
from a2a_actors.server._http import sse

from .agents import scenario_agent
from .helpers import (
    HTTPX_EARLY_EXIT,
    JSON_HEADERS,
    TIMEOUT,
    envelope,
    message,
    send_params,
    served,
    sse_lines,
)

pytestmark = pytest.mark.anyio


async def test_serve_reports_the_url_and_stops_cleanly() -> None:
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            url = await tg.start(serve, scenario_agent)
            assert url.startswith("http://127.0.0.1:")
            async with httpx.AsyncClient(base_url=url) as http:
                card = (await http.get("/.well-known/agent-card.json")).json()
                assert card["supportedInterfaces"][0]["url"] == f"{url}/"
                answer = await http.post(
                    "/", content=envelope("SendMessage", send_params("hi")), headers=JSON_HEADERS
                )
                assert answer.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            tg.cancel_scope.cancel()
        async with httpx.AsyncClient() as http:
            with pytest.raises(httpx.ConnectError):
                await http.get(url)


@HTTPX_EARLY_EXIT
async def test_shutdown_ends_open_streams_and_running_tasks() -> None:
    with anyio.fail_after(TIMEOUT):
        supervisor = Supervisor(scenario_agent)
        async with supervisor, anyio.create_task_group() as tg:
            url = await tg.start(
                partial(serve, supervisor, config=ServerConfig(graceful_timeout=5))
            )
            async with httpx.AsyncClient(base_url=url, timeout=TIMEOUT) as http:
                body = envelope("SendStreamingMessage", send_params("sleep"))
                async with (
                    http.stream("POST", "/", content=body, headers=JSON_HEADERS) as response,
                    sse_lines(response) as lines,
                ):
                    assert (await anext(lines)).startswith("id: ")
                    first = json.loads((await anext(lines)).removeprefix("data: "))
                    task_id = first["result"]["task"]["id"]
                    tg.cancel_scope.cancel()  # stop the server while the stream is open
                    rest = [line async for line in lines]
            assert all(not line.startswith("event: error") for line in rest)
            # the server is gone, the runtime it was given is not
            task = await supervisor.get_task(task_id)
            assert task.status.state.value == "TASK_STATE_WORKING"
            await supervisor.cancel_task(task_id)
            reply = await supervisor.send_message(
                SendMessageRequest(
                    message=Message(message_id="m", role=Role.USER, parts=(Part(text="x"),))
                )
            )
            assert not isinstance(reply, Message)


@HTTPX_EARLY_EXIT
@pytest.mark.parametrize("path", ["/", "/?A2A-Version=1.0"], ids=["plain", "query-string"])
async def test_a_client_leaving_an_idle_stream_releases_it(
    monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    # No pings (an infinite interval): only the disconnect itself can end the stream.
    config = ServerConfig(ping_interval=float("inf"))
    # The hub forgets a stream once its answer has ended, its runtime stream closed: that
    # is the server's own signal that the stream was released.
    released = anyio.Event()
    untrack = sse.StreamHub.untrack

    def untrack_and_tell(hub: sse.StreamHub, scope: anyio.CancelScope) -> None:
        untrack(hub, scope)
        released.set()

    monkeypatch.setattr(sse.StreamHub, "untrack", untrack_and_tell)
    with anyio.fail_after(TIMEOUT):
        supervisor = Supervisor(scenario_agent)
        async with supervisor, anyio.create_task_group() as tg:
            url = await tg.start(partial(serve, supervisor, config=config))
            async with httpx.AsyncClient(base_url=url, timeout=TIMEOUT) as http:
                body = envelope("SendStreamingMessage", send_params("sleep"))
                async with (
                    http.stream("POST", path, content=body, headers=JSON_HEADERS) as response,
                    sse_lines(response) as lines,
                ):
                    async for line in lines:  # up to the WORKING "sleeping" update
                        if "TASK_STATE_WORKING" in line:
                            break
                    assert supervisor.statistics().subscribers == 1
                    assert not released.is_set()
                await released.wait()
                stats = supervisor.statistics()
                assert stats.subscribers == 0
                assert stats.live_tasks == 1  # leaving the stream does not stop the task
                assert stats.running_handlers == 1
            tg.cancel_scope.cancel()


def _rest_body(text: str) -> bytes:
    return json.dumps({"message": message(text)}).encode()


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/", envelope("SendStreamingMessage", send_params("stream it"))),
        ("POST", "/", envelope("SendMessage", send_params("hi"))),
        ("POST", "/?x=1", envelope("SendStreamingMessage", send_params("stream it"))),
        ("POST", "/rest/message:stream", _rest_body("stream it")),
        ("POST", "/rest/message:send", _rest_body("hi")),
        ("GET", "/.well-known/agent-card.json", b""),
    ],
    ids=["stream", "unary", "stream-with-query", "rest-stream", "rest-unary", "card"],
)
async def test_an_idle_keep_alive_connection_is_closed_after_any_answer(
    monkeypatch: pytest.MonkeyPatch, method: str, path: str, body: bytes
) -> None:
    # Hypercorn reports http.disconnect while it sends an answer's last message, then
    # restarts the connection's keep-alive timer in the app's task. Whatever reacts to that
    # disconnect (Quart cancelling its handler, a stream's watcher) must not cancel the
    # restart, or the idle connection is never closed.
    monkeypatch.setattr(hypercorn.config.Config, "keep_alive_timeout", 0.2)
    monkeypatch.setattr(sse, "WATCH_AFTER", 0)  # streams watch for the disconnect at once
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"A2A-Version: 1.0\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    with anyio.fail_after(TIMEOUT):
        async with served() as url:
            port = int(url.rsplit(":", 1)[1])
            async with await anyio.connect_tcp("127.0.0.1", port) as sock:
                await sock.send(head + body)
                received = b""
                while not _complete(received):
                    received += await sock.receive()
                assert received.startswith(b"HTTP/1.1 200")
                # the idle connection is closed by its keep-alive timer
                with pytest.raises((anyio.EndOfStream, anyio.BrokenResourceError)):
                    await sock.receive()


def _complete(response: bytes) -> bool:
    """Whether ``response`` holds a whole HTTP/1.1 answer (chunked or with a length)."""
    head, sep, body = response.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.lower().split(b"\r\n"):
        if line.startswith(b"content-length:"):
            return len(body) >= int(line.split(b":")[1])
    return body.endswith(b"0\r\n\r\n")


async def test_serve_an_app_and_backend_checks() -> None:
    with anyio.fail_after(TIMEOUT):
        running = current_backend()
        other: Backend = "asyncio" if running == "trio" else "trio"
        with pytest.raises(ValueError, match="runs on"):
            await serve(scenario_agent, backend=other)
        with pytest.raises(ValueError, match="other backend"):
            await serve(create_app(scenario_agent, backend=other))
        app = create_app(scenario_agent, ServerConfig(streaming=False))
        with pytest.raises(ValueError, match="config"):
            await serve(app, config=ServerConfig())
        async with anyio.create_task_group() as tg:
            url = await tg.start(partial(serve, app, backend=running))
            async with httpx.AsyncClient() as http:
                card = (await http.get(f"{url}/.well-known/agent-card.json")).json()
            assert card["capabilities"]["streaming"] is False
            tg.cancel_scope.cancel()


async def test_port_in_use_is_an_os_error() -> None:
    with anyio.fail_after(TIMEOUT):
        async with served() as url:
            port = int(url.rsplit(":", 1)[1])
            with pytest.raises(OSError):
                await serve(scenario_agent, port=port)


# A fresh interpreter where an extra's package cannot be imported; serve() gets a bound
# socket and must close it when it refuses to start (a worker's port, say).
_MISSING_EXTRA = """
import socket, sys
sys.modules[{module!r}] = None  # as if the extra were not installed
import anyio
from a2a_actors.server import ServerConfig, serve
from a2a_actors.server._config.config import ClusterOptions
from a2a_actors.server._config.grpc import GrpcOptions
from tests.server.agents import scenario_agent

sock = socket.create_server(("127.0.0.1", 0))
port = sock.getsockname()[1]
config = ServerConfig({option})
try:
    anyio.run(lambda: serve(scenario_agent, config=config, sock=sock), backend="asyncio")
except Exception as exc:
    print(type(exc).__name__, exc)
try:
    socket.create_server(("127.0.0.1", port)).close()  # fails while a listener holds it
    print("port free")
except OSError as exc:
    print("port held:", exc)
"""


@pytest.mark.parametrize(
    ("module", "option", "error"),
    [
        (
            "grpc",
            "grpc=GrpcOptions(port=0)",
            "GrpcExtraMissingError serving gRPC needs the 'grpc' extra (grpc is missing): "
            "pip install 'a2a-actors[grpc]'",
        ),
        (
            "nats",
            "cluster=ClusterOptions(urls=['nats://127.0.0.1:1'])",
            "ClusterExtraMissingError cluster mode needs nats-py: "
            "pip install 'a2a-actors[cluster]'",
        ),
    ],
)
def test_a_missing_extra_refuses_to_start_and_frees_the_socket(
    module: str, option: str, error: str
) -> None:
    code = _MISSING_EXTRA.format(module=module, option=option)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.stdout.splitlines() == [error, "port free"], done.stderr
