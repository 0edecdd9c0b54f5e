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
from a2a.types.a2a_pb2 import CancelTaskRequest, Part, TaskState
from agents import Agent as OpenAIAgent, Runner, function_tool, set_tracing_disabled
from google.protobuf.json_format import MessageToDict
from google.protobuf.struct_pb2 import Value
from pydantic import BaseModel

from a2a_actors.frameworks import openai_agents as bridge
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


def data(value: dict[str, Any]) -> Part:
    part = Value()
    part.struct_value.update(value)
    return Part(data=part)


async def test_text_deltas_stream_as_chunks_of_one_answer_as_they_are_produced() -> None:
    gate = asyncio.Event()
    script = Script(say("Hello", gate.wait, ", world"))
    served = bridge.as_agent(OpenAIAgent(name="greeter", model=script.model))
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

            script.add(say("Hello", ", world"))
            task = await caller.send("hi")
            assert task.status.state == S.TASK_STATE_COMPLETED
            assert answer_text(task) == "Hello, world"
            assert [a.name for a in task.artifacts] == ["answer"]


async def test_tool_calls_and_results_are_working_updates_never_in_the_answer() -> None:
    @function_tool
    async def weather(city: str) -> dict[str, str]:
        """The weather of a city."""
        return {"city": city, "sky": "sunny"}

    script = Script(call("weather", {"city": "Paris"}, "c1"), say("It is sunny."))
    served = bridge.as_agent(OpenAIAgent(name="forecaster", model=script.model, tools=[weather]))
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            events = await caller.stream("Weather in Paris?")
            assert tool_parts(events) == [
                {"type": "tool_call", "id": "c1", "name": "weather"}
                | {"arguments": {"city": "Paris"}},
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
            options: dict[str, Any] = {"task_id": task.id, "context_id": task.context_id}
            if isinstance(reply[0], dict):
                resumed = await caller.stream(parts=[data(reply[0])], **options)
            else:
                resumed = await caller.stream(reply[0], **options)
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
        async with SQLiteTaskStore.open(path) as store:
            config = ServerConfig(supervisor_options={"store": store, "keep_interrupted": True})
            async with sdk_agent(served, config) as caller:
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
        assert texts(script.seen[1], "user") == ["My colour is blue.", "My colour?"]
        assert texts(script.seen[1], "assistant") == ["Noted: blue."]
        assert answer_text(second) == "Blue."


def hold(started: asyncio.Event, stopped: asyncio.Event) -> Any:
    """An await that never ends: ``started`` when it begins, ``stopped`` when cancelled."""

    async def forever() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()

    return forever


async def test_cancel_interrupts_the_model_call_at_once() -> None:
    started, stopped = asyncio.Event(), asyncio.Event()
    script = Script(say("Thinking", hold(started, stopped), "never"))
    served = bridge.as_agent(OpenAIAgent(name="slow", model=script.model))
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

    @function_tool
    async def crunch() -> str:
        """Crunch."""
        await hold(started, stopped)()
        return "never"

    script = Script(call("crunch", {}, "c1"))
    served = bridge.as_agent(OpenAIAgent(name="cruncher", model=script.model, tools=[crunch]))
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            first = await caller.client.send_message(
                caller.request("go", blocking=False)
            ).__anext__()
            await started.wait()
            task = await caller.client.cancel_task(CancelTaskRequest(id=first.task.id))
            assert task.status.state == S.TASK_STATE_CANCELED
            assert stopped.is_set()


async def test_a_framework_error_fails_the_task_with_its_text() -> None:
    script = Script(RuntimeError("the model is down"))
    served = bridge.as_agent(OpenAIAgent(name="broken", model=script.model))
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            task = await caller.send("hi")
            assert task.status.state == S.TASK_STATE_FAILED
            assert question_of(task)[0] == (
                "openai-agents agent failed: RuntimeError: the model is down"
            )


async def test_more_turns_than_max_turns_fail_the_task() -> None:
    @function_tool
    def ping() -> str:
        """Ping."""
        return "pong"

    script = Script(call("ping", {}, "c1"), say("never"))
    model_agent = OpenAIAgent(name="pinger", model=script.model, tools=[ping])
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(bridge.as_agent(model_agent, max_turns=1)) as caller:
            task = await caller.send("ping")
            assert task.status.state == S.TASK_STATE_FAILED
            assert question_of(task)[0] == (
                "openai-agents agent failed: MaxTurnsExceeded: Max turns (1) exceeded"
            )


async def test_token_usage_goes_into_the_task_metadata() -> None:
    @function_tool
    def ping() -> str:
        """Ping."""
        return "pong"

    script = Script(call("ping", {}, "c1"), say("pong"))
    served = bridge.as_agent(OpenAIAgent(name="pinger", model=script.model, tools=[ping]))
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            task = await caller.send("ping")
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
                    data({"order": 42}),
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

            refused = await caller.send(
                parts=[Part(raw=b"RIFF....", media_type="audio/wav", filename="x.wav")]
            )
            assert refused.status.state == S.TASK_STATE_REJECTED
            text = question_of(refused)[0]
            assert text.startswith("ContentTypeNotSupportedError: ")
            assert text.endswith(
                "OpenAI agents take text, data, and image, PDF or text files; "
                "got a file (audio/wav, x.wav)"
            )
            assert "code" in MessageToDict(refused.status.message.metadata)["error"]
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


@agent(name="echo")
async def echo(ctx: TaskContext) -> str:
    return f"echo: {ctx.text}"


@agent(name="asker")
async def asker(ctx: TaskContext) -> str:
    reply = await ctx.ask("Which city?")
    return f"city: {reply.text}"


def caller_agent(script: Script, target: str) -> Any:
    tool = bridge.remote_tool(target, name="peer")
    return bridge.as_agent(OpenAIAgent(name="caller", model=script.model, tools=[tool]))


async def test_a_remote_tool_is_a_delegation_in_the_hop_tree() -> None:
    script = Script(call("peer", {"message": "hello"}, "c1"), say("The peer said hi."))
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(echo) as remote, sdk_agent(caller_agent(script, remote.url)) as caller:
            events = await caller.stream("Ask the peer")
            assert tool_parts(events)[1]["result"] == "echo: hello"
            assert outputs(script.seen[1]) == ["echo: hello"]
            tree = await fetch_tree(caller.url, events[0].task.id)
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
            assert outputs(script.seen[1]) == [
                "The agent asker asks: Which city?\n"
                "(Call this tool again with the answer to continue; its task waits.)"
            ]
            assert outputs(script.seen[2])[-1] == "city: Paris"
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


async def test_a_remote_tool_works_in_a_plain_openai_agents_run() -> None:
    script = Script(call("peer", {"message": "plain"}, "c1"), say("ok"))
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(echo) as remote:
            tool = bridge.remote_tool(remote.url, name="peer", description="The peer.")
            assert (tool.name, tool.description) == ("peer", "The peer.")
            result = await Runner.run(OpenAIAgent(name="a", model=script.model, tools=[tool]), "go")
            assert result.final_output == "ok"
            assert outputs(script.seen[1]) == ["echo: plain"]


def test_the_default_tool_name_comes_from_the_target() -> None:
    assert bridge.remote_tool("http://127.0.0.1:8001").name == "127_0_0_1_8001"
    assert bridge.remote_tool("weather-agent").name == "weather-agent"
    assert bridge.remote_tool("x", name="my tool!").name == "my_tool"
    schema = bridge.remote_tool("weather-agent").params_json_schema
    assert list(schema["properties"]) == ["message"]
    assert schema["properties"]["message"]["description"].startswith("The message for the agent")
