"""Prometheus metrics of a real server: counters follow a scripted workload exactly.

The workload runs over JSON-RPC or HTTP+JSON: sends that complete, tasks that fail, are
cancelled, ask for input and are rejected, a call refused with an error, a delegation to
another real server, and push notifications to a real receiver that accepts on one path and
refuses on another. ``/metrics`` is read over HTTP and parsed with
``prometheus_client.parser``.
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import anyio
import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from a2a_actors.client import A2AClient
from a2a_actors.protocol._errors import TaskNotFoundError
from a2a_actors.protocol._models import Task, TaskState
from a2a_actors.protocol._requests import TaskPushNotificationConfig
from a2a_actors.push._delivery import PushDelivery
from a2a_actors.runtime import Agent, TaskContext
from a2a_actors.server import ServerConfig, create_app, serve, service_of
from a2a_actors.server._cli import metrics as cli_metrics
from a2a_actors.server._config.metrics import MetricsOptions
from orchestrator import delegate, orchestrated
from tests.push.receiver import Answer, Received, receiver

TIMEOUT = 30.0
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def _echo() -> Agent:
    async def echo(ctx: TaskContext) -> str:
        return ctx.text

    return Agent(handler=echo, name="echo")


def _scripted(echo_url: str) -> Agent:
    """What the task does is its text: ok, fail, wait, ask, reject, delegate."""

    async def handle(ctx: TaskContext) -> str | None:
        what = ctx.text
        if what == "fail":
            raise RuntimeError("scripted failure")
        if what == "wait":
            await ctx.start()
            await anyio.sleep_forever()
        if what == "ask":
            await ctx.ask("which one?")
        if what == "reject":
            await ctx.reject("not this")
            return None
        if what == "delegate":
            result = await delegate(ctx, echo_url, "hello")
            return result.text
        return "done"

    return orchestrated(Agent(handler=handle, name="scripted"))


def _samples(text: str) -> Samples:
    found: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def _value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


@asynccontextmanager
async def _servers(config: ServerConfig) -> AsyncIterator[tuple[str, PushDelivery]]:
    """The scripted agent's server (with ``config``), which delegates to an echo server
    of its own; its URL and push delivery."""
    async with anyio.create_task_group() as tg:
        echo_url = await tg.start(partial(serve, _echo()))
        app = create_app(_scripted(echo_url), config)
        url = await tg.start(partial(serve, app))
        delivery = service_of(app).push_delivery
        assert delivery is not None
        try:
            yield url, delivery
        finally:
            tg.cancel_scope.cancel()


async def _refuse_bad(request: Received) -> Answer:
    return Answer(500 if request.target.startswith("/bad") else 200)


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_counters_follow_a_scripted_workload(binding: str) -> None:
    config = ServerConfig(
        metrics=MetricsOptions(),
        push_notifications=True,
        allow_private_push=True,
        push_allow_http=True,
        push_max_attempts=1,
        push_breaker_threshold=100,
    )
    label = "jsonrpc" if binding == "JSONRPC" else "rest"
    n_ok, n_fail, n_cancel = 3, 2, 2
    with anyio.fail_after(TIMEOUT):
        async with (
            receiver(_refuse_bad) as hooks,
            _servers(config) as (url, delivery),
            await A2AClient.connect(url, bindings=(binding,)) as client,
            httpx.AsyncClient() as http,
        ):
            before = _samples((await http.get(f"{url}/metrics")).text)
            assert _value(before, "a2a_tasks_live") == 0
            for _ in range(n_ok):
                task = await client.send_message("ok")
                assert isinstance(task, Task)
                assert task.status.state is TaskState.COMPLETED
            for _ in range(n_fail):
                task = await client.send_message("fail")
                assert isinstance(task, Task)
                assert task.status.state is TaskState.FAILED
            waiting = []
            for _ in range(n_cancel):
                task = await client.send_message("wait", return_immediately=True)
                assert isinstance(task, Task)
                waiting.append(task.id)
            during = _samples((await http.get(f"{url}/metrics")).text)
            assert _value(during, "a2a_tasks_live") == n_cancel
            assert _value(during, "a2a_tasks_running") == n_cancel
            for task_id in waiting:
                canceled = await client.cancel_task(task_id)
                assert canceled.status.state is TaskState.CANCELED
            asked = await client.send_message("ask")
            assert isinstance(asked, Task)
            assert asked.status.state is TaskState.INPUT_REQUIRED
            rejected = await client.send_message("reject")
            assert isinstance(rejected, Task)
            assert rejected.status.state is TaskState.REJECTED
            delegated = await client.send_message("delegate")
            assert isinstance(delegated, Task)
            assert delegated.status.state is TaskState.COMPLETED
            with pytest.raises(TaskNotFoundError):
                await client.get_task("no-such-task")
            pushed_ok = await client.send_message(
                "ok", push_config=TaskPushNotificationConfig(url=f"{hooks.base_url}/good")
            )
            pushed_bad = await client.send_message(
                "ok", push_config=TaskPushNotificationConfig(url=f"{hooks.base_url}/bad")
            )
            assert isinstance(pushed_ok, Task)
            assert isinstance(pushed_bad, Task)
            await delivery.wait_idle()
            after = _samples((await http.get(f"{url}/metrics")).text)
            good = sum(1 for r in hooks.requests if r.target.startswith("/good"))
            bad = sum(1 for r in hooks.requests if r.target.startswith("/bad"))

    requests = "a2a_requests_total"
    sends = n_ok + n_fail + n_cancel + 1 + 1 + 1 + 2  # + ask, reject, delegate, two pushed
    assert _value(after, requests, method="SendMessage", binding=label, code="OK") == sends
    assert _value(after, requests, method="CancelTask", binding=label, code="OK") == n_cancel
    assert _value(after, requests, method="GetTask", binding=label, code="TASK_NOT_FOUND") == 1
    assert _value(after, "a2a_request_duration_seconds_count", method="SendMessage") == sends
    assert _value(after, "a2a_request_duration_seconds_count", method="CancelTask") == n_cancel

    finished = "a2a_tasks_finished_total"
    assert _value(after, finished, state="completed") == n_ok + 1 + 2  # + delegate, pushed
    assert _value(after, finished, state="failed") == n_fail
    assert _value(after, finished, state="canceled") == n_cancel
    assert _value(after, finished, state="rejected") == 1
    # the input-required task is live, not finished; nothing else is
    assert _value(after, "a2a_tasks_live") == 1
    assert _value(after, "a2a_tasks_running") == 0
    assert _value(after, "a2a_mailbox_depth") == 0
    assert _value(after, "a2a_stream_subscribers") == 0

    assert good >= 1
    assert bad >= 1
    assert _value(after, "a2a_push_deliveries_total", outcome="delivered") == good
    assert _value(after, "a2a_push_deliveries_total", outcome="failed") == bad
    assert _value(after, "a2a_delegations_total", outcome="completed") == 1
    assert _value(after, "a2a_delegations_total", outcome="failed") == 0


async def _metrics_status(config: ServerConfig, **headers: str) -> tuple[int, str, str]:
    async with anyio.create_task_group() as tg:
        url = await tg.start(partial(serve, _echo(), config=config))
        async with httpx.AsyncClient() as http:
            answer = await http.get(f"{url}/metrics", headers=headers)
        tg.cancel_scope.cancel()
    return answer.status_code, answer.headers.get("content-type", ""), answer.text


async def test_metrics_are_behind_the_servers_credentials_unless_public() -> None:
    keyed = ServerConfig(api_keys={"s3cret": "ops"}, metrics=MetricsOptions())
    with anyio.fail_after(TIMEOUT):
        status, _, body = await _metrics_status(keyed)
        assert status == 401
        assert "a2a_" not in body
        status, kind, body = await _metrics_status(keyed, **{"X-API-Key": "wrong"})
        assert status == 401
        status, kind, body = await _metrics_status(keyed, **{"X-API-Key": "s3cret"})
        assert status == 200
        assert kind.startswith("text/plain; version=0.0.4")
        assert "a2a_tasks_live 0.0" in body
        public = keyed.replace(metrics=MetricsOptions(public=True))
        status, _, body = await _metrics_status(public)
        assert status == 200
        assert "a2a_tasks_live" in body
        status, _, _ = await _metrics_status(ServerConfig())  # off: no such route
        assert status == 404


@pytest.mark.anyio
async def test_each_server_in_a_process_has_its_own_registry_and_a_stream_counts() -> None:
    config = ServerConfig(metrics=MetricsOptions())

    async def wait(ctx: TaskContext) -> None:
        await ctx.start()
        await anyio.sleep_forever()

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            first = await tg.start(partial(serve, _echo(), config=config))
            second = await tg.start(partial(serve, Agent(handler=wait, name="w"), config=config))
            async with (
                await A2AClient.connect(first) as one,
                await A2AClient.connect(second) as two,
                httpx.AsyncClient() as http,
            ):
                await one.send_message("hi")
                task = await two.send_message("hi", return_immediately=True)
                assert isinstance(task, Task)
                async with two.subscribe(task.id) as events:
                    await events.__anext__()  # the snapshot: the subscription is open
                    seen = _samples((await http.get(f"{second}/metrics")).text)
                    assert _value(seen, "a2a_stream_subscribers") == 1
                    assert _value(seen, "a2a_tasks_live") == 1
                    assert _value(seen, "a2a_tasks_finished_total", state="completed") == 0
                await two.cancel_task(task.id)
                first_seen = _samples((await http.get(f"{first}/metrics")).text)
                second_seen = _samples((await http.get(f"{second}/metrics")).text)
            tg.cancel_scope.cancel()
    assert _value(first_seen, "a2a_tasks_finished_total", state="completed") == 1
    assert _value(first_seen, "a2a_tasks_finished_total", state="canceled") == 0
    assert _value(second_seen, "a2a_tasks_finished_total", state="canceled") == 1
    assert _value(second_seen, "a2a_tasks_finished_total", state="completed") == 0
    assert (
        _value(
            first_seen, "a2a_requests_total", method="SubscribeToTask", binding="jsonrpc", code="OK"
        )
        == 0
    )
    assert (
        _value(
            second_seen,
            "a2a_requests_total",
            method="SubscribeToTask",
            binding="jsonrpc",
            code="OK",
        )
        == 1
    )


def test_the_serve_flags_set_the_metrics_options() -> None:
    parser = argparse.ArgumentParser()
    cli_metrics.add_arguments(parser)
    base = ServerConfig()
    assert cli_metrics.apply(base, parser.parse_args([])) is base
    assert cli_metrics.apply(base, parser.parse_args(["--metrics"])).metrics == MetricsOptions()
    public = cli_metrics.apply(base, parser.parse_args(["--metrics-public"])).metrics
    assert public == MetricsOptions(public=True)
