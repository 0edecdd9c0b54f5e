"""A new task while NATS is away: answered busy (-32050, HTTP 429) within the bound, nothing
created; after NATS is back the same request creates the task."""

from __future__ import annotations

import functools
from pathlib import Path

import anyio
import httpx
import pytest

from a2a_actors.client import A2AClient
from a2a_actors.protocol import Task, TaskState
from a2a_actors.protocol.errors import ServerBusyError
from a2a_actors.server import ClusterOptions, ServerConfig, serve

from .agents import agent
from .helpers import nats_server

pytestmark = pytest.mark.anyio

V1 = {"A2A-Version": "1.0", "Content-Type": "application/json"}


async def test_a_new_task_with_nats_away_is_busy_then_created_after(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with nats_server(tmp_path) as server, anyio.create_task_group() as tg:
            options = ClusterOptions(urls=(server.url,), node_id="a", timeout_s=1.0)
            url = await tg.start(
                functools.partial(serve, agent, config=ServerConfig(cluster=options))
            )
            async with await A2AClient.connect(url, card_cache=None) as a:
                await server.stop()
                with anyio.fail_after(10), pytest.raises(ServerBusyError):
                    await a.send_message("hi")  # -32050, never FAILED unstored
                with anyio.fail_after(10), pytest.raises(ServerBusyError):
                    await a.send_message("hi", return_immediately=True)
                body = {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "SendMessage",
                    "params": {
                        "message": {
                            "messageId": "m1",
                            "role": "ROLE_USER",
                            "parts": [{"text": "hi"}],
                        }
                    },
                }
                async with httpx.AsyncClient(timeout=10) as http:
                    answer = (await http.post(f"{url}/", json=body, headers=V1)).json()
                    assert answer["error"]["code"] == -32050, answer
                    rest = await http.post(
                        f"{url}/rest/message:send",
                        json=body["params"],
                        headers=V1,
                    )
                    assert rest.status_code == 429, rest.text
                await server.start()
                while True:  # the node reconnects by itself
                    try:
                        asked = await a.send_message("hi")
                        break
                    except ServerBusyError:
                        await anyio.sleep(0.1)
                assert isinstance(asked, Task)
                assert asked.status.state is TaskState.INPUT_REQUIRED
                assert (await a.get_task(asked.id)) == asked
                while True:  # the busy requests created nothing
                    try:
                        listed = (await a.list_tasks()).tasks
                        break
                    except ServerBusyError:
                        await anyio.sleep(0.1)
                assert [t.id for t in listed] == [asked.id]
            tg.cancel_scope.cancel()
