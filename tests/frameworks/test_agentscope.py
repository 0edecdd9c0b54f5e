"""AgentScope agents served by a2a-actors, called with the official SDK's client.

Every agent is an AgentScope 2 ``Agent`` (its ReAct agent) on a scripted ``ChatModelBase``
subclass (:mod:`tests.frameworks.agentscope_models`) that streams deltas as AgentScope's
own models do; no network, no API key.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from a2a.types.a2a_pb2 import CancelTaskRequest, Part, TaskState
from agentscope.agent import Agent as ScopeAgent
from agentscope.message import (
    Base64Source,
    DataBlock,
    Msg,
    TextBlock,
    ToolResultBlock,
    URLSource,
    UserMsg,
)
from agentscope.middleware import MiddlewareBase
from agentscope.permission import PermissionBehavior, PermissionDecision
from agentscope.tool import AskUser, FunctionTool, Toolkit

from a2a_actors.frameworks import agentscope as bridge
from a2a_actors.frameworks._agentscope_state import UNFINISHED
from tests.frameworks import scenarios
from tests.frameworks.agentscope_models import Script, call, calls, say
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

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings(SDK_WARNINGS)]

TIMEOUT = 20.0
S = TaskState
DENIED = '<system-reminder>The execution of tool "delete_file" is denied by user!</system-reminder>'
ALLOW = PermissionDecision(behavior=PermissionBehavior.ALLOW, message="allowed in tests")


def scope_agent(script: Script, *tools: Any, name: str = "helper", **options: Any) -> ScopeAgent:
    return ScopeAgent(
        name=name,
        system_prompt="Be brief.",
        model=script.model,
        toolkit=Toolkit(tools=list(tools)),
        **options,
    )


def allowed(fn: Callable[..., Awaitable[Any]], *, ask: bool = False) -> FunctionTool:
    """A function tool that runs without a confirmation (``ask``: one that AgentScope asks
    the user to confirm, as it does by default)."""
    return FunctionTool(fn, permission=None if ask else ALLOW)


def texts(messages: list[Msg], role: str) -> list[str]:
    """The texts of the messages of ``role``, oldest first."""
    return [m.get_text_content() or "" for m in messages if m.role == role]


def outputs(messages: list[Msg]) -> list[str]:
    """The tool results (as text) the model was sent, oldest first."""
    found = []
    for message in messages:
        for block in message.content:
            if isinstance(block, ToolResultBlock) and isinstance(block.output, str):
                found.append(block.output)
            elif isinstance(block, ToolResultBlock):
                found.append("".join(b.text for b in block.output if isinstance(b, TextBlock)))
    return found


async def test_text_deltas_stream_as_chunks_of_one_answer_as_they_are_produced() -> None:
    gate = asyncio.Event()
    script = Script(say("Hello", gate.wait, ", world"))
    served = bridge.as_agent(scope_agent(script, name="greeter"))
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            await scenarios.streams_in_chunks(caller, gate, "Hello", "Hello, world")
            script.add(say("Hello", ", world"))
            await scenarios.answers_at_once(caller, "Hello, world")


async def test_tool_calls_and_results_are_working_updates_never_in_the_answer() -> None:
    async def weather(city: str) -> str:
        """The weather of a city.

        Args:
            city: The city.
        """
        return f"sunny in {city}"

    script = Script(
        call("weather", {"city": "Paris"}, "c1", text="Let me check."), say("It is sunny.")
    )
    served = bridge.as_agent(scope_agent(script, allowed(weather), name="forecaster"))
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            # The texts of the two model calls, parted by a blank line; no tool output.
            expected = "Let me check.\n\nIt is sunny."
            await scenarios.tool_updates_then_answer(caller, "sunny in Paris", expected)
            assert outputs(script.seen[1]) == ["sunny in Paris"]


async def test_a_failing_tool_is_a_result_marked_as_an_error() -> None:
    async def explode() -> str:
        """Explode."""
        raise ValueError("boom")

    script = Script(call("explode", {}, "c1"), say("It broke."))
    served = bridge.as_agent(scope_agent(script, allowed(explode)))
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            events = await caller.stream("Go")
            assert tool_parts(events)[1] == {
                "type": "tool_result",
                "id": "c1",
                "name": "explode",
                "result": "boom",
                "error": True,
            }
            assert states(events)[-1] == S.TASK_STATE_COMPLETED


def janitor(script: Script, deleted: list[str], *tools: Any) -> Any:
    async def delete_file(path: str) -> str:
        """Delete a file.

        Args:
            path: The file.
        """
        deleted.append(path)
        return f"deleted {path}"

    tool = allowed(delete_file, ask=True)
    return bridge.as_agent(scope_agent(script, tool, *tools, name="janitor"))


@pytest.mark.parametrize(
    ("reply", "approved"),
    [("yes", True), ("Approve.", True), ({"approve": True}, True), ("no", False)],
)
async def test_a_tool_call_to_confirm_asks_and_the_reply_resumes_the_reply(
    reply: str | dict[str, Any], approved: bool
) -> None:
    deleted: list[str] = []
    script = Script(call("delete_file", {"path": "a.txt"}, "c1"), say("Done."))
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(janitor(script, deleted)) as caller:
            events = await caller.stream("Delete a.txt")
            assert states(events)[-1] == S.TASK_STATE_INPUT_REQUIRED
            assert [p["type"] for p in tool_parts(events)] == ["tool_call"]
            task = await caller.get(events[0].task.id)
            text, asked = question_of(task)
            assert text == 'Approve delete_file({"path": "a.txt"})? Answer yes or no.'
            assert asked == [
                {"type": "tool_approval", "id": "c1", "name": "delete_file"}
                | {"arguments": {"path": "a.txt"}}
            ]
            assert deleted == []
            resumed = await caller.stream(**follow_up(task, reply))
            assert states(resumed)[-1] == S.TASK_STATE_COMPLETED
            assert deleted == (["a.txt"] if approved else [])
            assert len(script.seen) == 2  # resumed after the call: the model was not asked again
            assert outputs(script.seen[-1]) == ["deleted a.txt" if approved else DENIED]
            result = tool_parts(resumed)[0]
            assert (result["type"], result.get("error", False)) == ("tool_result", not approved)
            assert "".join(c.text for c in answer_chunks(resumed)) == "Done."


def ask_user(*questions: str, multi: bool = False) -> dict[str, Any]:
    return {
        "questions": [
            {
                "question": q,
                "header": q[:10],
                "multi_select": multi,
                "options": [
                    {"label": "Paris", "description": "The capital."},
                    {"label": "Rome", "description": "The eternal city."},
                ],
            }
            for q in questions
        ]
    }


@pytest.mark.parametrize(
    ("reply", "seen"),
    [
        ("paris", "Which city?\nParis"),
        ("Lyon, if possible", "Which city?\nLyon, if possible"),
        ({"answers": [{"question": "Which city?", "selected": ["Rome"]}]}, "Which city?\nRome"),
    ],
)
async def test_askuser_asks_its_questions_and_the_reply_answers_them(
    reply: str | dict[str, Any], seen: str
) -> None:
    script = Script(call("AskUser", ask_user("Which city?"), "c1"), say("Noted."))
    served = bridge.as_agent(scope_agent(script, AskUser(), name="planner"))
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            task = await caller.send("Plan a trip")
            assert task.status.state == S.TASK_STATE_INPUT_REQUIRED
            text, asked = question_of(task)
            assert text == "Which city? (Paris / Rome)"
            assert asked[0]["type"] == "ask_user"
            assert asked[0]["arguments"]["questions"][0]["question"] == "Which city?"
            done = await caller.send(**follow_up(task, reply))
            assert done.status.state == S.TASK_STATE_COMPLETED
            assert outputs(script.seen[-1]) == [seen]
            assert answer_text(done) == "Noted."


async def test_calls_waiting_together_are_asked_in_turn_across_restarts(tmp_path: Path) -> None:
    deleted: list[str] = []
    script = Script(
        calls(
            ("delete_file", {"path": "a"}, "c1"),
            ("AskUser", ask_user("First?", "Second?", multi=True), "c2"),
            ("delete_file", {"path": "b"}, "c3"),
        ),
        say("Half done."),
    )
    served = janitor(script, deleted, AskUser())
    path = tmp_path / "tasks.db"

    async def send(text: str, **options: Any) -> Any:
        async with on_sqlite(served, path, keep_interrupted=True) as caller:
            return await caller.send(text, **options)

    with anyio.fail_after(TIMEOUT):
        first = await send("Tidy up")
        assert question_of(first)[1][0]["id"] == "c1"
        options = {"task_id": first.id, "context_id": first.context_id}
        second = await send("yes", **options)
        assert question_of(second)[1][0]["id"] == "c2"
        third = await send("Paris, rome\nLyon", **options)
        # AgentScope asks about the second delete_file once the first is decided (its
        # suggested rule would cover it), so the first ran before this question.
        assert question_of(third)[1][0]["id"] == "c3"
        assert deleted == ["a"]
        done = await send("no", **options)
        assert done.status.state == S.TASK_STATE_COMPLETED
        assert deleted == ["a"]
        assert outputs(script.seen[-1]) == [
            "deleted a",
            "First?\nParis, Rome\n\nSecond?\nLyon",
            DENIED,
        ]
        assert answer_text(done) == "Half done."
        assert metadata_of(done)["usage"]["requests"] == 2
        assert len(script.seen) == 2  # the model was not called again by the restarts


async def test_a_task_cancelled_while_asking_leaves_the_conversation_ready() -> None:
    deleted: list[str] = []
    script = Script(call("delete_file", {"path": "a.txt"}, "c1"), say("What now?"))
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(janitor(script, deleted)) as caller:
            asked = await caller.send("Delete a.txt")
            assert asked.status.state == S.TASK_STATE_INPUT_REQUIRED
            canceled = await caller.client.cancel_task(CancelTaskRequest(id=asked.id))
            assert canceled.status.state == S.TASK_STATE_CANCELED
            task = await caller.send("Never mind.", context_id=asked.context_id)
            assert task.status.state == S.TASK_STATE_COMPLETED
            assert deleted == []
            # The call the cancelled task asked about has a result, so the model can go on.
            assert outputs(script.seen[-1]) == [UNFINISHED]
            assert texts(script.seen[-1], "user") == ["Delete a.txt", "Never mind."]


async def test_tasks_of_one_context_continue_one_conversation() -> None:
    script = Script(say("Hi Ada."), say("You are Ada."))
    model_agent = scope_agent(script, name="memo")
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(bridge.as_agent(model_agent)) as caller:
            first = await caller.send("I am Ada.")
            second = await caller.send("Who am I?", context_id=first.context_id)
            assert second.id != first.id
            assert texts(script.seen[1], "system") == ["Be brief."]
            assert texts(script.seen[1], "user") == ["I am Ada.", "Who am I?"]
            assert texts(script.seen[1], "assistant")[0] == "Hi Ada."
            assert answer_text(second) == "You are Ada."
            assert "a2a-actors/conversation" not in metadata_of(second)  # never shown
            stored = (await caller.private(second.id))["a2a-actors/conversation"]
            assert stored["framework"] == "agentscope"
            snapshot, *messages = stored["messages"]
            assert snapshot["a2a-actors/agentscope-state"]["reset"] is False
            assert [m["role"] for m in messages] == ["user", "assistant"]  # this task's only
            assert "Be brief." not in str(stored)  # the system prompt is the agent's
            # Another context starts afresh, and the served agent was never changed.
            script.add(say("Hello."))
            await caller.send("Who am I?")
            assert texts(script.seen[2], "user") == ["Who am I?"]
            assert model_agent.state.context == []


async def test_concurrent_tasks_run_on_states_of_their_own() -> None:
    both = asyncio.Event()
    waiting = 0

    async def meet() -> None:
        nonlocal waiting
        waiting += 1
        if waiting == 2:
            both.set()
        await both.wait()

    script = Script(say("One", meet, "."), say("Two", meet, "."))
    served = bridge.as_agent(scope_agent(script))
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller, anyio.create_task_group() as group:
            done: dict[str, Any] = {}

            async def send(text: str) -> None:
                done[text] = await caller.send(text)

            group.start_soon(send, "first")
            group.start_soon(send, "second")
        # Both replies were in flight at once, each on its own conversation.
        assert sorted(texts(seen, "user")[0] for seen in script.seen) == ["first", "second"]
        assert all(len(texts(seen, "user")) == 1 for seen in script.seen)
        assert {answer_text(t) for t in done.values()} == {"One.", "Two."}


async def test_the_conversation_survives_a_restart_with_the_sqlite_store(tmp_path: Path) -> None:
    script = Script(say("Noted: blue."), say("Blue."))
    served = bridge.as_agent(scope_agent(script, name="memo"))
    await scenarios.remembered_across_restart(tmp_path / "tasks.db", lambda: served)
    assert texts(script.seen[1], "user") == ["My colour is blue.", "My colour?"]
    assert texts(script.seen[1], "assistant")[0] == "Noted: blue."


SUMMARY = {
    "task_overview": "Remember the colour.",
    "current_state": "The user likes blue.",
    "important_discoveries": "-",
    "next_steps": "-",
    "context_to_preserve": "blue",
}


async def test_a_context_compressed_in_a_task_replaces_the_earlier_messages() -> None:
    # A 1000-token model: the second task's context passes 80% of it, and AgentScope
    # compresses it into a summary before its model call.
    script = Script(
        say("Noted."),
        call("generate_structured_output", SUMMARY, "s1"),  # the summary, on its own call
        say("Blue."),
        say("Still blue."),
        context_size=1000,
    )
    served = bridge.as_agent(scope_agent(script, name="memo"))
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            first = await caller.send("My colour is blue. " + "x" * 1600)
            options = {"context_id": first.context_id}
            second = await caller.send("Which colour? " + "y" * 1600, **options)
            assert answer_text(second) == "Blue."
            stored = (await caller.private(second.id))["a2a-actors/conversation"]["messages"]
            snapshot = stored[0]["a2a-actors/agentscope-state"]
            assert snapshot["reset"] is True
            assert "The user likes blue." in snapshot["state"]["summary"]
            third = await caller.send("And now?", **options)
            assert answer_text(third) == "Still blue."
            # The third task continues from the summary and what the compression kept, not
            # from the first task's messages.
            user = texts(script.seen[-1], "user")
            assert user[0].startswith("<system-info>Here is a summary of your previous work")
            assert "The user likes blue." in user[0]
            assert user[-1] == "And now?"
            assert not any("My colour is blue." in text for text in user)
            assert texts(script.seen[-1], "assistant")[-1] == "Blue."


class Count(MiddlewareBase):
    """Counts the model calls."""

    def __init__(self) -> None:
        self.calls = 0

    async def on_model_call(
        self, agent: ScopeAgent, input_kwargs: dict[str, Any], next_handler: Any
    ) -> Any:
        self.calls += 1
        return await next_handler(**input_kwargs)


class Say(Count):
    """Counts the model calls, and adds a word to the system prompt."""

    def __init__(self, word: str) -> None:
        super().__init__()
        self.word = word

    async def on_system_prompt(self, agent: ScopeAgent, system_prompt: str) -> str:
        return f"{system_prompt} {self.word}"


class Add(Say):
    """Only adds a word to the system prompt."""

    on_model_call = MiddlewareBase.on_model_call


async def test_each_task_runs_with_the_agents_middlewares_in_their_order() -> None:
    # The agent keeps a list per hook: [count, two] for model calls, [one, two] for the
    # system prompt; each task's agent has them all, each hook's in the given order.
    count, one, two = Count(), Add("one"), Say("two")
    script = Script(say("Hi."))
    served = bridge.as_agent(scope_agent(script, middlewares=[count, one, two]))
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            task = await caller.send("hi")
            assert task.status.state == S.TASK_STATE_COMPLETED
            assert texts(script.seen[0], "system") == ["Be brief. one two"]
            assert (count.calls, one.calls, two.calls) == (1, 0, 1)


async def test_cancel_interrupts_the_model_call_at_once() -> None:
    started, stopped = asyncio.Event(), asyncio.Event()
    script = Script(say("Thinking", hold(started, stopped), "never"))
    served = bridge.as_agent(scope_agent(script))
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            task = await scenarios.cancel_at_first_chunk(caller, started, stopped)
            # The cancelled task kept nothing: the next task of the context starts afresh.
            script.add(say("Hello."))
            await caller.send("hi", context_id=task.context_id)
            assert texts(script.seen[-1], "user") == ["hi"]


async def test_cancel_interrupts_a_running_tool() -> None:
    started, stopped = asyncio.Event(), asyncio.Event()

    async def crunch() -> str:
        """Crunch."""
        await hold(started, stopped)()
        return "never"

    script = Script(call("crunch", {}, "c1"))
    served = bridge.as_agent(scope_agent(script, allowed(crunch)))
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            await scenarios.cancel_once_started(caller, started)
            assert stopped.is_set()


async def test_a_framework_error_fails_the_task_with_its_text() -> None:
    script = Script(RuntimeError("the model is down"))
    task = await send_once(bridge.as_agent(scope_agent(script)), "hi")
    assert task.status.state == S.TASK_STATE_FAILED
    assert question_of(task)[0] == "agentscope agent failed: RuntimeError: the model is down"


async def test_token_usage_goes_into_the_task_metadata() -> None:
    async def ping() -> str:
        """Ping."""
        return "pong"

    script = Script(call("ping", {}, "c1"), say("pong"))
    task = await send_once(bridge.as_agent(scope_agent(script, allowed(ping))), "ping")
    assert metadata_of(task)["usage"] == {
        "inputTokens": 20,
        "outputTokens": 10,
        "totalTokens": 30,
        "requests": 2,
    }


async def test_file_and_data_parts_reach_the_model_and_other_kinds_are_refused() -> None:
    script = Script(say("Seen."))
    served = bridge.as_agent(scope_agent(script, name="viewer"))
    assert served.input_modes == (
        "text/plain",
        "application/json",
        "image/*",
        "audio/*",
        "application/pdf",
    )
    png, pdf = b"\x89PNG....", b"%PDF-1.7 ..."
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            task = await caller.send(
                "Look:",
                parts=[
                    Part(raw=png, media_type="image/png", filename="a.png"),
                    Part(url="https://example.com/cat.jpg"),
                    Part(raw=pdf, media_type="application/pdf", filename="doc.pdf"),
                    data_part({"order": 42}),
                ],
            )
            assert task.status.state == S.TASK_STATE_COMPLETED
            (user,) = [m for m in script.seen[0] if m.role == "user"]
            blocks = user.content
            assert [b.type for b in blocks] == ["text", "data", "data", "data", "text"]
            assert blocks[0].text == "Look:"  # type: ignore[union-attr]
            image, url, doc = (b for b in blocks if isinstance(b, DataBlock))
            assert image.source == Base64Source(
                data=base64.b64encode(png).decode(), media_type="image/png"
            )
            assert image.name == "a.png"
            assert isinstance(url.source, URLSource)
            assert (str(url.source.url), url.source.media_type) == (
                "https://example.com/cat.jpg",
                "image/jpeg",
            )
            assert doc.source.media_type == "application/pdf"
            assert blocks[4].text == '{"order":42.0}'  # type: ignore[union-attr]

            zip_file = Part(raw=b"PK....", media_type="application/zip", filename="x.zip")
            assert await scenarios.refusal_of(caller, zip_file) == (
                "ContentTypeNotSupportedError: AgentScope agents take text, data, and what "
                "their model takes (files of image/*, audio/*, application/pdf); "
                "got a file (application/zip, x.zip)"
            )
            assert len(script.seen) == 1  # the model never saw it


def test_the_card_defaults_come_from_the_agent() -> None:
    model_agent = scope_agent(Script(), name="helper")
    served = bridge.as_agent(model_agent)
    assert (served.name, served.description) == ("helper", "")
    renamed = bridge.as_agent(model_agent, name="other", description="Helps.")
    assert (renamed.name, renamed.description) == ("other", "Helps.")


# -- remote tools ----------------------------------------------------------------------------


def caller_agent(script: Script, target: str) -> Any:
    tool = bridge.remote_tool(target, name="peer")
    return bridge.as_agent(scope_agent(script, tool, name="caller"))


REMOTE = scenarios.Remote(Script, say, call, caller_agent, outputs)


async def test_a_remote_tool_is_a_delegation_in_the_hop_tree() -> None:
    await scenarios.remote_tool_is_a_delegation(REMOTE)


async def test_a_remote_question_is_the_tool_result_and_the_next_call_answers_it() -> None:
    await scenarios.remote_question_is_the_tool_result(REMOTE)


async def test_cancelling_the_task_cancels_the_remote_call() -> None:
    await scenarios.remote_tool_cancelled_with_the_task(REMOTE)


async def test_a_remote_tool_works_in_a_plain_agentscope_reply() -> None:
    async def reply(script: Script, url: str) -> str | None:
        tool = bridge.remote_tool(url, name="peer", description="The peer.")
        assert (tool.name, tool.description) == ("peer", "The peer.")
        return (await scope_agent(script, tool).reply(UserMsg("user", "go"))).get_text_content()

    await scenarios.remote_tool_in_a_plain_run(REMOTE, reply)


def test_the_default_tool_name_comes_from_the_target() -> None:
    scenarios.default_tool_names(bridge.remote_tool)
    schema = bridge.remote_tool("weather-agent").input_schema
    assert list(schema["properties"]) == ["message"]
    assert schema["properties"]["message"]["description"].startswith("The message for the agent")
