"""Idempotent sends in a cluster: a retry reaching another node replays the first task, one
task whatever the nodes the retries reach, and a claim left by a dead node is taken over."""

from __future__ import annotations

import functools
from pathlib import Path

import anyio
import httpx
import pytest

from a2a_actors.cluster._entries import Holder
from a2a_actors.cluster._idempotency import NatsKeys
from a2a_actors.runtime import Agent, TaskContext
from a2a_actors.server import ClusterOptions, ServerConfig, serve
from a2a_actors.stores._keys import Sent

from .helpers import connect, nats_server

pytestmark = pytest.mark.anyio

RUNS: list[str] = []


async def counted(ctx: TaskContext) -> str:
    RUNS.append(ctx.text)
    await ctx.update("working")
    return f"done {ctx.text}"


AGENT = Agent(handler=counted, name="counted")


def body(text: str) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": text}]}},
    }


async def test_a_retry_on_another_node_replays_the_first_task(tmp_path: Path) -> None:
    RUNS.clear()
    headers = {"A2A-Version": "1.0", "Idempotency-Key": "cluster-key"}
    with anyio.fail_after(60):
        async with nats_server(tmp_path) as server, anyio.create_task_group() as tg:

            def config(node_id: str) -> ServerConfig:
                return ServerConfig(cluster=ClusterOptions(urls=(server.url,), node_id=node_id))

            url_a = await tg.start(functools.partial(serve, AGENT, config=config("a")))
            url_b = await tg.start(functools.partial(serve, AGENT, config=config("b")))
            async with httpx.AsyncClient(timeout=20) as http:
                replies = []

                async def send(url: str) -> None:
                    reply = await http.post(f"{url}/", json=body("hello"), headers=headers)
                    replies.append(reply.json()["result"]["task"])

                async with anyio.create_task_group() as burst:  # retries at once, both nodes
                    for url in (url_a, url_b, url_a, url_b):
                        burst.start_soon(send, url)
                assert len({task["id"] for task in replies}) == 1
                assert RUNS == ["hello"]
                later = await http.post(f"{url_b}/", json=body("hello"), headers=headers)
                assert later.json()["result"]["task"]["id"] == replies[0]["id"]
                changed = await http.post(f"{url_a}/", json=body("bye"), headers=headers)
                assert changed.json()["error"]["code"] == -32602
            tg.cancel_scope.cancel()


async def test_a_claim_left_by_a_dead_node_is_taken_over(tmp_path: Path) -> None:
    async def alive(holder: Holder) -> bool:
        return holder.node_id == "live"

    with anyio.fail_after(30):
        async with nats_server(tmp_path) as server, connect(server) as conn:

            def keys(node: str) -> NatsKeys:
                return NatsKeys(conn, "A2A_test_idem", holder=Holder(node, 1), alive=alive, ttl=60)

            dead, live = keys("dead"), keys("live")
            assert await dead.claim("k", "fp") is None  # then "dead" dies without a record
            assert await live.claim("k", "fp") is None  # taken over: "live" sends itself
            await live.record("k", Sent("fp", task_id="t-1"))
            assert await keys("other").claim("k", "fp") == Sent("fp", task_id="t-1")
            await live.release("k2")  # releasing a key nobody claimed does nothing
            assert await live.claim("k2", "fp") is None
