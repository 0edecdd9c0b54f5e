"""The shared suite: every A2A method through our client, over JSON-RPC and HTTP+JSON,
against every server of ``SERVER_KINDS`` (the official a2a-sdk server; ours when it lands).

Runs under trio (the default for this test suite); ``test_asyncio.py`` repeats a subset
under asyncio.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import httpx
import pytest

from a2a_actors.client import A2AClient, JSONRPCTransport
from a2a_actors.protocol._card import AgentInterface
from a2a_actors.protocol._errors import (
    PushNotificationNotSupportedError,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from a2a_actors.protocol._models import Task, TaskState
from a2a_actors.protocol._requests import TaskPushNotificationConfig
from tests.client import scenarios
from tests.client.conftest import ServedScenario
from tests.client.scenarios import TIMEOUT, connect
from tests.interop.sdk_server import SdkServer

Scenario = Callable[[A2AClient], Awaitable[None]]

SCENARIOS: dict[str, Scenario] = {
    "send_blocking": scenarios.send_blocking,
    "message_reply": scenarios.message_reply,
    "streaming": scenarios.streaming,
    "multi_turn": scenarios.multi_turn,
    "subscribe_and_cancel": scenarios.subscribe_and_cancel,
    "push_config_crud": scenarios.push_config_crud,
    "extended_card": scenarios.extended_card,
    "errors": scenarios.errors,
}


@pytest.mark.parametrize("name", SCENARIOS)
async def test_scenario(agent_server: ServedScenario, binding: str, name: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(agent_server.base_url, binding) as client:
            await SCENARIOS[name](client)


async def test_a_client_with_a_tenant(agent_server: ServedScenario, binding: str) -> None:
    # HTTP+JSON puts the tenant in the path (``/{tenant}/message:send``), JSON-RPC in the
    # params: both servers must serve it.
    if agent_server.kind == "sdk" and binding == "HTTP+JSON":
        pytest.skip(
            "a2a-sdk 1.3 mounts /{tenant} above its path prefix (/{tenant}/rest/...), so "
            "the tenant routes below the card's /rest interface URL are 404 there"
        )
    with anyio.fail_after(TIMEOUT):
        async with connect(agent_server.base_url, binding) as discovered:
            url = discovered.interface.url
        async with A2AClient(url, binding=binding, tenant="acme") as client:
            task = await client.send_message("hello tenant")
            assert isinstance(task, Task)
            assert task.status.state is TaskState.COMPLETED
            assert (await client.get_task(task.id)).id == task.id
            events = await scenarios.collect(client.stream_message("stream please"))
            last = events[-1].status_update
            assert last is not None
            assert last.status.state is TaskState.COMPLETED


async def test_features_off(sdk_plain: SdkServer, binding: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(sdk_plain.base_url, binding) as client:
            task = await client.send_message("hello")
            assert isinstance(task, Task)
            with pytest.raises(PushNotificationNotSupportedError):  # -32003
                await client.create_push_config(
                    TaskPushNotificationConfig(task_id=task.id, url="http://127.0.0.1:9/x")
                )
            with pytest.raises(UnsupportedOperationError):  # -32004: no extended card
                await client.get_extended_card()


async def test_version_not_supported(sdk: SdkServer) -> None:
    """A transport that sends another A2A-Version gets -32009 as a typed remote error."""
    with anyio.fail_after(TIMEOUT):
        async with httpx.AsyncClient() as http:
            interface = AgentInterface(
                url=sdk.jsonrpc_url, protocol_binding="JSONRPC", protocol_version="1.0"
            )
            transport = JSONRPCTransport(interface, http, version_header="0.3")
            client = A2AClient(transport=transport)
            with pytest.raises(VersionNotSupportedError) as exc:
                await client.get_task("whatever")
            assert exc.value.code == -32009
            assert exc.value.remote
