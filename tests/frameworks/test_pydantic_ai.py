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
from a2a.types.a2a_pb2 import Part, TaskState
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
from tests.frameworks import scenarios
from tests.frameworks.harness import (
    SDK_WARNINGS,
    answer_chunks,
    answer_text,
    data_part,
    follow_up,
    hold,
    metadata_of,
    on_sqlite,
    question_of,
    sdk_agent,
    send_once,
    states,
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
            await scenarios.streams_in_chunks(caller, gate, "Hello", "Hello, world")

            blocking = Script(say("Hello", ", world"))
            served_again = bridge.as_agent(PydanticAgent(blocking.model(), name="greeter"))
            async with sdk_agent(served_again) as other:
                await scenarios.answers_at_once(other, "Hello, world")


async def test_tool_calls_and_results_are_working_updates_never_in_the_answer() -> None:
    script = Script(call("weather", {"city": "Paris"}, "c1"), say("It is sunny."))
    pydantic_agent = PydanticAgent(script.model())

    @pydantic_agent.tool_plain
    async def weather(city: str) -> dict[str, str]:
        return {"city": city, "sky": "sunny"}

    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(bridge.as_agent(pydantic_agent, name="forecaster")) as caller:
            result = {"city": "Paris", "sky": "sunny"}
            await scenarios.tool_updates_then_answer(caller, result, "It is sunny.")


async def test_text_before_a_tool_call_and_the_answer_are_parted_by_a_blank_line() -> None:
    async def check(_m: list[ModelMessage], _i: AgentInfo) -> AsyncIterator[Any]:
        yield "Let me check."
        yield {0: DeltaToolCall(name="weather", json_args="{}", tool_call_id="c1")}

    script = Script(check, say("It is ", "sunny."))
    pydantic_agent = PydanticAgent(script.model())

    @pydantic_agent.tool_plain
    async def weather() -> str:
        return "sunny"

    task = await send_once(bridge.as_agent(pydantic_agent, name="forecaster"), "Weather?")
    assert answer_text(task) == "Let me check.\n\nIt is sunny."


def pinger(script: Script) -> Any:
    """An agent on ``script``'s model with a tool ``ping``, served as "pinger"."""
    pydantic_agent = PydanticAgent(script.model())

    @pydantic_agent.tool_plain
    def ping() -> str:
        return "pong"

    return bridge.as_agent(pydantic_agent, name="pinger")


async def test_the_usage_of_a_run_that_fails_is_kept() -> None:
    async def broken(_m: list[ModelMessage], _i: AgentInfo) -> AsyncIterator[str]:
        raise RuntimeError("the model is down")
        yield ""  # pragma: no cover

    task = await send_once(pinger(Script(call("ping", {}, "c1"), broken)), "ping")
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
            task = await caller.get(events[0].task.id)
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
            resumed = await caller.stream(**follow_up(task, reply))
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

    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(bridge.as_agent(pydantic_agent, name="looker")) as caller:
            first = await caller.send("Look k up")
            assert first.status.state == S.TASK_STATE_INPUT_REQUIRED
            assert question_of(first)[0] == 'The agent needs the result of lookup({"key":"k"}).'
            done = await caller.send(**follow_up(first, {"calls": {"c7": {"value": 42}}}))
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
    await scenarios.remembered_across_restart(tmp_path / "tasks.db", lambda: served)
    assert user_texts(script.seen[1]) == ["My colour is blue.", "My colour?"]


async def test_a_question_waiting_across_a_restart_is_answered_after_it(tmp_path: Path) -> None:
    deleted: list[str] = []
    script = Script(call("delete_file", {"path": "b.txt"}, "c2"), say("Gone."))
    served = bridge.as_agent(approval_agent(script, deleted), name="janitor")
    path = tmp_path / "tasks.db"
    with anyio.fail_after(TIMEOUT):
        async with on_sqlite(served, path, keep_interrupted=True) as caller:
            first = await caller.send("Delete b.txt")
            assert first.status.state == S.TASK_STATE_INPUT_REQUIRED
            assert metadata_of(first)["usage"]["requests"] == 1  # stored before asking
        async with on_sqlite(served, path, keep_interrupted=True) as caller:
            done = await caller.send(**follow_up(first, "yes"))
        assert done.status.state == S.TASK_STATE_COMPLETED
        assert deleted == ["b.txt"]
        assert answer_text(done) == "Gone."
        assert metadata_of(done)["usage"]["requests"] == 2  # the first run's kept


async def test_cancel_interrupts_the_model_call_at_once() -> None:
    started, stopped = asyncio.Event(), asyncio.Event()

    async def endless(_m: list[ModelMessage], _i: AgentInfo) -> AsyncIterator[str]:
        yield "Thinking"
        await hold(started, stopped)()
        yield "never"

    served = bridge.as_agent(PydanticAgent(Script(endless).model()), name="slow")
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            await scenarios.cancel_at_first_chunk(caller, started, stopped)


async def test_cancel_interrupts_a_running_tool() -> None:
    started, stopped = asyncio.Event(), asyncio.Event()
    script = Script(call("crunch", {}, "c1"))
    pydantic_agent = PydanticAgent(script.model())

    @pydantic_agent.tool_plain
    async def crunch() -> str:
        await hold(started, stopped)()
        return "never"

    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(bridge.as_agent(pydantic_agent, name="cruncher")) as caller:
            await scenarios.cancel_once_started(caller, started)
            assert stopped.is_set()


async def test_a_framework_error_fails_the_task_with_its_text() -> None:
    async def broken(_m: list[ModelMessage], _i: AgentInfo) -> AsyncIterator[str]:
        raise RuntimeError("the model is down")
        yield ""  # pragma: no cover

    task = await send_once(
        bridge.as_agent(PydanticAgent(Script(broken).model()), name="broken"), "hi"
    )
    assert task.status.state == S.TASK_STATE_FAILED
    assert question_of(task)[0] == "pydantic-ai agent failed: RuntimeError: the model is down"


async def test_token_usage_goes_into_the_task_metadata() -> None:
    task = await send_once(pinger(Script(call("ping", {}, "c1"), say("pong"))), "ping")
    usage = metadata_of(task)["usage"]
    assert usage["requests"] == 2
    assert usage["inputTokens"] > 0
    assert usage["outputTokens"] > 0
    assert usage["totalTokens"] == usage["inputTokens"] + usage["outputTokens"]


async def test_file_and_data_parts_reach_the_model_and_other_kinds_are_refused() -> None:
    script = Script(say("Seen."))
    served = bridge.as_agent(PydanticAgent(script.model()), name="viewer")
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            task = await caller.send(
                "Look:",
                parts=[
                    Part(raw=b"\x89PNG....", media_type="image/png", filename="a.png"),
                    Part(url="https://example.com/cat.jpg"),
                    data_part({"order": 42}),
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

            zip_file = Part(raw=b"PK..", media_type="application/zip", filename="x.zip")
            assert await scenarios.refusal_of(caller, zip_file) == (
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
    task = await send_once(served, "Judge it")
    assert task.status.state == S.TASK_STATE_COMPLETED
    (answer,) = task.artifacts
    assert answer.name == "answer"
    assert answer.parts[0].data.struct_value["reason"] == "fine"


# -- remote tools ----------------------------------------------------------------------------


def caller_agent(script: Script, target: str) -> Any:
    pydantic_agent = PydanticAgent(script.model(), tools=[bridge.remote_tool(target, name="peer")])
    return bridge.as_agent(pydantic_agent, name="caller")


REMOTE = scenarios.Remote(Script, say, call, caller_agent, tool_returns)


async def test_a_remote_tool_is_a_delegation_in_the_hop_tree() -> None:
    await scenarios.remote_tool_is_a_delegation(REMOTE)


async def test_a_remote_question_is_the_tool_result_and_the_next_call_answers_it() -> None:
    await scenarios.remote_question_is_the_tool_result(REMOTE)


async def test_cancelling_the_task_cancels_the_remote_call() -> None:
    await scenarios.remote_tool_cancelled_with_the_task(REMOTE)


async def test_a_remote_tool_works_in_a_plain_pydantic_ai_run() -> None:
    async def run(script: Script, url: str) -> str:
        tool = bridge.remote_tool(url, name="peer")
        return (await PydanticAgent(script.model(), tools=[tool]).run("go")).output

    await scenarios.remote_tool_in_a_plain_run(REMOTE, run)


def test_the_default_tool_name_comes_from_the_target() -> None:
    scenarios.default_tool_names(bridge.remote_tool)
