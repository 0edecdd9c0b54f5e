"""A Google ADK agent through ADK's own ``A2aAgentExecutor``, served by a2a-actors.

The agent is an ``LlmAgent`` on a scripted model (a ``BaseLlm`` subclass: no network, no
API key) in an ``InMemoryRunner``; ``a2a_actors.frameworks.a2a_sdk.as_agent`` serves ADK's
executor unchanged, and the official SDK client sends, streams and cancels.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

import anyio
import pytest

pytest.importorskip("google.adk", reason="google-adk is not installed")

from a2a.types.a2a_pb2 import CancelTaskRequest, TaskState
from google.adk.a2a.executor.a2a_agent_executor import A2aAgentExecutor
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types

from a2a_actors.frameworks.a2a_sdk import as_agent
from a2a_actors.runtime import Agent
from tests.frameworks.harness import SDK_WARNINGS, sdk_agent, states

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings(SDK_WARNINGS),
    # ADK marks its whole A2A integration experimental, on every call.
    pytest.mark.filterwarnings(r"ignore:\[EXPERIMENTAL\]:UserWarning"),
]

TIMEOUT = 20.0
S = TaskState


def said(text: str, *, partial: bool = False) -> LlmResponse:
    return LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text=text)]), partial=partial
    )


class ScriptedModel(BaseLlm):
    """Answers with what it was told, after what ``script`` says (run per model call)."""

    model: str = "scripted"
    seen: list[list[str]] = []
    # The test's hooks: set, awaited and checked by it (no sleeps).
    gate: Any = None
    started: Any = None
    stopped: Any = None
    hold: bool = False

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        texts = [p.text or "" for c in llm_request.contents for p in c.parts or ()]
        self.seen.append(texts)
        if self.started is not None:
            self.started.set()
        try:
            if self.hold:
                await asyncio.Event().wait()  # only a cancel ends this call
            if self.gate is not None:
                yield said("Thinking", partial=True)
                await self.gate.wait()
            yield said(f"You said: {texts[-1]}")
        finally:
            if self.stopped is not None:
                self.stopped.set()


def adk_agent(model: ScriptedModel) -> Agent:
    agent = LlmAgent(name="helper", model=model, instruction="Answer briefly.")
    runner = InMemoryRunner(agent=agent, app_name="helper")
    return as_agent(A2aAgentExecutor(runner=runner), name="helper")


def artifact_text(task: Any) -> str:
    return "".join(p.text for a in task.artifacts for p in a.parts if p.HasField("text"))


async def test_send_and_a_second_task_of_the_context_continues_the_session() -> None:
    model = ScriptedModel(seen=[])
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(adk_agent(model)) as caller:
            first = await caller.send("hi")
            second = await caller.send("again", context_id=first.context_id)
    assert first.status.state == second.status.state == S.TASK_STATE_COMPLETED
    assert artifact_text(first) == "You said: hi"
    assert artifact_text(second) == "You said: again"
    # ADK's own session (the contextId) kept the conversation
    assert model.seen == [["hi"], ["hi", "You said: hi", "again"]]


async def test_stream_shows_the_run_as_it_goes() -> None:
    model = ScriptedModel(seen=[], gate=asyncio.Event())
    seen: list[Any] = []
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(adk_agent(model)) as caller:
            async for event in caller.client.send_message(caller.request("hello")):
                seen.append(event)
                message = event.status_update.status.message
                if any(p.text == "Thinking" for p in message.parts):
                    model.gate.set()  # the partial answer arrived while the model waits
    assert model.gate.is_set()
    assert states(seen)[0] == S.TASK_STATE_SUBMITTED
    assert states(seen)[-1] == S.TASK_STATE_COMPLETED
    final = [e.artifact_update for e in seen if e.HasField("artifact_update")]
    assert [(u.last_chunk, u.artifact.parts[0].text) for u in final] == [(True, "You said: hello")]


async def test_cancel_stops_the_model_call() -> None:
    model = ScriptedModel(seen=[], hold=True, started=asyncio.Event(), stopped=asyncio.Event())
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(adk_agent(model)) as caller:
            running = await caller.send("wait for me", blocking=False)
            await model.started.wait()
            canceled = await caller.client.cancel_task(CancelTaskRequest(id=running.id))
            stored = await caller.get(running.id)
    assert canceled.status.state == stored.status.state == S.TASK_STATE_CANCELED
    assert model.stopped.is_set()  # the model call saw the cancellation
