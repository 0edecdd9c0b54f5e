"""Our client over gRPC against our gRPC server: the shared client scenarios, every method.

The two halves of the binding (``a2a_actors.server._grpc`` and the client's gRPC transport)
meet here; each is also tested against the official SDK (test_server.py, test_client_sdk.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import pytest

from a2a_actors.client import A2AClient
from tests.client import scenarios
from tests.client.ours import default_config, scenario_agent

from .server_helpers import TIMEOUT, grpc_served

pytestmark = pytest.mark.anyio

SCENARIOS: dict[str, Callable[[A2AClient], Awaitable[None]]] = {
    "send_blocking": scenarios.send_blocking,
    "message_reply": scenarios.message_reply,
    "streaming": scenarios.streaming,
    "multi_turn": scenarios.multi_turn,
    "subscribe_and_cancel": scenarios.subscribe_and_cancel,
    "push_config_crud": scenarios.push_config_crud,
    "extended_card": scenarios.extended_card,
    "errors": scenarios.errors,
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("name", SCENARIOS)
async def test_scenario(name: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with grpc_served(scenario_agent, default_config()) as served:
            client = await A2AClient.connect(served.url, bindings=("GRPC",), card_cache=None)
            async with client:
                assert client.interface.protocol_binding == "GRPC"
                assert client.interface.url == served.address
                await SCENARIOS[name](client)
