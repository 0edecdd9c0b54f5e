"""Cluster mode: every node exposes its own metrics (two nodes on one real nats-server).

A node counts the calls it answered and the tasks whose actor it runs: a task created on
node A and cancelled through node B is a CancelTask on B and a canceled task on A.
"""

from __future__ import annotations

import functools
from pathlib import Path

import anyio
import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from a2a_actors.client import A2AClient
from a2a_actors.protocol import Task, TaskState
from a2a_actors.server import ClusterOptions, MetricsOptions, ServerConfig, serve

from ..cluster.agents import agent
from ..cluster.helpers import nats_server

pytestmark = [pytest.mark.anyio, pytest.mark.serial]  # timed by leases and TTLs


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # cluster mode runs on asyncio (nats-py)


def _value(text: str, name: str, **labels: str) -> float:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return sample.value
    return 0.0


async def test_each_node_counts_what_it_answered_and_the_tasks_it_runs(tmp_path: Path) -> None:
    def config(url: str, node_id: str) -> ServerConfig:
        options = ClusterOptions(urls=(url,), node_id=node_id, lease_s=3.0)
        return ServerConfig(cluster=options, metrics=MetricsOptions())

    with anyio.fail_after(60):
        async with nats_server(tmp_path) as nats, anyio.create_task_group() as tg:
            url_a = await tg.start(functools.partial(serve, agent, config=config(nats.url, "a")))
            url_b = await tg.start(functools.partial(serve, agent, config=config(nats.url, "b")))
            async with (
                await A2AClient.connect(url_a, card_cache=None) as a,
                await A2AClient.connect(url_b, card_cache=None) as b,
                httpx.AsyncClient() as http,
            ):
                task = await a.send_message("spin", return_immediately=True)
                assert isinstance(task, Task)
                canceled = await b.cancel_task(task.id)
                assert canceled.status.state is TaskState.CANCELED
                on_a = (await http.get(f"{url_a}/metrics")).text
                on_b = (await http.get(f"{url_b}/metrics")).text
            tg.cancel_scope.cancel()
    sent = {"method": "SendMessage", "binding": "jsonrpc", "code": "OK"}
    cancel = {"method": "CancelTask", "binding": "jsonrpc", "code": "OK"}
    assert _value(on_a, "a2a_requests_total", **sent) == 1
    assert _value(on_a, "a2a_requests_total", **cancel) == 0
    assert _value(on_b, "a2a_requests_total", **sent) == 0
    assert _value(on_b, "a2a_requests_total", **cancel) == 1
    assert _value(on_a, "a2a_tasks_finished_total", state="canceled") == 1
    assert _value(on_b, "a2a_tasks_finished_total", state="canceled") == 0
    assert _value(on_a, "a2a_tasks_live") == 0
