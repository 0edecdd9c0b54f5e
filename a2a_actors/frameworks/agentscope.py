"""AgentScope agents served as a2a-actors agents, and A2A agents as AgentScope tools.

``as_agent(agent)`` serves an ``agentscope.agent.Agent`` (AgentScope 2's ReAct agent);
``remote_tool(target)`` gives an ``agentscope.tool.FunctionTool`` that calls an A2A agent.
Needs the ``agentscope`` extra.

How a run maps onto its task (the rules every bridge shares are in :mod:`._turn`):

=======================================  ===================================================
AgentScope                               the task
=======================================  ===================================================
``reply_stream``: each                   chunks of the ``answer`` artifact, as produced (two
``TextBlockDeltaEvent``                  text blocks parted by a blank line; thinking is not
                                         the answer)
``ToolCallStart/Delta/EndEvent``,        WORKING with a ``tool_call`` / ``tool_result``
``ToolResultText/Data/EndEvent``         DataPart (``"error": true`` for a result that is
                                         an error, denied or interrupted)
a tool call the permission system asks   INPUT_REQUIRED, one question per call (see
about (``RequireUserConfirmEvent``), an  :mod:`._agentscope_hitl`); the replies resume the
external tool (``AskUser`` included,     parked reply with ``UserConfirmResultEvent`` /
``RequireExternalExecutionEvent``)       ``ExternalExecutionResultEvent``
the agent's ``state`` (``AgentState``)   a fresh state per task: the served agent's state as
                                         ``as_agent`` found it, with the context's
                                         conversation; ``session_id`` is the ``contextId``
``ModelCallEndEvent``                    ``metadata.usage`` (one request each)
a cancel                                 the model call or tool in flight is interrupted
                                         (AgentScope's own interruption: tool calls left
                                         open are closed), the task ends CANCELED
text, data, file parts                   a ``UserMsg``: ``TextBlock`` (data as its JSON),
                                         ``DataBlock`` (``Base64Source`` / ``URLSource``)
                                         for the media types the model's formatter takes
                                         (``formatter.input_types``), refused otherwise
=======================================  ===================================================

Each task runs a new agent of the served one's configuration on a state of its own
(concurrent tasks never share one), and its conversation is the ``contextId``'s: see
:mod:`._agentscope_state`. While a task waits for an answer, its messages and the parked
reply are stored, so that it continues after a server restart (:mod:`._agentscope_hitl`).
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from contextlib import aclosing
from fnmatch import fnmatch
from typing import Any

from a2a_actors.frameworks._extras import require

require("agentscope", extra="agentscope", bridge="a2a_actors.frameworks.agentscope")

from agentscope.agent import Agent as ScopeAgent  # noqa: E402  (after the extra's check)
from agentscope.event import (  # noqa: E402
    ModelCallEndEvent,
    TextBlockDeltaEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    ToolResultDataDeltaEvent,
    ToolResultEndEvent,
    ToolResultTextDeltaEvent,
)
from agentscope.formatter import FormatterBase  # noqa: E402
from agentscope.message import (  # noqa: E402
    Base64Source,
    DataBlock,
    Msg,
    TextBlock,
    ToolResultState,
    URLSource,
    UserMsg,
)
from agentscope.model import FinishedReason  # noqa: E402
from agentscope.permission import PermissionBehavior, PermissionDecision  # noqa: E402
from agentscope.state import AgentState, ReplyContext  # noqa: E402
from agentscope.tool import FunctionTool, ToolChunk  # noqa: E402
from pydantic import AnyUrl  # noqa: E402

from a2a_actors.frameworks._agent import framework_agent  # noqa: E402
from a2a_actors.frameworks._agentscope_hitl import Inputs, Questions, tool_arguments  # noqa: E402
from a2a_actors.frameworks._agentscope_state import Template, restore, task_record  # noqa: E402
from a2a_actors.frameworks._parts import UnsupportedContent, data_text, media_type, part_name  # noqa: E402
from a2a_actors.frameworks._remote import RemoteCall  # noqa: E402
from a2a_actors.frameworks._turn import Turn, Usage  # noqa: E402
from a2a_actors.protocol._card import AgentSkill  # noqa: E402
from a2a_actors.protocol._models import Part  # noqa: E402
from a2a_actors.runtime import Agent  # noqa: E402

__all__ = ("as_agent", "remote_tool")

FRAMEWORK = "agentscope"
_FAILED = frozenset({ToolResultState.ERROR, ToolResultState.DENIED, ToolResultState.INTERRUPTED})


def as_agent(
    agent: ScopeAgent,
    *,
    name: str | None = None,
    description: str | None = None,
    skills: Sequence[AgentSkill] = (),
) -> Agent:
    """Serve ``agent`` (an ``agentscope.agent.Agent``) as an a2a-actors agent.

    Args:
        agent: The AgentScope agent. Each task runs a new agent of its configuration, on a
            state of its own (see the module docstring); the agent itself is not changed.
        name: The card's name; defaults to the agent's ``name``.
        description: The card's description (AgentScope agents have none).
        skills: The card's skills.

    Returns:
        An orchestrated :class:`~a2a_actors.runtime.Agent` (see :mod:`._agent`).
    """
    runner = _Runner(agent)
    return framework_agent(
        runner.run,
        framework=FRAMEWORK,
        name=name or agent.name,
        description=description or "",
        skills=skills,
        input_modes=("text/plain", "application/json", *runner.media_types()),
    )


def remote_tool(
    target: str, *, name: str | None = None, description: str | None = None
) -> FunctionTool:
    """An AgentScope ``FunctionTool`` that sends its ``message`` argument to the A2A agent
    ``target`` (a URL or a registry name) and returns its answer (see :mod:`._remote`).

    It is allowed without a confirmation (a deny or ask rule of the agent's permission
    context still applies), and runs one call at a time: a remote question is answered by
    the tool's next call.
    """
    call = RemoteCall(target, name=name, description=description)

    async def ask(message: str) -> ToolChunk:
        """Send a message to the agent (the tool's description replaces this line).

        Args:
            message: The message for the agent: a request, or the answer to its question.
        """
        return ToolChunk(content=[TextBlock(text=await call(message))])

    allowed = PermissionDecision(
        behavior=PermissionBehavior.ALLOW, message=f"{call.name} calls an A2A agent."
    )
    return FunctionTool(
        ask,
        name=call.name,
        description=call.description,
        is_concurrency_safe=False,
        permission=allowed,
    )


class _Runner:
    """Runs a new agent of the served one's configuration for each task."""

    def __init__(self, agent: ScopeAgent) -> None:
        self.template = Template(agent)

    def media_types(self) -> list[str]:
        """The media type patterns of the files the agent's model takes."""
        formatter = getattr(self.template.agent.model, "formatter", None)  # all models have one
        return formatter.supported_input_media_types if isinstance(formatter, FormatterBase) else []

    async def run(self, turn: Turn) -> None:
        session = turn.ctx.context_id
        state = restore(self.template.base, await turn.earlier(), session)
        task = _Task(turn, [m.id for m in state.context])
        paused = turn.paused()
        inputs: Inputs
        if paused is not None and isinstance(paused[1], dict) and "reply" in paused[1]:
            # Restarted while its parked reply waited: the message answers the question.
            state = restore(state, paused[0], session, close=False)
            state.reply_context = ReplyContext.model_validate(paused[1]["reply"])
            agent = self.template.fresh(state)
            inputs = await task.questions.answer(agent, paused[1], turn.ctx.message)
        else:
            inputs = _user_message(turn.ctx.parts, self.media_types())
            agent = self.template.fresh(state)
        while True:
            final = await task.stream(agent, inputs)
            if not agent.state.get_awaiting_tool_calls(agent.name):
                break
            inputs = await task.questions.answer(agent)  # the reply is parked: ask, resume
        text = final.get_text_content() if final is not None else None
        if text and not turn.answered:
            await turn.text(text)
        await turn.finish(task.record(agent.state))


class _Task:
    """One task's replies: what they reported so far."""

    def __init__(self, turn: Turn, start: list[str]) -> None:
        self.turn = turn
        #: The ids of the context's messages before this task's.
        self.start = start
        self.questions = Questions(turn, self.record)
        self.names: dict[str, str] = {}
        self.calls: dict[str, list[str]] = {}
        self.results: dict[str, list[object]] = {}
        self.interrupted = False

    async def stream(self, agent: ScopeAgent, inputs: Inputs) -> Msg | None:
        """Run one reply, reporting its events as they come; its final message."""
        final: Msg | None = None
        async with aclosing(agent.reply_stream(inputs, yield_final_msg=True)) as events:
            async for event in events:
                if isinstance(event, Msg):
                    final = event
                elif not self.interrupted:  # after a cancel, only AgentScope's tidying comes
                    await self._report(event)
        return final

    async def _report(self, event: object) -> None:
        turn = self.turn
        if isinstance(event, TextBlockDeltaEvent):
            await turn.text(event.delta, source=event.block_id)
        elif isinstance(event, ToolCallStartEvent):
            self.names[event.tool_call_id] = event.tool_call_name
            self.calls[event.tool_call_id] = []
        elif isinstance(event, ToolCallDeltaEvent):
            self.calls.setdefault(event.tool_call_id, []).append(event.delta)
        elif isinstance(event, ToolCallEndEvent):
            call_id = event.tool_call_id
            arguments = tool_arguments("".join(self.calls.pop(call_id, [])))
            await turn.tool_call(
                name=self.names.get(call_id, ""), call_id=call_id, arguments=arguments
            )
        elif isinstance(event, ToolResultTextDeltaEvent):
            self.results.setdefault(event.tool_call_id, []).append(event.delta)
        elif isinstance(event, ToolResultDataDeltaEvent):
            described: dict[str, object] = {"mediaType": event.media_type, "url": event.url}
            if event.url is None:
                described = {"mediaType": event.media_type, "size": _size(event.data or "")}
            self.results.setdefault(event.tool_call_id, []).append(described)
        elif isinstance(event, ToolResultEndEvent):
            if event.state == ToolResultState.INTERRUPTED:
                self.interrupted = True
                return
            call_id = event.tool_call_id
            await turn.tool_result(
                name=self.names.get(call_id, ""),
                call_id=call_id,
                result=_result(self.results.pop(call_id, [])),
                error=event.state in _FAILED,
            )
        elif isinstance(event, ModelCallEndEvent):
            i, o = event.input_tokens, event.output_tokens
            turn.add_usage(Usage(input_tokens=i, output_tokens=o, total_tokens=i + o, requests=1))
            if event.finished_reason == FinishedReason.INTERRUPTED:
                self.interrupted = True

    def record(self, state: AgentState) -> list[Any]:
        """This task's part of the conversation so far (see :mod:`._agentscope_state`)."""
        return task_record(state, self.start)


def _result(pieces: list[object]) -> object:
    """A tool's result: its text, or its pieces when it returned data too."""
    if all(isinstance(piece, str) for piece in pieces):
        return "".join(str(piece) for piece in pieces)
    return pieces


def _size(data: str) -> int:
    return len(data) * 3 // 4 - data.count("=")


def _user_message(parts: Sequence[Part], patterns: list[str]) -> Msg:
    """The user message of a message's parts (see the module docstring).

    Raises:
        UnsupportedContent: A file part whose media type the model does not take.
    """
    blocks: list[TextBlock | DataBlock] = []
    for part in parts:
        if part.text is not None:
            blocks.append(TextBlock(text=part.text))
        elif part.raw is None and part.url is None:
            blocks.append(TextBlock(text=data_text(part)))
        else:
            blocks.append(_file(part, patterns))
    return UserMsg("user", blocks)


def _file(part: Part, patterns: list[str]) -> DataBlock:
    kind = media_type(part)
    if not kind or not any(fnmatch(kind, pattern) for pattern in patterns):
        takes = f"files of {', '.join(patterns)}" if patterns else "no files"
        raise UnsupportedContent(
            f"AgentScope agents take text, data, and what their model takes ({takes}); "
            f"got {part_name(part)}"
        )
    source: Base64Source | URLSource
    if part.raw is not None:
        source = Base64Source(data=base64.b64encode(part.raw).decode("ascii"), media_type=kind)
    else:
        source = URLSource(url=AnyUrl(part.url or ""), media_type=kind)
    return DataBlock(source=source, name=part.filename)
