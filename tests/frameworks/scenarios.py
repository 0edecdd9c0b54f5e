"""The test bodies the model-framework bridges share (AgentScope, LangGraph, OpenAI Agents,
PydanticAI).

Each bridge's test file keeps its tests (so pytest names each bridge's own) and calls these
with what differs per framework: the served agent, its scripted model, how to read what the
model received. The first functions are parts of a test (they check what every bridge must
do, and hand back what the test goes on with); the remote-tool scenarios are whole tests,
given a :class:`Remote`: the framework's scripted model and the agent that calls a remote
agent (:data:`echo`, :data:`asker`, :func:`sleeper`) as a tool.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import anyio
from a2a.types.a2a_pb2 import CancelTaskRequest, Part, StreamResponse, Task, TaskState
from google.protobuf.json_format import MessageToDict

from a2a_actors.protocol._errors import ContentTypeNotSupportedError
from a2a_actors.runtime import Agent, TaskContext, agent
from orchestrator import fetch_tree
from tests.frameworks.harness import (
    Caller,
    Settable,
    answer_chunks,
    answer_text,
    hold,
    on_sqlite,
    question_of,
    sdk_agent,
    states,
    tool_parts,
)

__all__ = [
    "Remote",
    "answers_at_once",
    "asker",
    "cancel_at_first_chunk",
    "cancel_once_started",
    "default_tool_names",
    "refusal_of",
    "echo",
    "remembered_across_restart",
    "remote_question_is_the_tool_result",
    "remote_tool_cancelled_with_the_task",
    "remote_tool_in_a_plain_run",
    "remote_tool_is_a_delegation",
    "sleeper",
    "streams_in_chunks",
    "tool_updates_then_answer",
]

TIMEOUT = 20.0
S = TaskState
#: What the cancel tests wait on (their frameworks' awaits and the remote agents set them).
Event = asyncio.Event | anyio.Event


async def streams_in_chunks(caller: Caller, gate: asyncio.Event, first: str, whole: str) -> None:
    """Streams "hi" to an agent whose model answers ``whole`` and waits for ``gate`` once it
    has streamed ``first``: the client sees ``first`` alone before the model goes on (then
    sets ``gate``); the chunks are one answer artifact (the first not appended, every other
    appended, only the last marked last) and the task completes."""
    events: list[StreamResponse] = []
    async for event in caller.client.send_message(caller.request("hi")):
        events.append(event)
        if answer_chunks(events) and not gate.is_set():
            assert [c.text for c in answer_chunks(events)] == [first]
            gate.set()
    chunks = answer_chunks(events)
    assert chunks[0].text == first
    assert not chunks[0].append
    assert all(c.append for c in chunks[1:])
    assert chunks[-1].last_chunk
    assert not any(c.last_chunk for c in chunks[:-1])
    assert "".join(c.text for c in chunks) == whole
    assert states(events)[-1] == S.TASK_STATE_COMPLETED


async def answers_at_once(caller: Caller, whole: str) -> None:
    """A blocking "hi" to an agent whose model answers ``whole``: the task completes with
    one artifact, the answer, of that text."""
    task = await caller.send("hi")
    assert task.status.state == S.TASK_STATE_COMPLETED
    assert answer_text(task) == whole
    assert [a.name for a in task.artifacts] == ["answer"]


async def tool_updates_then_answer(
    caller: Caller, result: Any, answer: str
) -> list[StreamResponse]:
    """Streams "Weather in Paris?" to an agent whose model calls ``weather(city="Paris")``
    (call ``c1``), its tool returning ``result``, then answers: the call and its result are
    WORKING updates, and the answer, streamed and stored, is ``answer`` (none of them in it);
    the task completes. The events."""
    events = await caller.stream("Weather in Paris?")
    assert tool_parts(events) == [
        {"type": "tool_call", "id": "c1", "name": "weather", "arguments": {"city": "Paris"}},
        {"type": "tool_result", "id": "c1", "name": "weather", "result": result},
    ]
    assert "".join(c.text for c in answer_chunks(events)) == answer
    task = await caller.get(events[0].task.id)
    assert answer_text(task) == answer
    assert task.status.state == S.TASK_STATE_COMPLETED
    return events


async def cancel_at_first_chunk(caller: Caller, started: Event, stopped: Event) -> Task:
    """Streams "go" to an agent whose model holds (:func:`~tests.frameworks.harness.hold`)
    after its first chunk, and cancels the task once the chunk is out and the model holds
    (``started``): the task is CANCELED, the model call already interrupted (``stopped``).
    The cancelled task."""
    events: list[StreamResponse] = []
    async for event in caller.client.send_message(caller.request("go")):
        events.append(event)
        if answer_chunks(events):
            break
    await started.wait()
    task: Task = await caller.client.cancel_task(CancelTaskRequest(id=events[0].task.id))
    assert task.status.state == S.TASK_STATE_CANCELED
    assert stopped.is_set()
    return task


async def cancel_once_started(caller: Caller, started: Event) -> Task:
    """Sends "go" without waiting for the answer, and cancels its task once ``started``
    (the agent is at work): the task is CANCELED. The cancelled task."""
    first = await caller.client.send_message(caller.request("go", blocking=False)).__anext__()
    await started.wait()
    task: Task = await caller.client.cancel_task(CancelTaskRequest(id=first.task.id))
    assert task.status.state == S.TASK_STATE_CANCELED
    return task


async def refusal_of(caller: Caller, part: Part) -> str:
    """Sends ``part`` alone, a file of a kind the agent does not take: the task is REJECTED
    with a ContentTypeNotSupportedError (its code in the status message's metadata); the
    text of that status message, which says why (the test checks too that the model never
    saw the message)."""
    refused = await caller.send(parts=[part])
    assert refused.status.state == S.TASK_STATE_REJECTED
    error = MessageToDict(refused.status.message.metadata)["error"]
    assert error["code"] == ContentTypeNotSupportedError.spec.code
    return question_of(refused)[0]


async def remembered_across_restart(path: Path, serve: Callable[[], object]) -> None:
    """Two tasks of one context, each on a server of its own over the SQLite store at
    ``path`` (``serve()`` the agent each serves, its model answering "Noted: blue." then
    "Blue."): "My colour is blue.", then "My colour?", answered "Blue."; the test checks that
    the model's second call had the first task's messages."""
    with anyio.fail_after(TIMEOUT):
        async with on_sqlite(serve(), path) as caller:
            first = await caller.send("My colour is blue.")
        async with on_sqlite(serve(), path) as caller:
            second = await caller.send("My colour?", context_id=first.context_id)
        assert answer_text(second) == "Blue."


# -- remote tools ----------------------------------------------------------------------------

QUESTION = (
    "The agent asker asks: Which city?\n"
    "(Call this tool again with the answer to continue; its task waits.)"
)


@agent(name="echo")
async def echo(ctx: TaskContext) -> str:
    return f"echo: {ctx.text}"


@agent(name="asker")
async def asker(ctx: TaskContext) -> str:
    reply = await ctx.ask("Which city?")
    return f"city: {reply.text}"


def sleeper(started: Settable, stopped: Settable) -> Agent:
    """An agent that starts its task (``started``) and works on it until cancelled
    (``stopped``)."""

    @agent(name="sleeper")
    async def sleeper(ctx: TaskContext) -> None:
        await ctx.start()
        await hold(started, stopped)()

    return sleeper


class Scripted(Protocol):
    """A scripted model of a framework's tests: what each model call received."""

    @property
    def seen(self) -> Sequence[Any]: ...


M = TypeVar("M", bound=Scripted)


@dataclass(frozen=True, slots=True)
class Remote(Generic[M]):
    """One framework's side of the remote-tool scenarios.

    Attributes:
        script: A scripted model of the framework's tests playing the steps given, one a
            model call.
        say: The step that answers a text.
        call: The step that calls a tool: ``call(tool, arguments, call_id)``.
        caller: The agent served as ``caller`` on a scripted model, given the remote tool
            ``peer`` to the URL: ``caller(script, url)``.
        results: The tool results one model call received (an entry of ``seen``), oldest
            first.
    """

    script: Callable[..., M]
    say: Callable[[str], Any]
    call: Callable[[str, dict[str, Any], str], Any]
    caller: Callable[[M, str], object]
    results: Callable[[Any], list[Any]]


async def remote_tool_is_a_delegation(remote: Remote[Any]) -> None:
    """The model calls the remote :data:`echo`, then answers: the echo is the tool's result
    (in the WORKING update and in the model's next call), and the remote task is the
    caller's child in the hop tree."""
    script = remote.script(
        remote.call("peer", {"message": "hello"}, "c1"), remote.say("The peer said hi.")
    )
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(echo) as peer, sdk_agent(remote.caller(script, peer.url)) as caller:
            events = await caller.stream("Ask the peer")
            assert tool_parts(events)[1]["result"] == "echo: hello"
            assert remote.results(script.seen[1]) == ["echo: hello"]
            assert answer_text(await caller.get(events[0].task.id)) == "The peer said hi."
            tree = await fetch_tree(caller.url, events[0].task.id)
            assert tree.agent == "caller"
            assert [(c.agent, c.state) for c in tree.children] == [("echo", "TASK_STATE_COMPLETED")]


async def remote_question_is_the_tool_result(remote: Remote[Any]) -> None:
    """The remote :data:`asker` asks: its question is the tool's result, and the model's next
    call of the tool answers it (one remote task, in the hop tree)."""
    script = remote.script(
        remote.call("peer", {"message": "weather"}, "c1"),
        remote.call("peer", {"message": "Paris"}, "c2"),
        remote.say("Done."),
    )
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(asker) as peer, sdk_agent(remote.caller(script, peer.url)) as caller:
            task = await caller.send("Go")
            assert task.status.state == S.TASK_STATE_COMPLETED
            assert answer_text(task) == "Done."
            assert remote.results(script.seen[1]) == [QUESTION]
            assert remote.results(script.seen[2])[-1] == "city: Paris"
            tree = await fetch_tree(caller.url, task.id)
            assert [c.agent for c in tree.children] == ["asker"]


async def remote_tool_cancelled_with_the_task(remote: Remote[Any]) -> None:
    """Cancelling the caller's task while the remote :func:`sleeper` works cancels the remote
    task (in the hop tree, CANCELED)."""
    started, stopped = anyio.Event(), anyio.Event()
    script = remote.script(remote.call("peer", {"message": "sleep"}, "c1"))
    with anyio.fail_after(TIMEOUT):
        async with (
            sdk_agent(sleeper(started, stopped)) as peer,
            sdk_agent(remote.caller(script, peer.url)) as caller,
        ):
            canceled = await cancel_once_started(caller, started)
            await stopped.wait()
            tree = await fetch_tree(caller.url, canceled.id)
            assert [(c.agent, c.state) for c in tree.children] == [
                ("sleeper", "TASK_STATE_CANCELED")
            ]


async def remote_tool_in_a_plain_run(
    remote: Remote[M], run: Callable[[M, str], Awaitable[str | None]]
) -> None:
    """The remote tool without the bridge: ``run(script, url)`` runs the framework's own
    agent on ``script``'s model, given the remote tool ``peer`` to ``url`` (:data:`echo`), on
    "go", and returns its answer: "ok", the echo the tool's result."""
    script = remote.script(remote.call("peer", {"message": "plain"}, "c1"), remote.say("ok"))
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(echo) as peer:
            assert await run(script, peer.url) == "ok"
            assert remote.results(script.seen[1]) == ["echo: plain"]


def default_tool_names(remote_tool: Callable[..., Any]) -> None:
    """A remote tool's default name is its target's, made a valid tool name."""
    assert remote_tool("http://127.0.0.1:8001").name == "127_0_0_1_8001"
    assert remote_tool("weather-agent").name == "weather-agent"
    assert remote_tool("x", name="my tool!").name == "my_tool"
