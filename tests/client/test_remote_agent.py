"""RemoteAgent against a served scenario agent: sessions, ordering, interrupt, tool adapter."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest
import trio.testing

from a2a_actors.client import A2AClient, CallResult, RemoteAgent
from a2a_actors.protocol._models import Message, Role, TaskState
from tests.client.conftest import ServedScenario
from tests.client.scenarios import MULTI_TURN_QUESTION, STREAM_CHUNKS, TIMEOUT


@asynccontextmanager
async def remote_for(
    server: ServedScenario, *, streaming: bool | None = None
) -> AsyncIterator[RemoteAgent]:
    client = await A2AClient.connect(server.base_url, card_cache=None)
    async with client, RemoteAgent(client, streaming=streaming) as remote:
        yield remote


@pytest.mark.parametrize("streaming", [True, False])
async def test_call_echo(agent_server: ServedScenario, streaming: bool) -> None:
    with anyio.fail_after(TIMEOUT):
        async with remote_for(agent_server, streaming=streaming) as remote:
            assert remote.streaming is streaming
            result = await remote.call("hello remote")
            assert result.state is TaskState.COMPLETED
            assert result.text == "hello remote"
            assert not result.needs_input


async def test_multi_turn_session(agent_server: ServedScenario) -> None:
    with anyio.fail_after(TIMEOUT):
        async with remote_for(agent_server) as remote:
            first = await remote.call("input please", session="chat")
            assert first.needs_input
            assert first.state is TaskState.INPUT_REQUIRED
            assert first.text == MULTI_TURN_QUESTION
            session = remote.session("chat")
            assert first.task is not None
            assert session.task_id == first.task.id
            assert session.context_id == first.task.context_id

            second = await remote.call("Ada", session="chat")
            assert second.task is not None
            assert second.task.id == first.task.id  # the answer continued the same task
            assert second.state is TaskState.COMPLETED
            assert second.text == "Ada"
            assert session.task_id == ""

            third = await remote.call("hello again", session="chat")
            assert third.task is not None
            assert third.task.id != first.task.id  # a terminal task: a new one ...
            assert third.task.context_id == first.task.context_id  # ... in the same context

            other = await remote.call("hello elsewhere", session="other")
            assert other.task is not None
            assert other.task.context_id != first.task.context_id


async def test_calls_in_one_session_run_in_order(agent_server: ServedScenario) -> None:
    with anyio.fail_after(TIMEOUT):
        async with remote_for(agent_server) as remote:
            session = remote.session("ordered")
            finished: list[str] = []
            results: dict[str, CallResult] = {}

            async def call(name: str, text: str) -> None:
                results[name] = await remote.call(text, session=session)
                finished.append(name)

            async with anyio.create_task_group() as tg:
                tg.start_soon(call, "sleeper", "sleep until interrupted")
                task_id = await session.wait_task()
                tg.start_soon(call, "echo", "hello after")
                # The second call queues behind the first: it sends nothing until then.
                await trio.testing.wait_all_tasks_blocked()
                assert session.lock.statistics().tasks_waiting == 1
                assert session.task_id == task_id
                assert finished == []
                canceled = await remote.interrupt(session)
                assert canceled is not None
                assert canceled.status.state is TaskState.CANCELED

            assert finished == ["sleeper", "echo"]
            assert results["sleeper"].state is TaskState.CANCELED
            echo = results["echo"].task
            assert echo is not None
            assert echo.id != task_id
            assert results["echo"].text == "hello after"


async def test_interrupt_cancels_remote_task(agent_server: ServedScenario) -> None:
    with anyio.fail_after(TIMEOUT):
        async with remote_for(agent_server) as remote:
            session = remote.session("long")
            results: list[CallResult] = []

            async def long_call() -> None:
                results.append(await remote.call("sleep", session=session))

            async with anyio.create_task_group() as tg:
                tg.start_soon(long_call)
                task_id = await session.wait_task()
                await remote.interrupt("long")

            assert results[0].state is TaskState.CANCELED
            # Verified on the server side: the task ended CANCELED there.
            on_server = await remote.client.get_task(task_id)
            assert on_server.status.state is TaskState.CANCELED
            assert await remote.interrupt("long") is None  # nothing left to interrupt


async def test_interrupt_an_input_required_task(agent_server: ServedScenario) -> None:
    with anyio.fail_after(TIMEOUT):
        async with remote_for(agent_server) as remote:
            asked = await remote.call("input please", session="q")
            assert asked.needs_input
            canceled = await remote.interrupt("q")
            assert canceled is not None
            assert canceled.status.state is TaskState.CANCELED
            assert remote.session("q").task_id == ""


async def test_stream_yields_text_deltas(agent_server: ServedScenario) -> None:
    with anyio.fail_after(TIMEOUT):
        async with remote_for(agent_server) as remote:
            deltas: list[str] = []
            async with remote.stream("stream please") as chunks:
                async for chunk in chunks:
                    if chunk.text:
                        deltas.append(chunk.text)
            assert deltas == list(STREAM_CHUNKS)
            assert chunks.result.state is TaskState.COMPLETED
            assert chunks.result.text == "".join(STREAM_CHUNKS)


async def test_message_reply(agent_server: ServedScenario) -> None:
    with anyio.fail_after(TIMEOUT):
        async with remote_for(agent_server) as remote:
            result = await remote.call("message hi", session="m")
            assert result.task is None
            assert result.state is None
            assert isinstance(result.message, Message)
            assert result.message.role is Role.AGENT
            assert result.text == "message hi"
            assert remote.session("m").context_id == result.message.context_id


async def test_as_tool(agent_server: ServedScenario) -> None:
    with anyio.fail_after(TIMEOUT):
        async with remote_for(agent_server) as remote:
            tool = remote.as_tool()
            assert inspect.iscoroutinefunction(tool)
            name = agent_server.name
            assert tool.name == name
            assert tool.description == remote.description
            assert tool.json_schema == {
                "name": name,
                "description": remote.description,
                "parameters": {
                    "type": "object",
                    "properties": {
                        "message": {
                            "type": "string",
                            "description": f"The message to send to {name}.",
                        }
                    },
                    "required": ["message"],
                },
            }
            assert await tool("hello tool") == "hello tool"
            # The tool keeps one session: the agent's question is answered by the next call.
            assert await tool("input please") == MULTI_TURN_QUESTION
            assert await tool("Grace") == "Grace"

            named = remote.as_tool(name="ask the agent!", description="Ask it.", session=None)
            assert named.name == "ask_the_agent"
            assert named.json_schema["description"] == "Ask it."
            assert await named("input please") == MULTI_TURN_QUESTION
            assert await named("hello again") == "hello again"  # no session: a new task
