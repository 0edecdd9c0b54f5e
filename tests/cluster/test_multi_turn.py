"""``examples.multi_turn`` in a cluster: a node stopped while the task waits for its answer;
the answer sent to another node completes the task there (issue 18, Semantics 8)."""

from __future__ import annotations

import functools
from pathlib import Path

import anyio
import pytest

from a2a_actors.client import A2AClient
from a2a_actors.protocol import Task, TaskState
from a2a_actors.server import ClusterOptions, ServerConfig, serve
from examples.multi_turn import QUESTION, agent

from .helpers import nats_server
from .signals import cluster_log

pytestmark = pytest.mark.anyio


async def test_multi_turn_completes_on_another_node_after_a_stop(tmp_path: Path) -> None:
    with anyio.fail_after(30), cluster_log() as log:
        async with nats_server(tmp_path) as server, anyio.create_task_group() as tg:

            def config(node_id: str) -> ServerConfig:
                options = ClusterOptions(urls=(server.url,), node_id=node_id, lease_s=3.0)
                return ServerConfig(cluster=options)

            url_b = await tg.start(functools.partial(serve, agent, config=config("b")))
            async with anyio.create_task_group() as node_a:
                url_a = await node_a.start(functools.partial(serve, agent, config=config("a")))
                async with await A2AClient.connect(url_a, card_cache=None) as a:
                    asked = await a.send_message("hi")
                node_a.cancel_scope.cancel()  # a stops while the task waits for its answer
            assert isinstance(asked, Task)
            assert asked.status.state is TaskState.INPUT_REQUIRED
            # Node b sees a's lease go and releases a's waiting task for resumption.
            await log.wait_for(r"node a \(epoch \d+\) is gone: 0 task\(s\) FAILED, 1 resumable")
            async with await A2AClient.connect(url_b, card_cache=None) as b:
                done = await b.send_message("Ada", task_id=asked.id, context_id=asked.context_id)
                assert isinstance(done, Task)
                assert done.status.state is TaskState.COMPLETED
                assert done.status.message is not None
                assert done.status.message.text == "Hello, Ada!"
                assert [m.text for m in done.history] == ["hi", QUESTION, "Ada", "Hello, Ada!"]
                assert (await b.get_task(asked.id)) == done
            tg.cancel_scope.cancel()
