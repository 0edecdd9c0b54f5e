"""Human in the loop for :mod:`.agentscope`: the questions of a parked AgentScope reply, and
the event that resumes it.

An AgentScope reply parks (ends, its tool calls waiting in the agent's state) on:

* a tool call its permission system asks about (``RequireUserConfirmEvent``, the call
  ``ASKING``; function tools ask unless given a ``permission``): the question "Approve
  name(input)? Answer yes or no." and a DataPart ``{"type": "tool_approval", "id", "name",
  "arguments"}``; the reply, read by :func:`._turn.approval`, confirms or denies the call
  (``UserConfirmResultEvent``). A refusal's text is not passed on: AgentScope's
  confirmation carries none (the model is told that the user denied the call);
* an external tool (``RequireExternalExecutionEvent``, the call ``SUBMITTED``):

  - ``AskUser``, AgentScope's tool that asks the user: its questions, each with its
    options, and a DataPart ``{"type": "ask_user", ...}`` (``arguments``: the questions).
    A DataPart ``{"answers": [...]}`` (``AskUserMetadata``) answers; otherwise the text
    answers every question (or line by line, one line per question): an option's label
    (several, comma-separated, for a multi-select question) selects it, anything else is
    the user's own answer;
  - any other: "The agent needs the result of name(input)." and a DataPart ``{"type":
    "external_tool", ...}``; the reply's text (or its DataPart's JSON) is the result, the
    DataPart also its ``metadata``.

One question per call, in the order of the calls; once all are answered, the
confirmations resume the reply first, then the external results. Before each question the
task's messages and ``{"reply": <the reply's context>, "asking": <call id>, "answers":
{...}}`` are stored, so that a task restarted after a server restart answers it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agentscope.agent import Agent as ScopeAgent
from agentscope.event import (
    ConfirmResult,
    ExternalExecutionResultEvent,
    UserConfirmResultEvent,
)
from agentscope.message import Msg, ToolCallBlock, ToolCallState, ToolResultBlock, ToolResultState
from agentscope.state import AgentState
from agentscope.tool import AskUser, AskUserAnswer, AskUserMetadata, AskUserParams, ToolBase
from pydantic import ValidationError

from a2a_actors.frameworks._turn import Turn, approval
from a2a_actors.protocol._models import Message

__all__ = ("ASK_USER", "EXTERNAL_TOOL", "TOOL_APPROVAL", "Inputs", "Questions", "tool_arguments")

#: ``type`` of the DataPart of a confirmation question.
TOOL_APPROVAL = "tool_approval"
#: ``type`` of the DataPart of an ``AskUser`` call.
ASK_USER = "ask_user"
#: ``type`` of the DataPart of another external tool's call.
EXTERNAL_TOOL = "external_tool"

#: What a reply is started or resumed with.
Inputs = Msg | UserConfirmResultEvent | ExternalExecutionResultEvent


class Questions:
    """Asks a task's questions, and keeps the answers not yet sent to the agent.

    Args:
        turn: The task's run.
        record: This task's messages, as stored, of a state.
    """

    def __init__(self, turn: Turn, record: Callable[[AgentState], list[Any]]) -> None:
        self.turn = turn
        self.record = record
        self.answers: dict[str, Any] = {}

    async def answer(
        self, agent: ScopeAgent, paused: dict[str, Any] | None = None, reply: Message | None = None
    ) -> Inputs:
        """Ask about each call ``agent``'s parked reply waits for (``reply`` answers the one
        ``paused`` says was asked, after a restart); the event that resumes the reply."""
        asking = None
        if paused is not None:
            self.answers = dict(paused.get("answers") or {})
            asking = paused.get("asking")
        pending = agent.state.get_awaiting_tool_calls(agent.name)
        for call in pending:
            if call.id in self.answers:
                continue
            tool = await agent.toolkit.get_tool(call.name)
            if reply is None or call.id != asking:
                question, data = _question(call, tool)
                state: dict[str, Any] = {"asking": call.id, "answers": dict(self.answers)}
                state["reply"] = agent.state.reply_context.model_dump(mode="json")
                messages = self.record(agent.state)
                reply = await self.turn.ask(question, data=data, messages=messages, paused=state)
            self.answers[call.id] = _answer(call, tool, reply)
            reply = None
        confirming = [call for call in pending if call.state == ToolCallState.ASKING]
        if confirming:
            results = [
                ConfirmResult(confirmed=self.answers.pop(call.id)["approve"], tool_call=call)
                for call in confirming
            ]
            return UserConfirmResultEvent(reply_id=agent.state.reply_id, confirm_results=results)
        executed = [ToolResultBlock.model_validate(self.answers.pop(call.id)) for call in pending]
        return ExternalExecutionResultEvent(
            reply_id=agent.state.reply_id, execution_results=executed
        )


def tool_arguments(raw: str) -> object:
    """A tool call's arguments: its JSON as Python, else as the model wrote them."""
    try:
        parsed: object = json.loads(raw) if raw else {}
    except ValueError:
        return raw
    return parsed


def _params(call: ToolCallBlock, tool: ToolBase | None) -> AskUserParams | None:
    """The questions of an ``AskUser`` call (None for another tool)."""
    if not isinstance(tool, AskUser):
        return None
    try:
        return AskUserParams.model_validate_json(call.input)
    except ValidationError:  # the agent validated it against the same schema
        return None


def _question(call: ToolCallBlock, tool: ToolBase | None) -> tuple[str, dict[str, Any]]:
    """The question about a waiting call: its text and its DataPart."""
    data = {"id": call.id, "name": call.name, "arguments": tool_arguments(call.input)}
    if call.state == ToolCallState.ASKING:
        return f"Approve {call.name}({call.input})? Answer yes or no.", {
            "type": TOOL_APPROVAL
        } | data
    params = _params(call, tool)
    if params is None:
        text = f"The agent needs the result of {call.name}({call.input})."
        return text, {"type": EXTERNAL_TOOL} | data
    lines = []
    for asked in params.questions:
        if asked.context:
            lines.append(asked.context)
        lines.append(f"{asked.question} ({' / '.join(o.label for o in asked.options)})")
    return "\n".join(lines), {"type": ASK_USER} | data


def _answer(call: ToolCallBlock, tool: ToolBase | None, reply: Message) -> Any:
    """What ``reply`` answers about ``call``, as JSON (see the module docstring)."""
    if call.state == ToolCallState.ASKING:
        return {"approve": approval(reply)[0]}
    data = [part.data for part in reply.parts if part.kind == "data"]
    output: str = json.dumps(data[0], ensure_ascii=False) if data else reply.text
    metadata = data[0] if data and isinstance(data[0], dict) else {}
    params = _params(call, tool)
    if params is not None:
        answers = _answers(params, reply.text, metadata)
        metadata = AskUserMetadata(answers=answers).model_dump(mode="json")
        output = "\n\n".join(f"{a.question}\n{a.other or ', '.join(a.selected)}" for a in answers)
    result = ToolResultBlock(
        id=call.id, name=call.name, output=output, state=ToolResultState.SUCCESS, metadata=metadata
    )
    return result.model_dump(mode="json")


def _answers(params: AskUserParams, text: str, data: dict[str, Any]) -> list[AskUserAnswer]:
    """The answers to ``AskUser`` questions: a DataPart's, else the reply's text."""
    try:
        return AskUserMetadata.model_validate(data).answers
    except ValidationError:
        pass
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) != len(params.questions):
        lines = [text.strip()] * len(params.questions)
    answers = []
    for asked, line in zip(params.questions, lines, strict=True):
        labels = {option.label.lower(): option.label for option in asked.options}
        picked = [labels.get(piece.strip().lower()) for piece in line.split(",")]
        chosen = [label for label in picked if label is not None]
        if len(chosen) == len(picked) and (asked.multi_select or len(chosen) == 1):
            answers.append(AskUserAnswer(question=asked.question, selected=chosen))
        else:
            answers.append(AskUserAnswer(question=asked.question, other=line))
    return answers
