"""PydanticAI agents served by a2a-actors, called with the official SDK's client.

Every agent runs on PydanticAI's own ``FunctionModel``, scripted step by step
(:mod:`tests.frameworks.pydantic_models`); no network, no API key.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from a2a.types.a2a_pb2 import CancelTaskRequest, Part, TaskState
from google.protobuf.struct_pb2 import Value
from pydantic import BaseModel
from pydantic_ai import (
    Agent as PydanticAgent,
    BinaryContent,
    CallDeferred,
    ImageUrl,
    ModelMessage,
    StructuredContent,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall

from a2a_actors.frameworks import pydantic_ai as bridge
from a2a_actors.runtime import TaskContext, agent
from a2a_actors.server import ServerConfig
from a2a_actors.stores._sqlite import SQLiteTaskStore
from orchestrator import fetch_tree
from tests.frameworks.harness import (
    SDK_WARNINGS,
    answer_chunks,
    answer_text,
    metadata_of,
    question_of,
    sdk_agent,
    states,
    tool_parts,
)
from tests.frameworks.pydantic_models import Script, call, say

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings(SDK_WARNINGS)]

TIMEOUT = 20.0
S = TaskState


def user_texts(messages: list[ModelMessage]) -> list[str]:
    """The user prompts a model request carried, oldest first."""
    return [
        p.content
        if isinstance(p.content, str)
        else "".join(c for c in p.content if isinstance(c, str))
        for m in messages
        for p in getattr(m, "parts", ())
        if isinstance(p, UserPromptPart)
    ]


def tool_returns(messages: list[ModelMessage]) -> list[Any]:
    return [
        p.content
        for m in messages
        for p in getattr(m, "parts", ())
        if isinstance(p, ToolReturnPart)
    ]


async def test_text_deltas_stream_as_chunks_of_one_answer_as_they_are_produced() -> None:
    gate = asyncio.Event()

    async def gated(_m: list[ModelMessage], _i: AgentInfo) -> AsyncIterator[str]:
        yield "Hello"
        await gate.wait()  # the client must see "Hello" before the model goes on
        yield ", world"

    script = Script(gated)
    served = bridge.as_agent(PydanticAgent(script.model(), name="greeter"))
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            events = []
            async for event in caller.client.send_message(caller.request("hi")):
                events.append(event)
                if answer_chunks(events) and not gate.is_set():
                    assert [c.text for c in answer_chunks(events)] == ["Hello"]
                    gate.set()
            chunks = answer_chunks(events)
            assert chunks[0].text == "Hello"
            assert not chunks[0].append
            assert all(c.append for c in chunks[1:])
            assert chunks[-1].last_chunk
            assert not any(c.last_chunk for c in chunks[:-1])
            assert "".join(c.text for c in chunks) == "Hello, world"
            assert states(events)[-1] == S.TASK_STATE_COMPLETED

            blocking = Script(say("Hello", ", world"))
            served_again = bridge.as_agent(PydanticAgent(blocking.model(), name="greeter"))
            async with sdk_agent(served_again) as other:
                task = await other.send("hi")
                assert task.status.state == S.TASK_STATE_COMPLETED
                assert answer_text(task) == "Hello, world"
                assert [a.name for a in task.artifacts] == ["answer"]


async def test_tool_calls_and_results_are_working_updates_never_in_the_answer() -> None:
    script = Script(call("weather", {"city": "Paris"}, "c1"), say("It is sunny."))
    pydantic_agent = PydanticAgent(script.model())

    @pydantic_agent.tool_plain
    async def weather(city: str) -> dict[str, str]:
        return {"city": city, "sky": "sunny"}

    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(bridge.as_agent(pydantic_agent, name="forecaster")) as caller:
            events = await caller.stream("Weather in Paris?")
            assert tool_parts(events) == [
                {
                    "type": "tool_call",
                    "id": "c1",
                    "name": "weather",
                    "arguments": {"city": "Paris"},
                },
                {
                    "type": "tool_result",
                    "id": "c1",
                    "name": "weather",
                    "result": {"city": "Paris", "sky": "sunny"},
                },
            ]
            assert "".join(c.text for c in answer_chunks(events)) == "It is sunny."
            task = await caller.get(events[0].task.id)
            assert answer_text(task) == "It is sunny."
            assert task.status.state == S.TASK_STATE_COMPLETED


async def test_text_before_a_tool_call_and_the_answer_are_parted_by_a_blank_line() -> None:
    async def check(_m: list[ModelMessage], _i: AgentInfo) -> AsyncIterator[Any]:
        yield "Let me check."
        yield {0: DeltaToolCall(name="weather", json_args="{}", tool_call_id="c1")}

    script = Script(check, say("It is ", "sunny."))
    pydantic_agent = PydanticAgent(script.model())

    @pydantic_agent.tool_plain
    async def weather() -> str:
        return "sunny"

    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(bridge.as_agent(pydantic_agent, name="forecaster")) as caller:
            task = await caller.send("Weather?")
            assert answer_text(task) == "Let me check.\n\nIt is sunny."


async def test_the_usage_of_a_run_that_fails_is_kept() -> None:
    async def broken(_m: list[ModelMessage], _i: AgentInfo) -> AsyncIterator[str]:
        raise RuntimeError("the model is down")
        yield ""  # pragma: no cover

    script = Script(call("ping", {}, "c1"), broken)
    pydantic_agent = PydanticAgent(script.model())

    @pydantic_agent.tool_plain
    def ping() -> str:
        return "pong"

    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(bridge.as_agent(pydantic_agent, name="pinger")) as caller:
            task = await caller.send("ping")
            assert task.status.state == S.TASK_STATE_FAILED
            usage = metadata_of(task)["usage"]  # the first request's, before the model broke
            assert usage["requests"] >= 1
            assert usage["inputTokens"] > 0


def approval_agent(script: Script, deleted: list[str]) -> PydanticAgent[Any, Any]:
    pydantic_agent = PydanticAgent(script.model())

    @pydantic_agent.tool_plain(requires_approval=True)
    async def delete_file(path: str) -> str:
        deleted.append(path)
        return f"deleted {path}"

    return pydantic_agent


@pytest.mark.parametrize(
    ("reply", "approved", "model_sees"),
    [
        ("yes", True, "deleted a.txt"),
        ("no", False, "The tool call was denied."),
        ("not that one, it is mine", False, "not that one, it is mine"),
    ],
)
async def test_a_tool_that_needs_approval_asks_and_the_reply_resumes_the_run(
    reply: str, approved: bool, model_sees: str
) -> None:
    deleted: list[str] = []
    script = Script(call("delete_file", {"path": "a.txt"}, "c1"), say("Done."))
    served = bridge.as_agent(approval_agent(script, deleted), name="janitor")
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            events = await caller.stream("Delete a.txt")
            assert states(events)[-1] == S.TASK_STATE_INPUT_REQUIRED
            task_id = events[0].task.id
            task = await caller.get(task_id)
            text, data = question_of(task)
            assert text == 'Approve delete_file({"path":"a.txt"})? Answer yes or no.'
            assert data == [
                {
                    "type": "deferred_tools",
                    "approvals": [
                        {"id": "c1", "name": "delete_file", "arguments": {"path": "a.txt"}}
                    ],
                    "calls": [],
                }
            ]
            assert deleted == []
            resumed = await caller.stream(reply, task_id=task_id, context_id=task.context_id)
            assert states(resumed)[-1] == S.TASK_STATE_COMPLETED
            assert deleted == (["a.txt"] if approved else [])
            assert tool_returns(script.seen[-1]) == [model_sees]
            assert "".join(c.text for c in answer_chunks(resumed)) == "Done."


async def test_an_external_call_is_answered_with_a_data_part() -> None:
    script = Script(call("lookup", {"key": "k"}, "c7"), say("Found it."))
    pydantic_agent = PydanticAgent(script.model())

    @pydantic_agent.tool_plain
    async def lookup(key: str) -> str:
        raise CallDeferred

    value = Value()
    value.struct_value.update({"calls": {"c7": {"value": 42}}})
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(bridge.as_agent(pydantic_agent, name="looker")) as caller:
            first = await caller.send("Look k up")
            assert first.status.state == S.TASK_STATE_INPUT_REQUIRED
            assert question_of(first)[0] == 'The agent needs the result of lookup({"key":"k"}).'
            done = await caller.send(
                task_id=first.id, context_id=first.context_id, parts=[Part(data=value)]
            )
            assert done.status.state == S.TASK_STATE_COMPLETED
            assert tool_returns(script.seen[-1]) == [{"value": 42}]
            assert answer_text(done) == "Found it."


async def test_tasks_of_one_context_continue_one_conversation() -> None:
    script = Script(say("Hi Ada."), say("You are Ada."))
    pydantic_agent = PydanticAgent(script.model(), system_prompt="SECRET PROMPT")
    served = bridge.as_agent(pydantic_agent, name="memo")
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            first = await caller.send("I am Ada.")
            second = await caller.send("Who am I?", context_id=first.context_id)
            assert second.id != first.id
            assert user_texts(script.seen[1]) == ["I am Ada.", "Who am I?"]
            assert "SECRET PROMPT" in str(script.seen[1])  # the model still gets it
            for task in (first, second, await caller.get(first.id)):  # clients never do
                assert "SECRET PROMPT" not in str(task)
            assert answer_text(second) == "You are Ada."
            # Another context starts afresh.
            script.steps.append(say("Hello."))
            await caller.send("Who am I?")
            assert user_texts(script.seen[2]) == ["Who am I?"]


async def test_the_conversation_survives_a_restart_with_the_sqlite_store(tmp_path: Path) -> None:
    script = Script(say("Noted: blue."), say("Blue."))
    served = bridge.as_agent(PydanticAgent(script.model()), name="memo")
    path = tmp_path / "tasks.db"
    with anyio.fail_after(TIMEOUT):
        async with SQLiteTaskStore.open(path) as store:
            config = ServerConfig(supervisor_options={"store": store})
            async with sdk_agent(served, config) as caller:
                first = await caller.send("My colour is blue.")
        async with SQLiteTaskStore.open(path) as store:
            config = ServerConfig(supervisor_options={"store": store})
            async with sdk_agent(served, config) as caller:
                second = await caller.send("My colour?", context_id=first.context_id)
        assert user_texts(script.seen[1]) == ["My colour is blue.", "My colour?"]
        assert answer_text(second) == "Blue."


async def test_a_question_waiting_across_a_restart_is_answered_after_it(tmp_path: Path) -> None:
    deleted: list[str] = []
    script = Script(call("delete_file", {"path": "b.txt"}, "c2"), say("Gone."))
    served = bridge.as_agent(approval_agent(script, deleted), name="janitor")
    path = tmp_path / "tasks.db"
    with anyio.fail_after(TIMEOUT):
        async with SQLiteTaskStore.open(path) as store:
            config = ServerConfig(supervisor_options={"store": store, "keep_interrupted": True})
            async with sdk_agent(served, config) as caller:
                first = await caller.send("Delete b.txt")
                assert first.status.state == S.TASK_STATE_INPUT_REQUIRED
                assert metadata_of(first)["usage"]["requests"] == 1  # stored before asking
        async with SQLiteTaskStore.open(path) as store:
            config = ServerConfig(supervisor_options={"store": store, "keep_interrupted": True})
            async with sdk_agent(served, config) as caller:
                done = await caller.send("yes", task_id=first.id, context_id=first.context_id)
        assert done.status.state == S.TASK_STATE_COMPLETED
        assert deleted == ["b.txt"]
        assert answer_text(done) == "Gone."
        assert metadata_of(done)["usage"]["requests"] == 2  # the first run's kept


async def test_cancel_interrupts_the_model_call_at_once() -> None:
    started, stopped = asyncio.Event(), asyncio.Event()

    async def endless(_m: list[ModelMessage], _i: AgentInfo) -> AsyncIterator[str]:
        yield "Thinking"
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()
        yield "never"

    served = bridge.as_agent(PydanticAgent(Script(endless).model()), name="slow")
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            events = []
            async for event in caller.client.send_message(caller.request("go")):
                events.append(event)
                if answer_chunks(events):
                    break
            await started.wait()
            task = await caller.client.cancel_task(CancelTaskRequest(id=events[0].task.id))
            assert task.status.state == S.TASK_STATE_CANCELED
            assert stopped.is_set()


async def test_cancel_interrupts_a_running_tool() -> None:
    started, stopped = asyncio.Event(), asyncio.Event()
    script = Script(call("crunch", {}, "c1"))
    pydantic_agent = PydanticAgent(script.model())

    @pydantic_agent.tool_plain
    async def crunch() -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()
        return "never"

    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(bridge.as_agent(pydantic_agent, name="cruncher")) as caller:
            first = await caller.client.send_message(
                caller.request("go", blocking=False)
            ).__anext__()
            await started.wait()
            task = await caller.client.cancel_task(CancelTaskRequest(id=first.task.id))
            assert task.status.state == S.TASK_STATE_CANCELED
            assert stopped.is_set()


async def test_a_framework_error_fails_the_task_with_its_text() -> None:
    async def broken(_m: list[ModelMessage], _i: AgentInfo) -> AsyncIterator[str]:
        raise RuntimeError("the model is down")
        yield ""  # pragma: no cover

    served = bridge.as_agent(PydanticAgent(Script(broken).model()), name="broken")
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            task = await caller.send("hi")
            assert task.status.state == S.TASK_STATE_FAILED
            assert question_of(task)[0] == (
                "pydantic-ai agent failed: RuntimeError: the model is down"
            )


async def test_token_usage_goes_into_the_task_metadata() -> None:
    script = Script(call("ping", {}, "c1"), say("pong"))
    pydantic_agent = PydanticAgent(script.model())

    @pydantic_agent.tool_plain
    def ping() -> str:
        return "pong"

    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(bridge.as_agent(pydantic_agent, name="pinger")) as caller:
            task = await caller.send("ping")
            usage = metadata_of(task)["usage"]
            assert usage["requests"] == 2
            assert usage["inputTokens"] > 0
            assert usage["outputTokens"] > 0
            assert usage["totalTokens"] == usage["inputTokens"] + usage["outputTokens"]


async def test_file_and_data_parts_reach_the_model_and_other_kinds_are_refused() -> None:
    script = Script(say("Seen."))
    served = bridge.as_agent(PydanticAgent(script.model()), name="viewer")
    data = Value()
    data.struct_value.update({"order": 42})
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            task = await caller.send(
                "Look:",
                parts=[
                    Part(raw=b"\x89PNG....", media_type="image/png", filename="a.png"),
                    Part(url="https://example.com/cat.jpg"),
                    Part(data=data),
                ],
            )
            assert task.status.state == S.TASK_STATE_COMPLETED
            prompt = script.seen[0][-1].parts[-1]
            assert isinstance(prompt, UserPromptPart)
            content = list(prompt.content)
            assert content[0] == "Look:"
            assert isinstance(content[1], BinaryContent)
            assert (content[1].data, content[1].media_type) == (b"\x89PNG....", "image/png")
            assert isinstance(content[2], ImageUrl)
            assert content[2].url == "https://example.com/cat.jpg"
            assert isinstance(content[3], StructuredContent)
            assert content[3].value == {"order": 42.0}

            refused = await caller.send(
                parts=[Part(raw=b"PK..", media_type="application/zip", filename="x.zip")]
            )
            assert refused.status.state == S.TASK_STATE_REJECTED
            assert question_of(refused)[0] == (
                "ContentTypeNotSupportedError: PydanticAI agents take text, data, and image, "
                "audio, video, PDF or text files; got a file (application/zip, x.zip)"
            )
            assert len(script.seen) == 1  # the model never saw it


class Verdict(BaseModel):
    ok: bool
    reason: str


async def test_a_structured_output_is_the_answer_as_data() -> None:
    script = Script(call("final_result", {"ok": True, "reason": "fine"}))
    served = bridge.as_agent(PydanticAgent(script.model(), output_type=Verdict), name="judge")
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            task = await caller.send("Judge it")
            assert task.status.state == S.TASK_STATE_COMPLETED
            (answer,) = task.artifacts
            assert answer.name == "answer"
            assert answer.parts[0].data.struct_value["reason"] == "fine"


# -- remote tools ----------------------------------------------------------------------------


@agent(name="echo")
async def echo(ctx: TaskContext) -> str:
    return f"echo: {ctx.text}"


@agent(name="asker")
async def asker(ctx: TaskContext) -> str:
    reply = await ctx.ask("Which city?")
    return f"city: {reply.text}"


def caller_agent(script: Script, target: str) -> Any:
    pydantic_agent = PydanticAgent(script.model(), tools=[bridge.remote_tool(target, name="peer")])
    return bridge.as_agent(pydantic_agent, name="caller")


async def test_a_remote_tool_is_a_delegation_in_the_hop_tree() -> None:
    script = Script(call("peer", {"message": "hello"}, "c1"), say("The peer said hi."))
    with anyio.fail_after(TIMEOUT):
        async with (
            sdk_agent(echo) as remote,
            sdk_agent(caller_agent(script, remote.url)) as caller,
        ):
            events = await caller.stream("Ask the peer")
            assert tool_parts(events)[1]["result"] == "echo: hello"
            root = events[0].task.id
            tree = await fetch_tree(caller.url, root)
            assert tree.agent == "caller"
            assert [(c.agent, c.state) for c in tree.children] == [("echo", "TASK_STATE_COMPLETED")]


async def test_a_remote_question_is_the_tool_result_and_the_next_call_answers_it() -> None:
    script = Script(
        call("peer", {"message": "weather"}, "c1"),
        call("peer", {"message": "Paris"}, "c2"),
        say("Done."),
    )
    with anyio.fail_after(TIMEOUT):
        async with (
            sdk_agent(asker) as remote,
            sdk_agent(caller_agent(script, remote.url)) as caller,
        ):
            task = await caller.send("Go")
            assert task.status.state == S.TASK_STATE_COMPLETED
            assert tool_returns(script.seen[1])[0] == (
                "The agent asker asks: Which city?\n"
                "(Call this tool again with the answer to continue; its task waits.)"
            )
            assert tool_returns(script.seen[2])[-1] == "city: Paris"
            tree = await fetch_tree(caller.url, task.id)
            assert [c.agent for c in tree.children] == ["asker"]


async def test_cancelling_the_task_cancels_the_remote_call() -> None:
    started, stopped = anyio.Event(), anyio.Event()

    @agent(name="sleeper")
    async def sleeper(ctx: TaskContext) -> None:
        await ctx.start()
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            stopped.set()

    script = Script(call("peer", {"message": "sleep"}, "c1"))
    with anyio.fail_after(TIMEOUT):
        async with (
            sdk_agent(sleeper) as remote,
            sdk_agent(caller_agent(script, remote.url)) as caller,
        ):
            first = await caller.client.send_message(
                caller.request("go", blocking=False)
            ).__anext__()
            await started.wait()
            canceled = await caller.client.cancel_task(CancelTaskRequest(id=first.task.id))
            assert canceled.status.state == S.TASK_STATE_CANCELED
            await stopped.wait()
            tree = await fetch_tree(caller.url, first.task.id)
            assert [(c.agent, c.state) for c in tree.children] == [
                ("sleeper", "TASK_STATE_CANCELED")
            ]


async def test_a_remote_tool_works_in_a_plain_pydantic_ai_run() -> None:
    script = Script(call("peer", {"message": "plain"}, "c1"), say("ok"))
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(echo) as remote:
            pydantic_agent = PydanticAgent(
                script.model(), tools=[bridge.remote_tool(remote.url, name="peer")]
            )
            result = await pydantic_agent.run("go")
            assert result.output == "ok"
            assert tool_returns(script.seen[1]) == ["echo: plain"]


def test_the_default_tool_name_comes_from_the_target() -> None:
    assert bridge.remote_tool("http://127.0.0.1:8001").name == "127_0_0_1_8001"
    assert bridge.remote_tool("weather-agent").name == "weather-agent"
    assert bridge.remote_tool("x", name="my tool!").name == "my_tool"
