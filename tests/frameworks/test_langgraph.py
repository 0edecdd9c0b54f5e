"""LangGraph graphs served by a2a-actors, called with the official SDK's client.

Every graph is a hand-built ``StateGraph(MessagesState)`` (the ReAct loop: the model, a
``ToolNode``, ``tools_condition``) or a small graph of plain nodes; the model is LangChain's
own fake chat model, scripted step by step (:mod:`tests.frameworks.langgraph_models`); no
network, no API key.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from a2a.types.a2a_pb2 import CancelTaskRequest, Part, TaskState
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import interrupt

from a2a_actors.frameworks import langgraph as bridge
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
from tests.frameworks.langgraph_models import ScriptedChatModel, call, react, say, scripted

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings(SDK_WARNINGS)]

TIMEOUT = 20.0
S = TaskState
UNFINISHED = "The tool call did not finish: the run was cancelled or failed."
NOT_RUN = "The tool call did not finish: it was waiting for input when the server restarted."


def tool(fn: Callable[..., Awaitable[Any]]) -> BaseTool:
    """An async function as a LangChain tool of its name."""
    return StructuredTool.from_function(coroutine=fn, name=fn.__name__, description="A tool.")


def texts(messages: list[BaseMessage]) -> list[tuple[str, str]]:
    """Each message's type and text, as a model call received them."""
    return [(m.type, str(m.text)) for m in messages]


def tool_results(messages: list[BaseMessage]) -> list[str]:
    """The texts of the tool results a model call received, oldest first; the call follows
    the tools (its last message is one of them)."""
    received = texts(messages)
    assert received[-1][0] == "tool", received
    return [text for kind, text in received if kind == "tool"]


def approval_tool(answers: list[Any]) -> BaseTool:
    async def delete_file(path: str) -> str:
        answers.append(interrupt({"question": f"Delete {path}?", "path": path}))
        return f"deleted {path}"

    return tool(delete_file)


async def test_text_deltas_stream_as_chunks_of_one_answer_as_they_are_produced() -> None:
    gate = asyncio.Event()

    async def pause(_call: int, chunk: int) -> None:
        if chunk == 2:  # "Hello" and " " are out: the client must see them first
            await gate.wait()

    served = bridge.as_agent(react(scripted(say("Hello world"), pause=pause)), name="greeter")
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            await scenarios.streams_in_chunks(caller, gate, "Hello", "Hello world")

        blocking = bridge.as_agent(react(scripted(say("Hello world"))), name="greeter")
        async with sdk_agent(blocking) as caller:
            await scenarios.answers_at_once(caller, "Hello world")


async def test_tool_calls_and_results_are_working_updates_never_in_the_answer() -> None:
    async def weather(city: str) -> str:
        return f"sunny in {city}"

    model = scripted(
        call("weather", {"city": "Paris"}, "c1", text="Let me check."), say("It is sunny.")
    )
    served = bridge.as_agent(react(model, [tool(weather)]), name="forecaster")
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            # The texts of the two AI messages, parted by a blank line; no tool output.
            expected = "Let me check.\n\nIt is sunny."
            await scenarios.tool_updates_then_answer(caller, "sunny in Paris", expected)
            assert texts(model.seen[1])[-1] == ("tool", "sunny in Paris")


async def test_a_tool_error_the_graph_handles_is_a_result_marked_as_an_error() -> None:
    async def explode() -> str:
        raise ValueError("boom")

    model = scripted(call("explode", {}, "c1"), say("It broke."))
    graph = react(model, [tool(explode)], handle_tool_errors=True)
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(bridge.as_agent(graph, name="exploder")) as caller:
            events = await caller.stream("Go")
            result = tool_parts(events)[1]
            assert result["error"] is True
            assert "ValueError('boom')" in result["result"]
            assert states(events)[-1] == S.TASK_STATE_COMPLETED


@pytest.mark.parametrize("by_data", [False, True], ids=["text reply", "data reply"])
async def test_an_interrupt_asks_and_the_reply_resumes_where_it_paused(by_data: bool) -> None:
    answers: list[Any] = []
    model = scripted(call("delete_file", {"path": "a.txt"}, "c1"), say("Done."))
    served = bridge.as_agent(react(model, [approval_tool(answers)]), name="janitor")
    reply: str | dict[str, Any] = {"approved": True} if by_data else "yes"
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            events = await caller.stream("Delete a.txt")
            assert states(events)[-1] == S.TASK_STATE_INPUT_REQUIRED
            assert [p["type"] for p in tool_parts(events)] == ["tool_call"]
            task = await caller.get(events[0].task.id)
            assert question_of(task) == (
                "Delete a.txt?",
                [{"question": "Delete a.txt?", "path": "a.txt"}],
            )
            assert answers == []
            resumed = await caller.stream(**follow_up(task, reply))
            assert states(resumed)[-1] == S.TASK_STATE_COMPLETED
            assert answers == [{"approved": True} if by_data else "yes"]
            assert len(model.seen) == 2  # no model call in between: the tool went on
            assert texts(model.seen[1])[-1] == ("tool", "deleted a.txt")
            assert tool_parts(resumed)[0]["result"] == "deleted a.txt"
            assert "".join(c.text for c in answer_chunks(resumed)) == "Done."


async def test_a_node_asking_with_a_text_gets_the_reply_as_the_interrupt_value() -> None:
    async def greet(state: MessagesState) -> dict[str, list[BaseMessage]]:
        name = interrupt("What is your name?")
        return {"messages": [AIMessage(f"Hello, {name}!")]}

    graph = StateGraph(MessagesState)
    graph.add_node("greet", greet)
    graph.add_edge(START, "greet")
    served = bridge.as_agent(graph.compile(), name="greeter")
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            asked = await caller.send("hi")
            assert asked.status.state == S.TASK_STATE_INPUT_REQUIRED
            assert question_of(asked) == ("What is your name?", [])
            done = await caller.send(**follow_up(asked, "Ada"))
            assert done.status.state == S.TASK_STATE_COMPLETED
            assert answer_text(done) == "Hello, Ada!"


async def test_several_interrupts_at_once_are_asked_in_turn_and_resumed_together() -> None:
    async def first(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(f"First? {interrupt({'question': 'First?'})}")]}

    async def second(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(f"Second? {interrupt({'question': 'Second?'})}")]}

    graph = StateGraph(MessagesState)
    graph.add_node("first", first)
    graph.add_node("second", second)
    graph.add_edge(START, "first")
    graph.add_edge(START, "second")
    served = bridge.as_agent(graph.compile(), name="quiz")
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            task = await caller.send("go")
            asked = []
            while task.status.state == S.TASK_STATE_INPUT_REQUIRED:
                question = question_of(task)[0]
                asked.append(question)
                task = await caller.send(**follow_up(task, question.lower().rstrip("?")))
            assert sorted(asked) == ["First?", "Second?"]
            assert task.status.state == S.TASK_STATE_COMPLETED
            assert sorted(answer_text(task).split("\n\n")) == ["First? first", "Second? second"]


async def test_tasks_of_one_context_continue_one_conversation() -> None:
    model = scripted(say("Hi Ada."), say("You are Ada."))
    graph = react(model)
    served = bridge.as_agent(graph, name="memo")
    assert graph.checkpointer is None  # the user's graph is left as it is
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            first = await caller.send("I am Ada.")
            second = await caller.send("Who am I?", context_id=first.context_id)
            assert second.id != first.id
            assert texts(model.seen[1]) == [
                ("human", "I am Ada."),
                ("ai", "Hi Ada."),
                ("human", "Who am I?"),
            ]
            assert answer_text(second) == "You are Ada."
            assert "a2a-actors/conversation" not in metadata_of(second)  # never shown
            stored = (await caller.private(second.id))["a2a-actors/conversation"]
            assert stored["framework"] == "langgraph"
            assert [m["type"] for m in stored["messages"]] == ["human", "ai"]
            # Another context starts afresh.
            model.messages = iter([say("Hello.")])
            await caller.send("Who am I?")
            assert texts(model.seen[2]) == [("human", "Who am I?")]


async def test_the_conversation_survives_a_restart_with_the_sqlite_store(tmp_path: Path) -> None:
    model = scripted(say("Noted: blue."), say("Blue."))
    graph = react(model)
    # Each server process its agent (and in-memory checkpointer) over the same graph.
    await scenarios.remembered_across_restart(
        tmp_path / "tasks.db", lambda: bridge.as_agent(graph, name="memo")
    )
    assert texts(model.seen[1]) == [
        ("human", "My colour is blue."),
        ("ai", "Noted: blue."),
        ("human", "My colour?"),
    ]


@pytest.mark.parametrize("durable", [False, True], ids=["in-memory", "durable checkpointer"])
async def test_a_question_waiting_across_a_restart_is_answered_after_it(
    tmp_path: Path, durable: bool
) -> None:
    answers: list[Any] = []
    model = scripted(call("delete_file", {"path": "b.txt"}, "c2"), say("Gone."))
    # One saver for both servers stands for a durable one (a database the graph keeps).
    graph = react(
        model, [approval_tool(answers)], checkpointer=InMemorySaver() if durable else None
    )
    path = tmp_path / "tasks.db"
    with anyio.fail_after(TIMEOUT):
        served = bridge.as_agent(graph, name="janitor")
        async with on_sqlite(served, path, keep_interrupted=True) as caller:
            first = await caller.send("Delete b.txt")
            assert first.status.state == S.TASK_STATE_INPUT_REQUIRED
        served = bridge.as_agent(graph, name="janitor")
        async with on_sqlite(served, path, keep_interrupted=True) as caller:
            done = await caller.send(**follow_up(first, "yes"))
            private = await caller.private(done.id)
        assert done.status.state == S.TASK_STATE_COMPLETED
        assert answer_text(done) == "Gone."
        if durable:  # the pause was kept: the tool went on with the reply
            assert answers == ["yes"]
            assert texts(model.seen[1])[-1] == ("tool", "deleted b.txt")
        else:  # the pause was lost: the reply is the next human message
            assert answers == []
            assert texts(model.seen[1]) == [
                ("human", "Delete b.txt"),
                ("ai", ""),
                ("tool", NOT_RUN),
                ("human", "yes"),
            ]
        stored = private["a2a-actors/conversation"]["messages"]
        assert stored[0]["type"] == "human"
        assert stored[-1]["data"]["content"] == "Gone."


async def test_cancel_interrupts_the_model_call_at_once() -> None:
    started, stopped = asyncio.Event(), asyncio.Event()

    async def pause(call: int, chunk: int) -> None:
        if call == 0 and chunk == 1:
            await hold(started, stopped)()

    model = scripted(say("Thinking hard"), say("Fresh start."), pause=pause)
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(bridge.as_agent(react(model), name="slow")) as caller:
            task = await scenarios.cancel_at_first_chunk(caller, started, stopped)
            # The context goes on; the cancelled task stored nothing of it.
            after = await caller.send("again", context_id=task.context_id)
            assert after.status.state == S.TASK_STATE_COMPLETED
            assert texts(model.seen[1]) == [("human", "again")]


async def test_cancel_interrupts_a_running_tool_and_its_call_is_answered() -> None:
    started, stopped = asyncio.Event(), asyncio.Event()

    async def crunch() -> str:
        await hold(started, stopped)()
        return "never"

    model = scripted(call("crunch", {}, "c1"), say("Back."))
    graph = react(model, [tool(crunch)], checkpointer=InMemorySaver())
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(bridge.as_agent(graph, name="cruncher")) as caller:
            task = await scenarios.cancel_once_started(caller, started)
            assert stopped.is_set()
            # The graph's own checkpointer keeps the cut-short run, its call answered.
            after = await caller.send("again", context_id=task.context_id)
            assert after.status.state == S.TASK_STATE_COMPLETED
            assert answer_text(after) == "Back."
            seen = model.seen[1]
            assert texts(seen) == [
                ("human", "go"),
                ("ai", ""),
                ("tool", UNFINISHED),
                ("human", "again"),
            ]
            assert isinstance(seen[2], ToolMessage)
            assert (seen[2].tool_call_id, seen[2].status) == ("c1", "error")
            state = await graph.aget_state({"configurable": {"thread_id": task.context_id}})
            assert state.next == ()


async def test_a_task_cancelled_while_asking_leaves_the_thread_ready_for_the_next() -> None:
    answers: list[Any] = []
    model = scripted(call("delete_file", {"path": "c.txt"}, "c3"), say("Fine, I won't."))
    graph = react(model, [approval_tool(answers)], checkpointer=InMemorySaver())
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(bridge.as_agent(graph, name="janitor")) as caller:
            asked = await caller.send("Delete c.txt")
            assert asked.status.state == S.TASK_STATE_INPUT_REQUIRED
            task = await caller.client.cancel_task(CancelTaskRequest(id=asked.id))
            assert task.status.state == S.TASK_STATE_CANCELED
            # The next task's run tidies the thread: the pending tool call is answered.
            after = await caller.send("Never mind.", context_id=asked.context_id)
            assert after.status.state == S.TASK_STATE_COMPLETED
            assert answers == []
            assert texts(model.seen[1]) == [
                ("human", "Delete c.txt"),
                ("ai", ""),
                ("tool", UNFINISHED),
                ("human", "Never mind."),
            ]
            state = await graph.aget_state({"configurable": {"thread_id": asked.context_id}})
            assert (state.next, state.interrupts) == ((), ())


async def test_a_framework_error_fails_the_task_with_its_text() -> None:
    async def down(_call: int, _chunk: int) -> None:
        raise RuntimeError("the model is down")

    served = bridge.as_agent(react(scripted(say("never"), pause=down)), name="broken")
    task = await send_once(served, "hi")
    assert task.status.state == S.TASK_STATE_FAILED
    assert question_of(task)[0] == "langgraph agent failed: RuntimeError: the model is down"


async def test_a_run_past_the_recursion_limit_fails() -> None:
    async def again() -> str:
        return "again"

    model = scripted(*(call("again", {}, f"c{i}") for i in range(10)))
    served = bridge.as_agent(react(model, [tool(again)]), name="looper", recursion_limit=4)
    task = await send_once(served, "loop")
    assert task.status.state == S.TASK_STATE_FAILED
    assert question_of(task)[0].startswith(
        "langgraph agent failed: GraphRecursionError: Recursion limit of 4 reached"
    )
    assert len(model.seen) == 2  # agent, tools, agent, tools: four supersteps


async def test_token_usage_goes_into_the_task_metadata() -> None:
    async def ping() -> str:
        return "pong"

    model = scripted(call("ping", {}, "c1", tokens=5), say("pong", tokens=(10, 2)))
    task = await send_once(bridge.as_agent(react(model, [tool(ping)]), name="pinger"), "ping")
    assert metadata_of(task)["usage"] == {
        "inputTokens": 15,
        "outputTokens": 3,
        "totalTokens": 18,
        "requests": 2,
    }


async def test_file_and_data_parts_reach_the_model_and_other_kinds_are_refused() -> None:
    model = scripted(say("Seen."))
    served = bridge.as_agent(react(model), name="viewer")
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(served) as caller:
            task = await caller.send(
                "Look:",
                parts=[
                    Part(raw=b"\x89PNG....", media_type="image/png", filename="a.png"),
                    Part(url="https://example.com/cat.jpg"),
                    Part(url="https://example.com/report.pdf"),
                    data_part({"order": 42}),
                ],
            )
            assert task.status.state == S.TASK_STATE_COMPLETED
            prompt = model.seen[0][-1]
            assert isinstance(prompt, HumanMessage)
            assert prompt.content == [
                {"type": "text", "text": "Look:"},
                {
                    "type": "image",
                    "mime_type": "image/png",
                    "base64": "iVBORy4uLi4=",
                    "extras": {"filename": "a.png"},
                },
                {"type": "image", "mime_type": "image/jpeg", "url": "https://example.com/cat.jpg"},
                {
                    "type": "file",
                    "mime_type": "application/pdf",
                    "url": "https://example.com/report.pdf",
                },
                {"type": "text", "text": '{"order":42.0}'},
            ]
            assert [b["type"] for b in prompt.content_blocks] == [
                "text",
                "image",
                "image",
                "file",
                "text",
            ]

            zip_file = Part(raw=b"PK..", media_type="application/zip", filename="x.zip")
            assert await scenarios.refusal_of(caller, zip_file) == (
                "ContentTypeNotSupportedError: LangGraph agents take text, data, and image, audio, "
                "video, PDF or text files; got a file (application/zip, x.zip)"
            )
            assert len(model.seen) == 1  # the model never saw it


# -- remote tools ----------------------------------------------------------------------------


def caller_agent(model: ScriptedChatModel, target: str) -> Any:
    return bridge.as_agent(react(model, [bridge.remote_tool(target, name="peer")]), name="caller")


REMOTE = scenarios.Remote(scripted, say, call, caller_agent, tool_results)


async def test_a_remote_tool_is_a_delegation_in_the_hop_tree() -> None:
    await scenarios.remote_tool_is_a_delegation(REMOTE)


async def test_a_remote_question_is_the_tool_result_and_the_next_call_answers_it() -> None:
    await scenarios.remote_question_is_the_tool_result(REMOTE)


async def test_cancelling_the_task_cancels_the_remote_call() -> None:
    await scenarios.remote_tool_cancelled_with_the_task(REMOTE)


async def test_a_remote_tool_works_in_a_plain_langgraph_run() -> None:
    async def run(model: ScriptedChatModel, url: str) -> str:
        graph = react(model, [bridge.remote_tool(url, name="peer")])
        result = await graph.ainvoke({"messages": [HumanMessage("go")]})
        return str(result["messages"][-1].text)

    await scenarios.remote_tool_in_a_plain_run(REMOTE, run)


def test_the_remote_tool_is_a_langchain_tool_named_after_its_target() -> None:
    peer = bridge.remote_tool("http://127.0.0.1:8001", description="Asks the peer.")
    assert isinstance(peer, BaseTool)
    assert (peer.name, peer.description) == ("127_0_0_1_8001", "Asks the peer.")
    assert list(peer.args) == ["message"]
    scenarios.default_tool_names(bridge.remote_tool)
