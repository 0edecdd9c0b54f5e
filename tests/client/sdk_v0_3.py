"""The official a2a-sdk serving A2A **0.3 only** (its v0.3 compat JSON-RPC), for interop tests
of our legacy transport.

The scenario executors are the interop harness's (tests/interop/sdk_server.py); the card
lists one interface, JSON-RPC at protocolVersion 0.3, which the SDK serves as a dual-version
card (0.3 top-level keys merged in). It runs on uvicorn in its own thread, like
``run_sdk_server``, which has no switch for this.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

import uvicorn
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types.a2a_pb2 import AgentInterface
from starlette.applications import Starlette

from tests.interop.sdk_server import RoutingExecutor, build_agent_card

__all__ = ["run_sdk_v0_3_server"]


class _Server(uvicorn.Server):
    """Sets ``ready`` once startup has finished (successfully or not)."""

    def __init__(self, config: uvicorn.Config, ready: threading.Event) -> None:
        super().__init__(config)
        self._ready = ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().startup(sockets)
        finally:
            self._ready.set()


@contextlib.contextmanager
def run_sdk_v0_3_server() -> Iterator[str]:
    """Serve a 0.3-only SDK agent on 127.0.0.1:0; yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    base_url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    card = build_agent_card(base_url, push=False, extended_card=False)
    del card.supported_interfaces[:]
    card.supported_interfaces.append(
        AgentInterface(url=f"{base_url}/", protocol_binding="JSONRPC", protocol_version="0.3")
    )
    handler = DefaultRequestHandler(
        agent_executor=RoutingExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    app = Starlette(
        routes=[
            *create_agent_card_routes(card),
            *create_jsonrpc_routes(handler, rpc_url="/", enable_v0_3_compat=True),
        ]
    )
    config = uvicorn.Config(app, log_level="warning", lifespan="off", http="h11", ws="none")
    ready = threading.Event()
    server = _Server(config, ready)
    errors: list[BaseException] = []

    def target() -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            ready.set()

    thread = threading.Thread(target=target, name="sdk-v0.3-server", daemon=True)
    thread.start()
    try:
        if not ready.wait(10) or not server.started:  # pragma: no cover
            raise RuntimeError(f"SDK 0.3 server failed to start: {errors!r}")
        yield base_url
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
