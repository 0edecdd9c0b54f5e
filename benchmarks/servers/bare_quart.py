"""A bare Quart route on Hypercorn: the ceiling the A2A servers are measured against.

    python benchmarks/servers/bare_quart.py --backend asyncio|trio [--host 127.0.0.1]

Prints one line on stdout, the base URL, once the socket listens; stops on SIGTERM or
SIGINT. Routes (each reads the whole request body, then answers a fixed response; nothing
is decoded):

* ``POST /``: a JSON-RPC-shaped SendMessage result (a completed echo task), as JSON.
* ``POST /stream``: a small SSE stream of three fixed JSON-RPC events (task, artifact
  update, completed status update), sent as three body chunks like a real stream.

Hypercorn gets the same settings as ``a2a_actors.server._serve`` (a pre-bound socket with
backlog 1024, no access log), so the difference to the A2A servers is the A2A work alone.

``--raw-asgi`` serves the same answers from a plain ASGI callable instead of Quart (same
Hypercorn): the difference to the Quart route is what Quart itself costs.
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import sys
from collections.abc import AsyncIterator
from typing import Any, Final

from hypercorn.config import Config as HypercornConfig
from quart import Quart, Response, request

_TASK: Final[dict[str, Any]] = {
    "id": "00000000-0000-4000-8000-000000000001",
    "contextId": "00000000-0000-4000-8000-000000000002",
    "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-01-01T00:00:00.000000Z"},
    "artifacts": [{"artifactId": "echo", "name": "echo", "parts": [{"text": "hello"}]}],
    "history": [
        {
            "messageId": "00000000-0000-4000-8000-000000000003",
            "role": "ROLE_USER",
            "parts": [{"text": "hello"}],
            "contextId": "00000000-0000-4000-8000-000000000002",
            "taskId": "00000000-0000-4000-8000-000000000001",
        }
    ],
}


def _rpc(result: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}, separators=(",", ":")).encode()


#: The body of ``POST /``.
SEND_BODY: Final = _rpc({"task": _TASK})
#: The SSE events of ``POST /stream``, one body chunk each.
STREAM_EVENTS: Final = tuple(
    b"data: " + _rpc(result) + b"\n\n"
    for result in (
        {"task": {**_TASK, "status": {"state": "TASK_STATE_SUBMITTED"}, "artifacts": []}},
        {
            "artifactUpdate": {
                "taskId": _TASK["id"],
                "contextId": _TASK["contextId"],
                "artifact": _TASK["artifacts"][0],
            }
        },
        {
            "statusUpdate": {
                "taskId": _TASK["id"],
                "contextId": _TASK["contextId"],
                "status": _TASK["status"],
            }
        },
    )
)


def create_app(backend: str) -> Quart:
    """The bare app: ``Quart`` on asyncio, ``QuartTrio`` on trio."""
    if backend == "trio":
        from quart_trio import QuartTrio

        app: Quart = QuartTrio("bare_quart")
    else:
        app = Quart("bare_quart")

    async def send() -> Response:
        await request.get_data()
        return Response(SEND_BODY, content_type="application/json")

    async def events() -> AsyncIterator[bytes]:
        for event in STREAM_EVENTS:
            yield event

    async def stream() -> Response:
        await request.get_data()
        return Response(
            events(),
            content_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    app.add_url_rule("/", view_func=send, methods=["POST"])
    app.add_url_rule("/stream", view_func=stream, methods=["POST"])
    return app


async def raw_asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The same routes as :func:`create_app` as a bare ASGI callable (with a lifespan)."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            else:
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return
    more = True
    while more:
        message = await receive()
        more = message.get("more_body", False)
    if scope["path"] == "/stream":
        headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-store")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for event in STREAM_EVENTS:
            await send({"type": "http.response.body", "body": event, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
        return
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(SEND_BODY)).encode()),
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": SEND_BODY})


def _hypercorn_config(sock: socket.socket) -> HypercornConfig:
    config = HypercornConfig()
    config.bind = [f"fd://{sock.detach()}"]
    config.accesslog = None
    config.graceful_timeout = 1.0
    return config


def _run_asyncio(app: Any, sock: socket.socket, url: str) -> None:
    import asyncio

    from hypercorn.asyncio import serve

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        config = _hypercorn_config(sock)
        print(url, flush=True)  # the socket already listens: connections wait in its backlog
        await serve(app, config, shutdown_trigger=stop.wait)

    asyncio.run(main())


def _run_trio(app: Any, sock: socket.socket, url: str) -> None:
    import trio
    from hypercorn.trio import serve

    async def main() -> None:
        stop = trio.Event()

        async def watch_signals() -> None:
            with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for _ in signals:
                    stop.set()
                    return

        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch_signals)
            await nursery.start(
                lambda task_status: serve(
                    app,
                    _hypercorn_config(sock),
                    shutdown_trigger=stop.wait,
                    task_status=task_status,
                )
            )
            print(url, flush=True)

    trio.run(main)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--raw-asgi", action="store_true", help="no Quart: a bare ASGI callable")
    args = parser.parse_args(argv)
    sock = socket.create_server((args.host, 0), backlog=1024)
    host, port = sock.getsockname()[:2]
    url = f"http://{host}:{port}"
    app: Any = raw_asgi if args.raw_asgi else create_app(args.backend)
    if args.backend == "trio":
        _run_trio(app, sock, url)
    else:
        _run_asyncio(app, sock, url)
    return 0


if __name__ == "__main__":
    sys.exit(main())
