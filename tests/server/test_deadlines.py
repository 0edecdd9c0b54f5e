"""``task_timeout`` / ``--task-timeout``, the bound on queued tasks (``max_queued`` /
``--max-queued``) and ``--max-body-bytes``, over the HTTP bindings (gRPC:
tests/grpc/test_server_hostile.py)."""

from __future__ import annotations

import json

import anyio
import pytest

from a2a_actors.cli import build_parser
from a2a_actors.runtime import TaskContext, agent
from a2a_actors.server import ServerConfig, service_of
from a2a_actors.server._cli.serve import _config
from a2a_actors.stores import MemoryTaskStore

from .agents import scenario_agent
from .helpers import TIMEOUT, envelope, post, rpc_result, running_app, send_params, stream

pytestmark = pytest.mark.anyio


async def test_a_task_past_the_server_timeout_fails_saying_so() -> None:
    @agent
    async def hung(ctx: TaskContext) -> None:
        await ctx.update("working")
        await anyio.sleep_forever()

    with anyio.fail_after(TIMEOUT):
        async with running_app(hung, ServerConfig(task_timeout=0.05)) as client:
            task = (await rpc_result(client, "SendMessage", send_params("go")))["task"]
            assert task["status"]["state"] == "TASK_STATE_FAILED"
            assert task["status"]["message"]["parts"] == [
                {"text": "the task ran longer than its timeout of 0.05 s"}
            ]


async def test_past_the_queue_bound_new_tasks_are_refused_on_both_bindings() -> None:
    config = ServerConfig(max_running=1, max_queued=1)
    sleep = send_params("sleep", configuration={"returnImmediately": True})
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=config) as client:
            for _ in range(2):  # one runs, one waits for its slot
                await rpc_result(client, "SendMessage", sleep)
            refusals = [
                await post(client, "/", envelope("SendMessage", sleep)),
                await stream(client, "/", envelope("SendStreamingMessage", sleep)),
                await post(client, "/rest/message:send", json.dumps(sleep).encode()),
                await stream(client, "/rest/message:stream", json.dumps(sleep).encode()),
            ]
            for status, headers, raw in refusals:
                assert status == 429, raw
                lower = {k.lower(): v for k, v in headers.items()}
                assert int(lower["retry-after"]) >= 1
                error = json.loads(raw)["error"]
                assert error["message"].startswith(
                    "all 1 running slots are taken and 1 tasks wait for one (limit 1)"
                )
            listed = await rpc_result(client, "ListTasks", {})
            assert len(listed["tasks"]) == 2


def test_the_serve_flags() -> None:
    base = ServerConfig()
    args = build_parser().parse_args(
        [
            "serve",
            "m:a",
            "--max-running",
            "4",
            "--max-queued",
            "8",
            "--task-timeout",
            "30",
            "--max-body-bytes",
            "4096",
        ]
    )
    config = _config(base, args)
    assert (config.max_running, config.max_queued) == (4, 8)
    assert (config.task_timeout, config.max_body_bytes) == (30.0, 4096)
    defaults = _config(base, build_parser().parse_args(["serve", "m:a", "--max-running", "2"]))
    assert (defaults.max_queued, defaults.task_timeout) == (100, None)
    with pytest.raises(ValueError, match="--max-queued needs --max-running"):
        _config(base, build_parser().parse_args(["serve", "m:a", "--max-queued", "3"]))
    for bad in (["--task-timeout", "0"], ["--max-body-bytes", "0"], ["--max-queued", "0"]):
        with pytest.raises(SystemExit):
            build_parser().parse_args(["serve", "m:a", *bad])


async def test_max_body_bytes_refuses_a_larger_body() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=ServerConfig(max_body_bytes=300)) as client:
            small = await post(client, "/", envelope("SendMessage", send_params("hi")))
            assert small[0] == 200
            status, _, raw = await post(
                client, "/", envelope("SendMessage", send_params("x" * 400))
            )
            assert status == 413, raw


async def test_a_server_on_the_memory_store_keeps_finished_tasks_within_bounds() -> None:
    """The memory store's default retention (a server left running must not grow without
    bound); ``None`` for both turns it off, and a given store is left alone."""
    with anyio.fail_after(TIMEOUT):
        for options, retained in (
            ({}, 1),
            ({"retention_ttl": None, "retention_max": None}, 0),
            ({"store": MemoryTaskStore()}, 0),
        ):
            config = ServerConfig(supervisor_options=options)
            async with running_app(scenario_agent, config) as client:
                task = (await rpc_result(client, "SendMessage", send_params("hi")))["task"]
                assert task["status"]["state"] == "TASK_STATE_COMPLETED"
                supervisor = service_of(client.app).methods.supervisor
                assert supervisor.statistics().retained_tasks == retained, options


def test_the_retention_flags_keep_the_other_default() -> None:
    args = build_parser().parse_args(["serve", "m:a", "--retention-max", "500"])
    assert _config(ServerConfig(), args).supervisor_options == {"retention_max": 500}
