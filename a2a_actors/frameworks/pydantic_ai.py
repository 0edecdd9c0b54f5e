"""PydanticAI agents served as a2a-actors agents, and A2A agents as PydanticAI tools.

``as_agent(agent)`` serves a ``pydantic_ai.Agent``; ``remote_tool(target)`` gives a
``pydantic_ai.Tool`` that calls an A2A agent. Needs the ``pydantic-ai`` extra.

How a run maps onto its task (the rules every bridge shares are in :mod:`._turn`):

======================================  ====================================================
PydanticAI                              the task
======================================  ====================================================
``run_stream_events``: a text part's    chunks of the ``answer`` artifact, as produced
start and its deltas
a structured output (``output_type``)   the ``answer`` artifact, one DataPart (its JSON)
``FunctionToolCallEvent`` /             WORKING with a ``tool_call`` / ``tool_result``
``FunctionToolResultEvent``             DataPart
deferred tools: ``requires_approval``,  INPUT_REQUIRED: the question, and a DataPart
``ApprovalRequired``, ``CallDeferred``,   ``{"type": "deferred_tools", "approvals": [...],
``ExternalToolset``                     "calls": [...]}`` (each ``{"id", "name",
                                        "arguments"}``); the run waits inside it
                                        (``HandleDeferredToolCalls``) and goes on with the
                                        reply
the reply to a deferred request         a DataPart ``{"approvals": {id: true | false |
                                        "why not"}, "calls": {id: result}}`` says each;
                                        else every approval is as :func:`._turn.approval`
                                        reads the reply (``{"approve": bool}``, else "yes";
                                        a reply other than "no" is the denial's message),
                                        and each external call gets the reply's text
message history                         the conversation of the ``contextId`` (the earlier
                                        tasks' ``new_messages()`` as JSON, see
                                        :mod:`._conversation`), system prompt parts
                                        included: prefer ``instructions=``, never stored
``RunUsage``                            ``metadata.usage``
text, data, file parts                  ``str``, ``StructuredContent``, ``BinaryContent`` /
                                        ``ImageUrl`` / ``AudioUrl`` / ``VideoUrl`` /
                                        ``DocumentUrl`` by media type
======================================  ====================================================

A task restored after a server restart while it waited for a deferred tool's answer
continues from its stored messages and requests with the reply.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from a2a_actors.frameworks._extras import require

require("pydantic_ai", extra="pydantic-ai", bridge="a2a_actors.frameworks.pydantic_ai")

from pydantic import TypeAdapter  # noqa: E402  (after the extra's check)
from pydantic_ai import (  # noqa: E402
    Agent as PydanticAgent,
    AgentRunResult,
    AgentRunResultEvent,
    AudioUrl,
    BinaryContent,
    DeferredToolRequests,
    DeferredToolResults,
    DocumentUrl,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ImageUrl,
    ModelMessage,
    ModelMessagesTypeAdapter,
    PartDeltaEvent,
    PartStartEvent,
    RunContext,
    RunUsage,
    StructuredContent,
    TextPart,
    TextPartDelta,
    Tool,
    ToolCallPart,
    ToolDenied,
    VideoUrl,
)
from pydantic_ai.capabilities import HandleDeferredToolCalls  # noqa: E402
from pydantic_ai.messages import UserContent  # noqa: E402
from pydantic_core import to_jsonable_python  # noqa: E402

from a2a_actors.frameworks._agent import framework_agent  # noqa: E402
from a2a_actors.frameworks._parts import UnsupportedContent, media_type, part_name  # noqa: E402
from a2a_actors.frameworks._remote import RemoteCall  # noqa: E402
from a2a_actors.frameworks._turn import Turn, Usage, approval  # noqa: E402
from a2a_actors.protocol._card import AgentSkill  # noqa: E402
from a2a_actors.protocol._models import Message, Part  # noqa: E402
from a2a_actors.runtime import Agent  # noqa: E402

__all__ = ("as_agent", "remote_tool")

FRAMEWORK = "pydantic-ai"
#: ``type`` of the DataPart of a deferred-tools question.
DEFERRED_TOOLS = "deferred_tools"
_INPUT_MODES = (
    "text/plain",
    "application/json",
    "image/*",
    "audio/*",
    "video/*",
    "application/pdf",
)
_REQUESTS = TypeAdapter(DeferredToolRequests)


def as_agent(
    agent: PydanticAgent[Any, Any],
    *,
    name: str | None = None,
    description: str | None = None,
    skills: Sequence[AgentSkill] = (),
) -> Agent:
    """Serve ``agent`` (a ``pydantic_ai.Agent``) as an a2a-actors agent.

    Args:
        agent: The PydanticAI agent; it is run as it is (its model, tools, instructions).
        name: The card's name; defaults to the agent's ``name``, else ``"pydantic-ai-agent"``.
        description: The card's description; defaults to the agent's ``description``.
        skills: The card's skills.

    Returns:
        An orchestrated :class:`~a2a_actors.runtime.Agent` (see :mod:`._agent`).
    """
    return framework_agent(
        _Runner(agent).run,
        framework=FRAMEWORK,
        name=name or agent.name or "pydantic-ai-agent",
        description=description if description is not None else (agent.description or ""),
        skills=skills,
        input_modes=_INPUT_MODES,
    )


def remote_tool(
    target: str, *, name: str | None = None, description: str | None = None
) -> Tool[Any]:
    """A ``pydantic_ai.Tool`` that sends its ``message`` argument to the A2A agent
    ``target`` (a URL or a registry name) and returns its answer (see :mod:`._remote`)."""
    call = RemoteCall(target, name=name, description=description)

    async def ask(message: str) -> str:
        return await call(message)

    return Tool(ask, name=call.name, description=call.description)


class _Runner:
    """Runs the agent for one task at a time (one instance serves every task)."""

    def __init__(self, agent: PydanticAgent[Any, Any]) -> None:
        self.agent = agent

    async def run(self, turn: Turn) -> None:
        history = _messages(await turn.earlier())
        start = len(history)
        prompt: list[UserContent] | None = None
        results: DeferredToolResults | None = None
        paused = turn.paused()
        if paused is not None:  # restarted while a deferred tool waited: answer it now
            own, requests = paused
            history += _messages(own)
            results = _results(_REQUESTS.validate_python(requests), turn.ctx.message)
        else:
            prompt = _prompt(turn.ctx.parts)

        counted = Usage()  # of the run's cumulative usage: stored before each question

        def count(usage: RunUsage) -> None:
            nonlocal counted
            total = _usage(usage)
            turn.add_usage(total - counted)
            counted = total

        async def deferred(
            ctx: RunContext[Any], requests: DeferredToolRequests
        ) -> DeferredToolResults:
            own = _dump(ctx.messages[start:])
            count(ctx.usage)
            question, data = _question(requests)
            reply = await turn.ask(
                question, data=data, messages=own, paused=to_jsonable_python(requests)
            )
            return _results(requests, reply)

        result = await self._stream(turn, prompt, history, results, deferred, count)
        count(result.usage)
        output = result.output
        if not isinstance(output, str):
            await turn.output(to_jsonable_python(output))
        elif not turn.answered:
            await turn.output(output)
        await turn.finish(_dump(result.all_messages()[start:]))

    async def _stream(
        self,
        turn: Turn,
        prompt: list[UserContent] | None,
        history: list[ModelMessage],
        results: DeferredToolResults | None,
        deferred: Any,
        count: Callable[[RunUsage], None],
    ) -> AgentRunResult[Any]:
        events = self.agent.run_stream_events(
            prompt,
            message_history=history or None,
            deferred_tool_results=results,
            capabilities=[HandleDeferredToolCalls(handler=deferred)],
        )
        response = 0  # which model response the text comes from: each starts at part 0
        async with events as stream:
            try:
                async for event in stream:
                    if isinstance(event, AgentRunResultEvent):
                        return event.result
                    if isinstance(event, PartStartEvent):
                        response += event.index == 0
                    await _report(turn, event, response)
            except Exception:
                count(stream.usage)  # what the run used before it failed
                raise
        raise RuntimeError("the PydanticAI run ended without a result")


async def _report(turn: Turn, event: object, response: int) -> None:
    """Report one event of the run to its task (text of model response ``response``)."""
    if isinstance(event, PartStartEvent):
        if isinstance(event.part, TextPart):
            await turn.text(event.part.content, source=response)
    elif isinstance(event, PartDeltaEvent):
        if isinstance(event.delta, TextPartDelta):
            await turn.text(event.delta.content_delta, source=response)
    elif isinstance(event, FunctionToolCallEvent):
        part = event.part
        await turn.tool_call(name=part.tool_name, call_id=part.tool_call_id, arguments=_args(part))
    elif isinstance(event, FunctionToolResultEvent):
        returned = event.part
        await turn.tool_result(
            name=returned.tool_name,
            call_id=returned.tool_call_id,
            result=to_jsonable_python(returned.content, fallback=str),
            error=returned.outcome == "failed",
        )


def _messages(raw: list[Any]) -> list[ModelMessage]:
    return ModelMessagesTypeAdapter.validate_python(raw)


def _dump(messages: Sequence[ModelMessage]) -> list[Any]:
    dumped: list[Any] = ModelMessagesTypeAdapter.dump_python(list(messages), mode="json")
    return dumped


def _args(part: ToolCallPart) -> object:
    try:
        return part.args_as_dict()
    except ValueError:  # arguments that are not a JSON object: as the model wrote them
        return part.args


def _usage(usage: RunUsage) -> Usage:
    return Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        total_tokens=usage.total_tokens,
        requests=usage.requests,
    )


def _prompt(parts: Sequence[Part]) -> list[UserContent]:
    """The user prompt of a message's parts (see the module docstring).

    Raises:
        UnsupportedContent: A file part whose media type PydanticAI does not take.
    """
    prompt: list[UserContent] = []
    for part in parts:
        if part.text is not None:
            prompt.append(part.text)
        elif part.raw is None and part.url is None:
            prompt.append(StructuredContent(part.data))
        else:
            prompt.append(_file(part))
    return prompt


def _file(part: Part) -> UserContent:
    kind = media_type(part)
    major = kind.split("/", 1)[0]
    if major not in ("image", "audio", "video", "text") and kind != "application/pdf":
        raise UnsupportedContent(
            "PydanticAI agents take text, data, and image, audio, video, PDF or text "
            f"files; got {part_name(part)}"
        )
    if part.raw is not None:
        return BinaryContent(data=part.raw, media_type=kind)
    url = part.url or ""
    if major == "image":
        return ImageUrl(url, media_type=kind)
    if major == "audio":
        return AudioUrl(url, media_type=kind)
    if major == "video":
        return VideoUrl(url, media_type=kind)
    return DocumentUrl(url, media_type=kind)


def _question(requests: DeferredToolRequests) -> tuple[str, dict[str, Any]]:
    """The question of a deferred-tools pause: its text and its DataPart."""

    def described(call: ToolCallPart) -> dict[str, Any]:
        return {"id": call.tool_call_id, "name": call.tool_name, "arguments": _args(call)}

    lines = [
        f"Approve {c.tool_name}({c.args_as_json_str()})? Answer yes or no."
        for c in requests.approvals
    ]
    lines += [
        f"The agent needs the result of {c.tool_name}({c.args_as_json_str()})."
        for c in requests.calls
    ]
    data = {
        "type": DEFERRED_TOOLS,
        "approvals": [described(c) for c in requests.approvals],
        "calls": [described(c) for c in requests.calls],
    }
    return "\n".join(lines), data


def _results(requests: DeferredToolRequests, reply: Message) -> DeferredToolResults:
    """The results a reply gives to ``requests`` (see the module docstring)."""
    for part in reply.parts:
        if isinstance(part.data, dict) and ("approvals" in part.data or "calls" in part.data):
            approvals = {
                key: value if isinstance(value, bool) else ToolDenied(str(value))
                for key, value in dict(part.data.get("approvals") or {}).items()
            }
            return requests.build_results(
                approvals=approvals, calls=dict(part.data.get("calls") or {})
            )
    approved, why = approval(reply)
    verdict: bool | ToolDenied = True if approved else ToolDenied(why) if why else ToolDenied()
    return requests.build_results(
        approvals={c.tool_call_id: verdict for c in requests.approvals},
        calls={c.tool_call_id: reply.text.strip() for c in requests.calls},
    )
