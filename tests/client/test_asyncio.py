"""A subset of the shared suite under asyncio: the client is backend-neutral (anyio/httpx)."""

from __future__ import annotations

import anyio
import pytest

from a2a_actors.client import RemoteAgent
from tests.client import scenarios
from tests.client.conftest import ServedScenario
from tests.client.scenarios import TIMEOUT, connect

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_send_stream_and_errors(agent_server: ServedScenario, binding: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(agent_server.base_url, binding) as client:
            await scenarios.send_blocking(client)
            await scenarios.streaming(client)
            await scenarios.errors(client)


async def test_subscribe_and_cancel(agent_server: ServedScenario, binding: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(agent_server.base_url, binding) as client:
            await scenarios.subscribe_and_cancel(client)


async def test_remote_agent_multi_turn(agent_server: ServedScenario) -> None:
    with anyio.fail_after(TIMEOUT):
        async with await RemoteAgent.connect(agent_server.base_url, card_cache=None) as remote:
            first = await remote.call("input please", session="s")
            assert first.needs_input
            second = await remote.call("Ada", session="s")
            assert second.task is not None
            assert first.task is not None
            assert second.task.id == first.task.id
            assert second.text == "Ada"
