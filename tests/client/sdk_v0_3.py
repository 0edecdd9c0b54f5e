"""The official a2a-sdk serving A2A **0.3 only** (its v0.3 compat JSON-RPC), for interop tests
of our legacy transport.

The scenario executors are the interop harness's (tests/interop/sdk_server.py); the card
lists one interface, JSON-RPC at protocolVersion 0.3, which the SDK serves as a dual-version
card (0.3 top-level keys merged in). It runs on uvicorn in its own thread, like
``run_sdk_server``, which has no switch for this.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types.a2a_pb2 import AgentInterface
from starlette.applications import Starlette

from tests.interop.sdk_server import RoutingExecutor, build_agent_card
from tests.uvicorn_thread import serve_in_thread

__all__ = ["run_sdk_v0_3_server"]


@contextlib.contextmanager
def run_sdk_v0_3_server() -> Iterator[str]:
    """Serve a 0.3-only SDK agent on 127.0.0.1:0; yields its base URL."""

    def build(base_url: str) -> Starlette:
        card = build_agent_card(base_url, push=False, extended_card=False)
        del card.supported_interfaces[:]
        card.supported_interfaces.append(
            AgentInterface(url=f"{base_url}/", protocol_binding="JSONRPC", protocol_version="0.3")
        )
        handler = DefaultRequestHandler(
            agent_executor=RoutingExecutor(), task_store=InMemoryTaskStore(), agent_card=card
        )
        return Starlette(
            routes=[
                *create_agent_card_routes(card),
                *create_jsonrpc_routes(handler, rpc_url="/", enable_v0_3_compat=True),
            ]
        )

    with serve_in_thread(build, lifespan="off", name="sdk-v0.3-server") as base_url:
        yield base_url
