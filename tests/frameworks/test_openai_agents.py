"""OpenAI Agents SDK agents served by a2a-actors, called with the official SDK's client.

Every agent runs on the SDK's own ``ScriptedModel``, scripted step by step
(:mod:`tests.frameworks.openai_models`); tracing is off, no network, no API key.
"""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

import anyio
import pytest
from a2a.types.a2a_pb2 import Part, TaskState
from agents import Agent as OpenAIAgent, Runner, function_tool, set_tracing_disabled
from pydantic import BaseModel

from a2a_actors.frameworks import openai_agents as bridge
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
    tool_parts,
)
from tests.frameworks.openai_models import Script, call, calls, say

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings(SDK_WARNINGS)]

# Tracing is on by default in the SDK and exports to OpenAI: never from these tests.
set_tracing_disabled(True)

TIMEOUT = 20.0
S = TaskState


def outputs(items: list[Any]) -> list[Any]:
    """The tool outputs among a model call's input items."""
    return [i["output"] for i in items if i.get("type") == "function_call_output"]


def texts(items: list[Any], role: str) -> list[str]:
    """The texts of the messages of ``role`` among input items, oldest first."""
    found = []
    for item in items:
        if item.get("role") != role:
            continue
        content = item["content"]
        if isinstance(content, str):
            found.append(content)
        else:
            found.append("".join(c.get("text", "") for c in content))
    return found


async def test_text_deltas_stream_as_chunks_of_one_answer_as_they_are_produced() -> None:
    gate = asyncio.Event()
    script = Script(say("Hello", gate.wait, ", world"))
    served = bridge.as_agent(OpenAIAgent(name="greeter", model=script.model))
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            await scenarios.streams_in_chunks(caller, gate, "Hello", "Hello, world")
            script.add(say("Hello", ", world"))
            await scenarios.answers_at_once(caller, "Hello, world")


async def test_tool_calls_and_results_are_working_updates_never_in_the_answer() -> None:
    @function_tool
    async def weather(city: str) -> dict[str, str]:
        """The weather of a city."""
        return {"city": city, "sky": "sunny"}

    script = Script(call("weather", {"city": "Paris"}, "c1"), say("It is sunny."))
    served = bridge.as_agent(OpenAIAgent(name="forecaster", model=script.model, tools=[weather]))
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            result = {"city": "Paris", "sky": "sunny"}
            await scenarios.tool_updates_then_answer(caller, result, "It is sunny.")


def janitor(script: Script, deleted: list[str]) -> Any:
    async def delete_file(path: str) -> str:
        deleted.append(path)
        return f"deleted {path}"

    tool = function_tool(delete_file, needs_approval=True)
    return bridge.as_agent(OpenAIAgent(name="janitor", model=script.model, tools=[tool]))


@pytest.mark.parametrize(
    ("reply", "approved", "model_sees"),
    [
        (["yes"], True, "deleted a.txt"),
        (["Approve."], True, "deleted a.txt"),
        ([{"approve": True}], True, "deleted a.txt"),
        (["no"], False, "Tool execution was not approved."),
        (["not that one, it is mine"], False, "not that one, it is mine"),
    ],
)
async def test_a_tool_that_needs_approval_asks_and_the_reply_resumes_the_run(
    reply: list[Any], approved: bool, model_sees: str
) -> None:
    deleted: list[str] = []
    script = Script(call("delete_file", {"path": "a.txt"}, "c1"), say("Done."))
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(janitor(script, deleted)) as caller:
            events = await caller.stream("Delete a.txt")
            assert states(events)[-1] == S.TASK_STATE_INPUT_REQUIRED
            task = await caller.get(events[0].task.id)
            text, asked = question_of(task)
            assert text == 'Approve delete_file({"path":"a.txt"})? Answer yes or no.'
            assert asked == [
                {"type": "tool_approval", "id": "c1", "name": "delete_file"}
                | {"arguments": {"path": "a.txt"}}
            ]
            assert deleted == []
            resumed = await caller.stream(**follow_up(task, reply[0]))
            assert states(resumed)[-1] == S.TASK_STATE_COMPLETED
            assert deleted == (["a.txt"] if approved else [])
            assert len(script.seen) == 2  # resumed after the call: the model was not asked again
            assert outputs(script.seen[-1]) == [model_sees]
            assert "".join(c.text for c in answer_chunks(resumed)) == "Done."
            # The tool's result is reported once it ran (its call was, before the question).
            assert [p["type"] for p in tool_parts(resumed)] == ["tool_result"]


async def test_each_approval_is_asked_in_turn_and_usage_counts_every_call_once() -> None:
    deleted: list[str] = []
    script = Script(
        calls(("delete_file", {"path": "a"}, "c1"), ("delete_file", {"path": "b"}, "c2")),
        say("Half done."),
    )
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(janitor(script, deleted)) as caller:
            first = await caller.send("Delete a and b")
            assert question_of(first)[1][0]["id"] == "c1"
            second = await caller.send("yes", task_id=first.id, context_id=first.context_id)
            assert second.status.state == S.TASK_STATE_INPUT_REQUIRED
            assert question_of(second)[1][0]["id"] == "c2"
            assert deleted == []  # nothing runs before every call is decided
            done = await caller.send("no", task_id=first.id, context_id=first.context_id)
            assert done.status.state == S.TASK_STATE_COMPLETED
            assert deleted == ["a"]
            assert outputs(script.seen[-1]) == ["deleted a", "Tool execution was not approved."]
            assert metadata_of(done)["usage"] == {
                "inputTokens": 20,
                "outputTokens": 10,
                "totalTokens": 30,
                "requests": 2,
            }


async def test_approvals_waiting_across_restarts_are_answered_after_them(tmp_path: Path) -> None:
    deleted: list[str] = []
    script = Script(
        calls(("delete_file", {"path": "a"}, "c1"), ("delete_file", {"path": "b"}, "c2")),
        say("Gone."),
    )
    served = janitor(script, deleted)
    path = tmp_path / "tasks.db"

    async def send(text: str, **options: Any) -> Any:
        async with on_sqlite(served, path, keep_interrupted=True) as caller:
            return await caller.send(text, **options)

    with anyio.fail_after(TIMEOUT):
        first = await send("Delete a and b")
        assert question_of(first)[1][0]["id"] == "c1"
        options = {"task_id": first.id, "context_id": first.context_id}
        second = await send("yes", **options)
        assert second.status.state == S.TASK_STATE_INPUT_REQUIRED
        assert question_of(second)[1][0]["id"] == "c2"
        done = await send("no", **options)
        assert done.status.state == S.TASK_STATE_COMPLETED
        assert deleted == ["a"]
        assert answer_text(done) == "Gone."
        assert metadata_of(done)["usage"]["requests"] == 2
        assert len(script.seen) == 2  # the model was not called again by the restarts


async def test_tasks_of_one_context_continue_one_conversation() -> None:
    script = Script(say("Hi Ada."), say("You are Ada."))
    model_agent = OpenAIAgent(name="memo", instructions="Be brief.", model=script.model)
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(bridge.as_agent(model_agent)) as caller:
            first = await caller.send("I am Ada.")
            second = await caller.send("Who am I?", context_id=first.context_id)
            assert second.id != first.id
            assert texts(script.seen[1], "user") == ["I am Ada.", "Who am I?"]
            assert texts(script.seen[1], "assistant") == ["Hi Ada."]
            assert answer_text(second) == "You are Ada."
            assert "a2a-actors/conversation" not in metadata_of(second)  # never shown
            stored = (await caller.private(second.id))["a2a-actors/conversation"]
            assert stored["framework"] == "openai-agents"
            assert texts(stored["messages"], "user") == ["Who am I?"]  # this task's only
            assert "Be brief." not in str(await caller.private(first.id))  # not an item
            # Another context starts afresh.
            script.add(say("Hello."))
            await caller.send("Who am I?")
            assert texts(script.seen[2], "user") == ["Who am I?"]


async def test_the_conversation_survives_a_restart_with_the_sqlite_store(tmp_path: Path) -> None:
    script = Script(say("Noted: blue."), say("Blue."))
    served = bridge.as_agent(OpenAIAgent(name="memo", model=script.model))
    await scenarios.remembered_across_restart(tmp_path / "tasks.db", lambda: served)
    assert texts(script.seen[1], "user") == ["My colour is blue.", "My colour?"]
    assert texts(script.seen[1], "assistant") == ["Noted: blue."]


async def test_cancel_interrupts_the_model_call_at_once() -> None:
    started, stopped = asyncio.Event(), asyncio.Event()
    script = Script(say("Thinking", hold(started, stopped), "never"))
    served = bridge.as_agent(OpenAIAgent(name="slow", model=script.model))
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            await scenarios.cancel_at_first_chunk(caller, started, stopped)


async def test_cancel_interrupts_a_running_tool() -> None:
    started, stopped = asyncio.Event(), asyncio.Event()

    @function_tool
    async def crunch() -> str:
        """Crunch."""
        await hold(started, stopped)()
        return "never"

    script = Script(call("crunch", {}, "c1"))
    served = bridge.as_agent(OpenAIAgent(name="cruncher", model=script.model, tools=[crunch]))
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            await scenarios.cancel_once_started(caller, started)
            assert stopped.is_set()


async def test_a_framework_error_fails_the_task_with_its_text() -> None:
    script = Script(RuntimeError("the model is down"))
    task = await send_once(bridge.as_agent(OpenAIAgent(name="broken", model=script.model)), "hi")
    assert task.status.state == S.TASK_STATE_FAILED
    assert question_of(task)[0] == "openai-agents agent failed: RuntimeError: the model is down"


def pinger(script: Script) -> OpenAIAgent[Any]:
    """An agent on ``script``'s model with a tool ``ping``."""

    @function_tool
    def ping() -> str:
        """Ping."""
        return "pong"

    return OpenAIAgent(name="pinger", model=script.model, tools=[ping])


async def test_more_turns_than_max_turns_fail_the_task() -> None:
    script = Script(call("ping", {}, "c1"), say("never"))
    task = await send_once(bridge.as_agent(pinger(script), max_turns=1), "ping")
    assert task.status.state == S.TASK_STATE_FAILED
    assert question_of(task)[0] == (
        "openai-agents agent failed: MaxTurnsExceeded: Max turns (1) exceeded"
    )


async def test_token_usage_goes_into_the_task_metadata() -> None:
    script = Script(call("ping", {}, "c1"), say("pong"))
    task = await send_once(bridge.as_agent(pinger(script)), "ping")
    assert metadata_of(task)["usage"] == {
        "inputTokens": 20,
        "outputTokens": 10,
        "totalTokens": 30,
        "requests": 2,
    }


async def test_file_and_data_parts_reach_the_model_and_other_kinds_are_refused() -> None:
    script = Script(say("Seen."))
    served = bridge.as_agent(OpenAIAgent(name="viewer", model=script.model))
    png, pdf = b"\x89PNG....", b"%PDF-1.7 ..."
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            task = await caller.send(
                "Look:",
                parts=[
                    Part(raw=png, media_type="image/png", filename="a.png"),
                    Part(url="https://example.com/cat.jpg"),
                    Part(raw=pdf, media_type="application/pdf", filename="doc.pdf"),
                    Part(url="https://example.com/doc.pdf"),
                    data_part({"order": 42}),
                ],
            )
            assert task.status.state == S.TASK_STATE_COMPLETED
            (user,) = script.seen[0]
            assert user["role"] == "user"
            assert user["content"] == [
                {"type": "input_text", "text": "Look:"},
                {
                    "type": "input_image",
                    "image_url": f"data:image/png;base64,{base64.b64encode(png).decode()}",
                    "detail": "auto",
                },
                {
                    "type": "input_image",
                    "image_url": "https://example.com/cat.jpg",
                    "detail": "auto",
                },
                {
                    "type": "input_file",
                    "file_data": f"data:application/pdf;base64,{base64.b64encode(pdf).decode()}",
                    "filename": "doc.pdf",
                },
                {"type": "input_file", "file_url": "https://example.com/doc.pdf"},
                {"type": "input_text", "text": '{"order":42.0}'},
            ]

            wav = Part(raw=b"RIFF....", media_type="audio/wav", filename="x.wav")
            text = await scenarios.refusal_of(caller, wav)
            assert text.startswith("ContentTypeNotSupportedError: ")
            assert text.endswith(
                "OpenAI agents take text, data, and image, PDF or text files; "
                "got a file (audio/wav, x.wav)"
            )
            assert len(script.seen) == 1  # the model never saw it


class Verdict(BaseModel):
    ok: bool
    reason: str


async def test_a_structured_output_is_the_answer_as_data() -> None:
    script = Script(say('{"ok": true, ', '"reason": "fine"}'))
    model_agent = OpenAIAgent(name="judge", model=script.model, output_type=Verdict)
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(bridge.as_agent(model_agent)) as caller:
            events = await caller.stream("Judge it")
            assert states(events)[-1] == S.TASK_STATE_COMPLETED
            task = await caller.get(events[0].task.id)
            (answer,) = task.artifacts
            assert answer.name == "answer"
            assert [p.WhichOneof("content") for p in answer.parts] == ["data"]
            assert answer.parts[0].data.struct_value["reason"] == "fine"
            assert answer.parts[0].data.struct_value["ok"] is True


def test_the_card_defaults_come_from_the_agent() -> None:
    model_agent = OpenAIAgent(name="helper", handoff_description="Helps with things.")
    served = bridge.as_agent(model_agent)
    assert (served.name, served.description) == ("helper", "Helps with things.")
    renamed = bridge.as_agent(model_agent, name="other", description="")
    assert (renamed.name, renamed.description) == ("other", "")
    assert bridge.as_agent(OpenAIAgent(name="bare")).description == ""


# -- remote tools ----------------------------------------------------------------------------


def caller_agent(script: Script, target: str) -> Any:
    tool = bridge.remote_tool(target, name="peer")
    return bridge.as_agent(OpenAIAgent(name="caller", model=script.model, tools=[tool]))


REMOTE = scenarios.Remote(Script, say, call, caller_agent, outputs)


async def test_a_remote_tool_is_a_delegation_in_the_hop_tree() -> None:
    await scenarios.remote_tool_is_a_delegation(REMOTE)


async def test_a_remote_question_is_the_tool_result_and_the_next_call_answers_it() -> None:
    await scenarios.remote_question_is_the_tool_result(REMOTE)


async def test_cancelling_the_task_cancels_the_remote_call() -> None:
    await scenarios.remote_tool_cancelled_with_the_task(REMOTE)


async def test_a_remote_tool_works_in_a_plain_openai_agents_run() -> None:
    async def run(script: Script, url: str) -> str | None:
        tool = bridge.remote_tool(url, name="peer", description="The peer.")
        assert (tool.name, tool.description) == ("peer", "The peer.")
        result = await Runner.run(OpenAIAgent(name="a", model=script.model, tools=[tool]), "go")
        assert isinstance(result.final_output, str)
        return result.final_output

    await scenarios.remote_tool_in_a_plain_run(REMOTE, run)


def test_the_default_tool_name_comes_from_the_target() -> None:
    scenarios.default_tool_names(bridge.remote_tool)
    schema = bridge.remote_tool("weather-agent").params_json_schema
    assert list(schema["properties"]) == ["message"]
    assert schema["properties"]["message"]["description"].startswith("The message for the agent")
