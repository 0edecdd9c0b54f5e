"""A new task while NATS is away: answered busy (-32050, HTTP 429) within the bound, nothing
created; after NATS is back the same request creates the task."""

from __future__ import annotations

import functools
from pathlib import Path

import anyio
import httpx
import pytest

from a2a_actors.client import A2AClient
from a2a_actors.cluster import _task_store as task_store
from a2a_actors.protocol import Task, TaskState
from a2a_actors.protocol._errors import ServerBusyError
from a2a_actors.server import ClusterOptions, ServerConfig, serve

from .agents import agent
from .helpers import nats_server
from .signals import Consumers, cluster_log

pytestmark = pytest.mark.anyio

V1 = {"A2A-Version": "1.0", "Content-Type": "application/json"}


async def test_a_new_task_with_nats_away_is_busy_then_created_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The node's task mirror follows throughout (no linger stopping it), so that what
    # brings it back after the restart is nats-py re-creating its consumer (waited for).
    monkeypatch.setattr(task_store, "FOLLOW_LINGER_S", 60.0)
    consumers = Consumers(monkeypatch)
    with anyio.fail_after(60), cluster_log() as log:
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
                await log.wait_for("NATS connection back")  # the node reconnected by itself
                asked = await a.send_message("hi")
                assert isinstance(asked, Task)
                assert asked.status.state is TaskState.INPUT_REQUIRED
                assert (await a.get_task(asked.id)) == asked
                # A listing reads the node's mirror, whose consumer the restart took away:
                # once it hands the mirror the new task, nats-py has re-created it.
                await consumers.handed(asked.id)
                listed = (await a.list_tasks()).tasks
                assert [t.id for t in listed] == [asked.id]  # the busy requests created nothing
            tg.cancel_scope.cancel()
