"""Pipelines: sequence, fan-out (with a failing branch), route; served and nested."""

from __future__ import annotations

import uuid
from functools import partial

import anyio
import httpx
import pytest
from a2a.types.a2a_pb2 import (
    Message as SdkMessage,
    Part as SdkPart,
    Role as SdkRole,
    SendMessageRequest as SdkSendMessageRequest,
    TaskState as SdkTaskState,
)

from a2a_actors.client import A2AClient, text_message
from a2a_actors.protocol._card import AgentSkill
from a2a_actors.protocol._models import Artifact, Part, Task, TaskState
from a2a_actors.protocol._requests import SendMessageRequest
from a2a_actors.runtime import Agent, TaskContext, agent
from examples import pipeline as example
from orchestrator import (
    DelegationError,
    DelegationResult,
    fan_out,
    fetch_tree,
    route,
    sequence,
    serve,
)
from tests.interop.sdk_server import sdk_client

from .helpers import TIMEOUT, Journal, record_of, running, send, served, status_text


@agent(name="upper")
async def upper(ctx: TaskContext) -> str:
    return ctx.text.upper()


@agent(name="exclaim")
async def exclaim(ctx: TaskContext) -> str:
    return ctx.text + "!"


@agent(name="boxed")
async def boxed(ctx: TaskContext) -> Artifact:
    return Artifact(artifact_id="box", parts=(Part(text=f"[{ctx.text}]"),), name="box")


async def test_sequence_feeds_each_output_to_the_next_step() -> None:
    pipeline = sequence(upper, exclaim, boxed, name="shout")
    with anyio.fail_after(TIMEOUT):
        async with running(pipeline) as sup:
            task = await send(sup, "hi")
    assert task.status.state is TaskState.COMPLETED
    assert [p.text for a in task.artifacts for p in a.parts] == ["[HI!]"]
    assert [(c.agent, c.state) for c in record_of(task).children] == [
        ("upper", "TASK_STATE_COMPLETED"),
        ("exclaim", "TASK_STATE_COMPLETED"),
        ("boxed", "TASK_STATE_COMPLETED"),
    ]
    assert record_of(task).agent == "shout"


@pytest.mark.parametrize("cancel_on_failure", [True, False])
async def test_fan_out_with_a_failing_branch(cancel_on_failure: bool) -> None:
    journal = Journal()
    both_started = [anyio.Event(), anyio.Event()]

    def slow(name: str, index: int) -> Agent:
        async def handle(ctx: TaskContext) -> str:
            with journal.running(ctx):
                both_started[index].set()
                if cancel_on_failure:
                    await anyio.sleep_forever()
                return f"{name} done"

        return Agent(handler=handle, name=name)

    async def failing(ctx: TaskContext) -> None:
        with journal.running(ctx):
            for started in both_started:
                await started.wait()
            raise ValueError("no luck")

    merged: list[list[DelegationResult]] = []

    def merge(results: list[DelegationResult]) -> str:
        merged.append(results)
        return " + ".join(r.text if r.ok else f"{r.agent} failed" for r in results)

    pipeline = fan_out(
        slow("left", 0),
        Agent(handler=failing, name="middle"),
        slow("right", 1),
        merge=merge,
        cancel_on_failure=cancel_on_failure,
        name="spread",
    )
    with anyio.fail_after(TIMEOUT):
        async with running(pipeline) as sup:
            task = await send(sup, "x")
    assert journal.still_running() == []
    states = {c.agent: c.state for c in record_of(task).children}
    middle_id = next(c.task_id for c in record_of(task).children if c.agent == "middle")
    if cancel_on_failure:
        assert task.status.state is TaskState.FAILED
        assert status_text(task) == (
            f"no luck [FAILED at middle task {middle_id}, relayed by spread]"
        )
        assert states == {
            "left": "TASK_STATE_CANCELED",
            "middle": "TASK_STATE_FAILED",
            "right": "TASK_STATE_CANCELED",
        }
        assert sorted(record_of(task).canceled_children) == sorted(
            c.task_id for c in record_of(task).children if c.agent != "middle"
        )
        assert merged == []
    else:
        assert task.status.state is TaskState.COMPLETED
        assert status_text(task) == "left done + middle failed + right done"
        (results,) = merged
        error = results[1].error
        assert isinstance(error, DelegationError)
        assert (error.origin_agent, error.origin_task_id) == ("middle", middle_id)
        assert states["middle"] == "TASK_STATE_FAILED"


async def test_route_by_skill_by_text_and_by_function() -> None:
    skilled = Agent(
        handler=upper.handler,
        name="upper",
        skills=(AgentSkill(id="shout", name="Shout", description="", tags=("loud",)),),
    )
    by_skill = route({"shout": upper, "cheer": exclaim}, name="by-skill")
    by_text = route({"up": upper}, by="text", default=exclaim, name="by-text")
    by_agents = route([skilled], name="by-agents")

    def choose(ctx: TaskContext) -> object:
        return upper if "please" in ctx.text else None

    by_function = route(choose, name="by-function")

    async def ask(target: Agent, text: str, **metadata: str) -> Task:
        async with running(target) as sup:
            reply = await sup.send_message(
                SendMessageRequest(message=text_message(text, metadata=dict(metadata) or None))
            )
        assert isinstance(reply, Task)
        return reply

    with anyio.fail_after(TIMEOUT):
        assert status_text(await ask(by_skill, "hi", skill="shout")) == "HI"
        assert status_text(await ask(by_skill, "hi", skill="CHEER")) == "hi!"
        refused = await ask(by_skill, "hi", skill="whisper")
        assert refused.status.state is TaskState.REJECTED
        assert status_text(refused) == "no route for skill 'whisper' (known: cheer, shout)"
        assert status_text(await ask(by_text, "up we go")) == "UP WE GO"
        assert status_text(await ask(by_text, "down we go")) == "down we go!"
        assert status_text(await ask(by_agents, "hi", skill="loud")) == "HI"
        assert status_text(await ask(by_function, "please")) == "PLEASE"
        assert (await ask(by_function, "now")).status.state is TaskState.REJECTED
    assert [s.id for s in by_skill.skills] == ["shout", "cheer"]


async def test_pipelines_nest_and_mix_local_and_remote_steps() -> None:
    with anyio.fail_after(TIMEOUT):
        async with served(exclaim) as [exclaim_url]:
            inner = fan_out(upper, exclaim_url, name="inner")
            outer = sequence(inner, exclaim, name="outer")
            async with served(outer) as [outer_url]:
                async with await A2AClient.connect(outer_url) as client:
                    task = await client.send_message("go")
                assert isinstance(task, Task)
                assert status_text(task) == "GO\ngo!!"
                tree = await fetch_tree(outer_url, task.id)
    inner_hop, last = tree.children
    assert (tree.agent, inner_hop.agent, last.agent) == ("outer", "inner", "exclaim")
    assert {(h.agent, h.depth, h.url) for h in inner_hop.children} == {
        ("upper", 2, outer_url),  # a local step runs on the pipeline's own server
        ("exclaim", 2, exclaim_url),
    }
    assert {h.trace_id for h in tree.walk()} == {tree.trace_id}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_a_served_pipeline_answers_the_official_sdk_client(anyio_backend: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            translator_url = await tg.start(partial(serve, example.translator))
            url = await tg.start(partial(serve, example.build_pipeline(translator_url)))
            async with httpx.AsyncClient(timeout=TIMEOUT) as http:
                client = await sdk_client(url, binding="JSONRPC", httpx_client=http)
                message = SdkMessage(
                    message_id=uuid.uuid4().hex,
                    role=SdkRole.ROLE_USER,
                    parts=[SdkPart(text="the  cat sleeps")],
                )
                events = [
                    e async for e in client.send_message(SdkSendMessageRequest(message=message))
                ]
                await client.close()
            tg.cancel_scope.cancel()
    final = events[-1]
    state = (
        final.status_update.status.state
        if final.HasField("status_update")
        else final.task.status.state
    )
    assert state == SdkTaskState.TASK_STATE_COMPLETED
    texts = [
        p.text
        for e in events
        if e.HasField("artifact_update")
        for p in e.artifact_update.artifact.parts
    ]
    status = [e for e in events if e.HasField("status_update")][-1].status_update.status
    assert "translator: le chat dort\ncount: 3 words" in [*texts, status.message.parts[0].text]
