"""Pipelines (orchestrated agents) served by any a2a-actors server delegate with no extra code.

``a2a-actors serve MODULE:PIPELINE`` and ``a2a_actors.server._serve(pipeline)`` give the
agent an Orchestrator of its own (``open_delegator``, see a2a_actors/server/_delegation.py);
one given in ``supervisor_options`` wins. The module-level agents below are the targets the
subprocess tests serve.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path

import anyio
import httpx

from a2a_actors.client import A2AClient, text_message
from a2a_actors.protocol import codec
from a2a_actors.protocol._models import Task, TaskState
from a2a_actors.protocol._requests import SendMessageRequest, SendMessageResponse
from a2a_actors.runtime import Agent, TaskContext
from a2a_actors.server import ServerConfig, serve
from orchestrator import (
    CORRELATION_URI,
    Orchestrator,
    delegate,
    fan_out,
    fetch_tree,
    route,
    sequence,
)

from .helpers import TIMEOUT, record_of, status_text

ROOT = Path(__file__).resolve().parents[2]
#: The base URL of the remote step of :data:`remote_pipeline` (set for its subprocess).
REMOTE_ENV = "A2A_ACTORS_TEST_REMOTE_STEP"


async def _upper(ctx: TaskContext) -> str:
    return ctx.text.upper()


async def _exclaim(ctx: TaskContext) -> str:
    return ctx.text + "!"


upper = Agent(handler=_upper, name="upper", description="Upper-cases")
exclaim = Agent(handler=_exclaim, name="exclaim", description="Exclaims")
#: A pipeline of two local steps.
pipeline = sequence(upper, exclaim, name="shout")
#: A local step, then the remote agent at $A2A_ACTORS_TEST_REMOTE_STEP.
remote_pipeline = sequence(
    upper, os.environ.get(REMOTE_ENV, "http://127.0.0.1:9"), name="shout-remote"
)


async def _delegates_unwrapped(ctx: TaskContext) -> str:
    return (await delegate(ctx, upper, ctx.text)).text


#: A plain (not orchestrated) agent that delegates: it gets no Orchestrator by itself.
unwrapped = Agent(handler=_delegates_unwrapped, name="unwrapped")


@asynccontextmanager
async def cli_server(target: str, **env: str) -> AsyncIterator[str]:
    """``a2a-actors serve TARGET`` in a subprocess; yields its URL; stops it with SIGTERM."""
    command = [sys.executable, "-m", "a2a_actors.cli", "serve", target]
    async with await anyio.open_process(command, cwd=ROOT, env={**os.environ, **env}) as proc:
        try:
            assert proc.stdout is not None
            line = b""
            while not line.endswith(b"\n"):
                line += await proc.stdout.receive()
            yield line.decode().strip()
            proc.terminate()
            assert await proc.wait() == 0
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()


async def _send(url: str, text: str) -> Task:
    async with await A2AClient.connect(url) as client:
        reply = await client.send_message(text)
    assert isinstance(reply, Task)
    return reply


async def test_the_cli_serves_a_pipeline_that_delegates() -> None:
    with anyio.fail_after(TIMEOUT * 2):
        async with cli_server("tests.orchestrator.test_served_pipeline:pipeline") as url:
            task = await _send(url, "hi")
            assert task.status.state is TaskState.COMPLETED, status_text(task)
            assert status_text(task) == "HI!"
            record = record_of(task)
            assert record.url == url  # the orchestrator knows where it is served
            assert [c.agent for c in record.children] == ["upper", "exclaim"]


async def test_a_cli_served_remote_step_shows_its_depth_and_duration_in_the_tree() -> None:
    with anyio.fail_after(TIMEOUT * 2):
        async with (
            cli_server("tests.orchestrator.test_served_pipeline:exclaim") as step,
            cli_server(
                "tests.orchestrator.test_served_pipeline:remote_pipeline", **{REMOTE_ENV: step}
            ) as url,
        ):
            task = await _send(url, "hi")
            assert status_text(task) == "HI!"
            tree = await fetch_tree(url, task.id)
    assert [(hop.agent, hop.depth) for hop in tree.walk()] == [
        ("shout-remote", 0),
        ("upper", 1),
        ("exclaim", 1),
    ]
    remote = tree.children[1]
    assert remote.url == step
    assert remote.started_at is not None
    assert remote.ended_at is not None
    assert remote.started_at < remote.ended_at


async def test_serve_from_python_gives_a_pipeline_its_orchestrator() -> None:
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            url = await tg.start(partial(serve, pipeline))
            task = await _send(url, "py")
            tg.cancel_scope.cancel()
    assert status_text(task) == "PY!"
    assert record_of(task).url == url


async def test_public_url_is_what_the_provided_orchestrator_advertises() -> None:
    config = ServerConfig(public_url="https://agents.example.com")
    request = SendMessageRequest(message=text_message("x"))
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            url = await tg.start(partial(serve, pipeline, config=config))
            # The card points at the public URL; this test talks to the socket itself.
            async with httpx.AsyncClient() as http:
                response = await http.post(
                    f"{url}/rest/message:send",
                    content=codec.encode(request),
                    headers={"A2A-Version": "1.0", "Content-Type": "application/json"},
                )
            tg.cancel_scope.cancel()
    task = codec.decode(response.content, SendMessageResponse).task
    assert task is not None
    assert status_text(task) == "X!"
    assert record_of(task).url == "https://agents.example.com"


async def test_a_delegator_in_supervisor_options_wins() -> None:
    async with Orchestrator(public_url="https://mine.example") as mine:
        config = ServerConfig(supervisor_options={"delegator": mine})
        with anyio.fail_after(TIMEOUT):
            async with anyio.create_task_group() as tg:
                url = await tg.start(partial(serve, pipeline, config=config))
                task = await _send(url, "x")
                tg.cancel_scope.cancel()
    assert status_text(task) == "X!"
    assert record_of(task).url == "https://mine.example"
    assert (task.metadata or {})[CORRELATION_URI]["url"] == "https://mine.example"


async def test_an_agent_that_is_not_orchestrated_is_told_how_to_delegate() -> None:
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            url = await tg.start(partial(serve, unwrapped))
            task = await _send(url, "x")
            tg.cancel_scope.cancel()
    assert task.status.state is TaskState.FAILED
    assert "orchestrator._orchestrated(agent)" in status_text(task)


async def test_the_served_pipeline_card_is_the_pipelines() -> None:
    with anyio.fail_after(TIMEOUT * 2):
        async with (
            cli_server("tests.orchestrator.test_served_pipeline:remote_pipeline") as url,
            await A2AClient.connect(url) as client,
        ):
            card = client.card
    assert card is not None
    assert card.name == "shout-remote"
    assert card.description == "Runs upper -> a remote agent"
    assert [e.uri for e in card.capabilities.extensions] == [CORRELATION_URI]


def test_default_descriptions_do_not_expose_step_urls() -> None:
    url = "http://10.0.0.7:8001"
    assert sequence(upper, url).description == "Runs upper -> a remote agent"
    assert fan_out(url, exclaim).description == "Runs a remote agent, exclaim concurrently"
    routed = route({"loud": url, "calm": upper})
    assert [s.description for s in routed.skills] == ["-> a remote agent", "-> upper"]
    assert url not in remote_pipeline.description
    named = sequence(upper, "translator")  # a name the orchestrator's resolver knows
    assert named.description == "Runs upper -> translator"
