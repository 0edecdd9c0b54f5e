"""OpenAI Agents SDK agents served as a2a-actors agents, and A2A agents as their tools.

``as_agent(agent)`` serves an ``agents.Agent``; ``remote_tool(target)`` gives an
``agents.FunctionTool`` that calls an A2A agent. Needs the ``openai-agents`` extra.

How a run maps onto its task (the rules every bridge shares are in :mod:`._turn`):

======================================  ====================================================
OpenAI Agents                           the task
======================================  ====================================================
``Runner.run_streamed``: each raw       chunks of the ``answer`` artifact, as produced
``ResponseTextDeltaEvent``              (text written before a tool call included; an agent
                                        with a structured ``output_type`` streams none: its
                                        JSON text is not the answer)
a structured ``final_output``           the ``answer`` artifact, one DataPart (its JSON)
``tool_called`` / ``tool_output``       WORKING with a ``tool_call`` / ``tool_result``
run items                               DataPart
``needs_approval`` tools: each of the   INPUT_REQUIRED, one question per call: "Approve
run's ``interruptions``                 name(arguments)? Answer yes or no." and a DataPart
                                        ``{"type": "tool_approval", "id", "name",
                                        "arguments"}``; the reply approves or rejects it on
                                        the ``RunState``, then the run resumes from it
the reply to an approval                approves or rejects as :func:`._turn.approval`
                                        reads it (a DataPart ``{"approve": bool}``, else
                                        "yes"; a reply other than "no" is the rejection's
                                        message)
``result.to_input_list()``              the conversation of the ``contextId`` (each task
                                        stores the items it added, see
                                        :mod:`._conversation`); instructions are not items,
                                        never stored
``context_wrapper.usage``               ``metadata.usage``
text, data, file parts                  ``input_text`` (data as its JSON), ``input_image``
                                        (images), ``input_file`` (PDF and text files), as a
                                        data URL (``raw``) or a URL
the consumer is cancelled               ``result.cancel()``: the run's task, its model
                                        call and its tools are cancelled
======================================  ====================================================

While the task waits for an approval, the ``RunState`` (``to_json()``) is stored with the
task, so a task restored after a server restart continues from it with the reply.
Tracing is left as the application set it (``set_tracing_disabled``, ``RunConfig``).
"""

from __future__ import annotations

import asyncio
import base64
import json
import mimetypes
from collections.abc import Sequence
from typing import Any, cast

import anyio
import msgspec

from a2a_actors.frameworks._extras import require

require("agents", extra="openai-agents", bridge="a2a_actors.frameworks.openai_agents")

from agents import (  # noqa: E402  (after the extra's check)
    Agent as OpenAIAgent,
    AgentOutputSchemaBase,
    AgentUpdatedStreamEvent,
    FunctionTool,
    RawResponsesStreamEvent,
    RunConfig,
    RunItemStreamEvent,
    Runner,
    RunResultStreaming,
    RunState,
    ToolApprovalItem,
    ToolCallItem,
    ToolCallOutputItem,
    TResponseInputItem,
    function_tool,
)
from openai.types.responses import (  # noqa: E402
    EasyInputMessageParam,
    ResponseInputContentParam,
    ResponseInputFileParam,
    ResponseTextDeltaEvent,
)
from pydantic_core import to_jsonable_python  # noqa: E402

from a2a_actors.frameworks._agent import framework_agent  # noqa: E402
from a2a_actors.frameworks._parts import UnsupportedContent, data_text, media_type, part_name  # noqa: E402
from a2a_actors.frameworks._remote import RemoteCall  # noqa: E402
from a2a_actors.frameworks._turn import Turn, Usage, approval  # noqa: E402
from a2a_actors.protocol._card import AgentSkill  # noqa: E402
from a2a_actors.protocol._models import Message, Part  # noqa: E402
from a2a_actors.runtime import Agent  # noqa: E402

__all__ = ("TOOL_APPROVAL", "as_agent", "remote_tool")

FRAMEWORK = "openai-agents"
#: ``type`` of the DataPart of an approval question.
TOOL_APPROVAL = "tool_approval"
_INPUT_MODES = ("text/plain", "application/json", "image/*", "application/pdf", "text/*")
#: How long a cancelled run may take to stop before the task ends anyway (a tool that
#: swallows its cancellation must not keep the task from ending).
_STOP_GRACE_S = 5.0


def as_agent(
    agent: OpenAIAgent[Any],
    *,
    name: str | None = None,
    description: str | None = None,
    skills: Sequence[AgentSkill] = (),
    run_config: RunConfig | None = None,
    max_turns: int = 10,
) -> Agent:
    """Serve ``agent`` (an ``agents.Agent``) as an a2a-actors agent.

    Args:
        agent: The OpenAI Agents agent; it is run as it is (its model, tools, handoffs).
        name: The card's name; defaults to the agent's ``name``.
        description: The card's description; defaults to its ``handoff_description``.
        skills: The card's skills.
        run_config: Passed to every run (model provider, tracing, guardrails...).
        max_turns: Passed to every run: more model turns fail the task.

    Returns:
        An orchestrated :class:`~a2a_actors.runtime.Agent` (see :mod:`._agent`).
    """
    return framework_agent(
        _Runner(agent, run_config, max_turns).run,
        framework=FRAMEWORK,
        name=name or agent.name,
        description=description if description is not None else agent.handoff_description or "",
        skills=skills,
        input_modes=_INPUT_MODES,
    )


def remote_tool(
    target: str, *, name: str | None = None, description: str | None = None
) -> FunctionTool:
    """An ``agents.FunctionTool`` that sends its ``message`` argument to the A2A agent
    ``target`` (a URL or a registry name) and returns its answer (see :mod:`._remote`)."""
    call = RemoteCall(target, name=name, description=description)

    async def ask(message: str) -> str:
        """Send a message to the agent (the tool's description replaces this line).

        Args:
            message: The message for the agent: a request, or the answer to its question.
        """
        return await call(message)

    return function_tool(ask, name_override=call.name, description_override=call.description)


class _Runner:
    """Runs the agent for each task (one instance serves them all; a task's own state is
    a :class:`_Task`)."""

    def __init__(self, agent: OpenAIAgent[Any], config: RunConfig | None, max_turns: int):
        self.agent = agent
        self.config = config
        self.max_turns = max_turns

    async def run(self, turn: Turn) -> None:
        earlier = await turn.earlier()
        task = _Task(turn, self.agent, len(earlier))
        source: list[TResponseInputItem] | RunState[Any] | None = None
        paused = turn.paused()
        if paused is not None:  # restarted while an approval waited: the reply answers it
            source = await task.restore(*paused)
        if source is None:
            source = [*cast(list[TResponseInputItem], earlier), _user_item(turn.ctx.parts)]
        while True:
            result = Runner.run_streamed(
                self.agent, source, run_config=self.config, max_turns=self.max_turns
            )
            await task.stream(result)
            if not result.interruptions:
                break
            state = result.to_state()
            await task.decide(state, to_jsonable_python(result.to_input_list()[task.start :]))
            source = state
        final = result.final_output
        if final is not None and not isinstance(final, str):
            await turn.output(to_jsonable_python(final, fallback=str))
        elif final and not turn.answered:
            await turn.text(final)
        await turn.finish(to_jsonable_python(result.to_input_list()[task.start :]))


class _Task:
    """One task's runs: what it reported, counted and asked so far."""

    def __init__(self, turn: Turn, agent: OpenAIAgent[Any], start: int) -> None:
        self.turn = turn
        self.agent = agent
        #: Where this task's items begin in the run's input list (the earlier tasks' end).
        self.start = start
        #: The run's cumulative usage already counted (a resumed RunState carries it on,
        #: and it was stored before the question the run paused on).
        self.counted = Usage()
        #: Tool names by call id: a ``tool_output`` item does not name its tool.
        self.names: dict[str, str] = {}
        self.current = agent

    async def stream(self, result: RunResultStreaming) -> None:
        """Report ``result``'s events as they come, then count its usage."""
        try:
            async for event in result.stream_events():
                await self._report(event)
        finally:
            # A consumer cancelled while it was not waiting on the stream (or one that left
            # it) would leave the run going: cancel it, and let it stop before the task ends.
            result.cancel()
            running = result.run_loop_task
            if running is not None and not running.done():
                with anyio.move_on_after(_STOP_GRACE_S, shield=True):
                    await asyncio.wait({running})
        usage = result.context_wrapper.usage
        total = Usage(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            total_tokens=usage.total_tokens,
            requests=usage.requests,
        )
        self.turn.add_usage(total - self.counted)
        self.counted = total

    async def _report(self, event: object) -> None:
        turn = self.turn
        if isinstance(event, RawResponsesStreamEvent):
            if isinstance(event.data, ResponseTextDeltaEvent) and _plain_text(self.current):
                await turn.text(event.data.delta, source=event.data.item_id)
        elif isinstance(event, AgentUpdatedStreamEvent):
            self.current = event.new_agent
        elif isinstance(event, RunItemStreamEvent):
            item = event.item
            if isinstance(item, ToolCallItem):
                call_id = item.call_id or ""
                name = self.names[call_id] = item.tool_name or _field(item.raw_item, "type")
                arguments = _arguments(_field(item.raw_item, "arguments") or None)
                await turn.tool_call(name=name, call_id=call_id, arguments=arguments)
            elif isinstance(item, ToolCallOutputItem):
                call_id = item.call_id or ""
                await turn.tool_result(
                    name=self.names.get(call_id, ""),
                    call_id=call_id,
                    result=to_jsonable_python(item.output, fallback=str),
                )

    async def restore(self, messages: list[Any], paused: object) -> RunState[Any] | None:
        """The RunState stored by :meth:`decide`, the restarted task's message applied to
        the approval it answers (None when nothing of ours was stored)."""
        if not isinstance(paused, dict) or not isinstance(paused.get("state"), dict):
            return None
        self.start = int(paused["start"])
        # what was counted before the restart was stored before its question
        self.counted = msgspec.convert(paused.get("counted", {}), Usage)
        state = await RunState.from_json(self.agent, paused["state"])
        reply = self.turn.ctx.message
        await self.decide(state, messages, first=int(paused["asking"]), reply=reply)
        return state

    async def decide(
        self,
        state: RunState[Any],
        messages: list[Any],
        *,
        first: int = 0,
        reply: Message | None = None,
    ) -> None:
        """Ask about each pending approval of ``state`` from ``first`` on (``reply``, when
        given, answers the first), and approve or reject it on ``state``.

        Before each question, this task's items so far and ``state`` (with the decisions
        taken) are stored, with which approval is asked, for :meth:`restore`.
        """
        pending = state.get_interruptions()
        for item in pending:
            self.names[item.call_id or ""] = item.name or ""
        for index in range(first, len(pending)):
            item = pending[index]
            if reply is None:
                question, data = _question(item)
                paused = {
                    "state": state.to_json(),
                    "start": self.start,
                    "asking": index,
                    "counted": msgspec.to_builtins(self.counted),
                }
                reply = await self.turn.ask(question, data=data, messages=messages, paused=paused)
            approved, why = approval(reply)
            if approved:
                state.approve(item)
            else:
                state.reject(item, rejection_message=why)
            reply = None


def _plain_text(agent: OpenAIAgent[Any]) -> bool:
    """Whether ``agent``'s output is text (its text deltas are the answer)."""
    kind = agent.output_type
    if isinstance(kind, AgentOutputSchemaBase):
        return kind.is_plain_text()
    return kind is None or kind is str


def _field(raw: object, key: str) -> str:
    """A string field of a raw item, a model or a dict ("" when it has none)."""
    value = raw.get(key) if isinstance(raw, dict) else getattr(raw, key, None)
    return value if isinstance(value, str) else ""


def _arguments(raw: str | None) -> object:
    """A tool call's arguments: its JSON as Python, else as the model wrote them."""
    if raw is None:
        return {}
    try:
        parsed: object = json.loads(raw)
    except ValueError:
        return raw
    return parsed


def _question(item: ToolApprovalItem) -> tuple[str, dict[str, Any]]:
    """The question of an approval: its text and its DataPart."""
    name, arguments = item.name or "", item.arguments or ""
    data = {
        "type": TOOL_APPROVAL,
        "id": item.call_id or "",
        "name": name,
        "arguments": _arguments(arguments or None),
    }
    return f"Approve {name}({arguments})? Answer yes or no.", data


def _user_item(parts: Sequence[Part]) -> TResponseInputItem:
    """The user message of a message's parts (see the module docstring).

    Raises:
        UnsupportedContent: A file part whose media type the agent does not take.
    """
    content: list[ResponseInputContentParam] = []
    for part in parts:
        if part.text is not None:
            content.append({"type": "input_text", "text": part.text})
        elif part.data is not msgspec.UNSET:
            content.append({"type": "input_text", "text": data_text(part)})
        else:
            content.append(_file(part))
    return EasyInputMessageParam(role="user", content=content)


def _file(part: Part) -> ResponseInputContentParam:
    kind = media_type(part)
    document = kind == "application/pdf" or kind.startswith("text/")
    if not (kind.startswith("image/") or document):
        raise UnsupportedContent(
            f"OpenAI agents take text, data, and image, PDF or text files; got {part_name(part)}"
        )
    url = part.url
    if part.raw is not None:
        url = f"data:{kind};base64,{base64.b64encode(part.raw).decode('ascii')}"
    if not document:
        return {"type": "input_image", "image_url": url, "detail": "auto"}
    file: ResponseInputFileParam = {"type": "input_file"}
    if part.raw is not None:
        file["file_data"] = url or ""
        file["filename"] = part.filename or f"file{mimetypes.guess_extension(kind) or ''}"
    else:
        file["file_url"] = url or ""
        if part.filename:
            file["filename"] = part.filename
    return file
