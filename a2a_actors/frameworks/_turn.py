"""What one run of a framework agent reports to its task: the :class:`Turn`.

Every bridge maps its framework's events onto the same few calls, so a client sees the same
task whatever framework made it:

=============================  ==============================================================
the framework                  the task
=============================  ==============================================================
a text delta of the answer     :meth:`Turn.text`: a chunk of the one ``answer`` artifact
                               (the first creates it, the next ones ``append``), published
                               at once; the texts of two model messages are parted by a
                               blank line
a non-text final output        :meth:`Turn.output`: the ``answer`` artifact, one DataPart
a tool call, a tool result     :meth:`Turn.tool_call` / :meth:`Turn.tool_result`: WORKING with
                               one DataPart (:data:`TOOL_CALL` / :data:`TOOL_RESULT`), never
                               in the answer
a pause for a human            :meth:`Turn.ask`: INPUT_REQUIRED with the question (text, and
                               the framework's request as a DataPart); the reply resumes it
                               (:func:`approval` reads a yes or a no)
the end of the run             :meth:`Turn.finish`: ``lastChunk`` closes the answer (an empty
                               chunk when it was streamed), usage and the conversation are
                               stored in the task metadata
=============================  ==============================================================

Task metadata written here: :data:`USAGE_KEY` (token usage, summed over the task's runs);
the conversation record of :mod:`._conversation` is kept privately (``ctx.private``), never
shown to clients.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from uuid import uuid4

import msgspec

from a2a_actors.frameworks import _conversation
from a2a_actors.protocol._models import Message, Part, Role
from a2a_actors.runtime import TaskContext

__all__ = ("ANSWER", "TOOL_CALL", "TOOL_RESULT", "USAGE_KEY", "Turn", "Usage", "approval")

#: The name of the artifact that holds the agent's answer.
ANSWER = "answer"
#: ``type`` of the DataPart of a tool call: ``{"type", "id", "name", "arguments"}``.
TOOL_CALL = "tool_call"
#: ``type`` of the DataPart of a tool result: ``{"type", "id", "name", "result"}``, and
#: ``"error": true`` when the tool failed.
TOOL_RESULT = "tool_result"
#: Task metadata key of the token usage: ``{"inputTokens", "outputTokens", "totalTokens",
#: "requests"}``.
USAGE_KEY = "usage"
#: Replies that approve (compared lower-cased, without a final "." or "!").
YES = frozenset({"yes", "y", "approve", "approved", "ok", "true"})


class Usage(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """Token usage of a run (what every framework reports, named alike)."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    requests: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            requests=self.requests + other.requests,
        )

    def __sub__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens - other.input_tokens,
            output_tokens=self.output_tokens - other.output_tokens,
            total_tokens=self.total_tokens - other.total_tokens,
            requests=self.requests - other.requests,
        )


def _agent_message(*parts: Part) -> Message:
    return Message(message_id=uuid4().hex, role=Role.AGENT, parts=parts)


class Turn:
    """One task's run of a framework agent, as the task sees it (see the module docstring).

    Args:
        ctx: The task's context.
        framework: The framework's name (``"pydantic-ai"``...), for the conversation record.
    """

    __slots__ = ("_answer", "_closed", "_number", "_source", "_usage", "ctx", "framework")

    def __init__(self, ctx: TaskContext, framework: str) -> None:
        self.ctx = ctx
        self.framework = framework
        self._answer: str | None = None
        self._closed = False
        self._usage = Usage()
        self._number = 0
        self._source: object = None

    async def earlier(self) -> list[Any]:
        """The conversation before this task: the messages of the context's earlier tasks,
        oldest first (see :mod:`._conversation`)."""
        self._number, messages = await _conversation.earlier(self.ctx, self.framework)
        return messages

    @property
    def answered(self) -> bool:
        """Whether anything of the answer was emitted."""
        return self._answer is not None

    async def text(self, delta: str, *, source: object = None) -> None:
        """Emit ``delta`` as the next chunk of the answer (nothing when it is empty).

        ``source`` names the model message the delta belongs to (its id, or any value
        that differs from one message to the next): when it changes, a blank line parts the
        two messages' texts (text a model writes before a tool call, then its answer).
        """
        if not delta:
            return
        if source is not None:
            if self._source is not None and source != self._source and self._answer is not None:
                delta = "\n\n" + delta
            self._source = source
        if self._answer is None:
            self._answer = await self.ctx.artifact(delta, name=ANSWER)
        else:
            await self.ctx.artifact(delta, artifact_id=self._answer, append=True)

    async def output(self, value: object) -> None:
        """Emit a complete final output: text as a chunk of the answer, anything else (a
        JSON-able value, such as a structured output's ``model_dump``) as one DataPart."""
        if isinstance(value, str):
            await self.text(value)
            return
        part = Part(data=value)
        if self._answer is None:
            self._answer = await self.ctx.artifact(part, name=ANSWER)
        else:
            await self.ctx.artifact(part, artifact_id=self._answer, append=True)

    async def tool_call(self, *, name: str, call_id: str, arguments: object) -> None:
        """Report a tool call (WORKING, one DataPart)."""
        data = {"type": TOOL_CALL, "id": call_id, "name": name, "arguments": arguments}
        await self.ctx.update(_agent_message(Part(data=data)))

    async def tool_result(
        self, *, name: str, call_id: str, result: object, error: bool = False
    ) -> None:
        """Report a tool's result (WORKING, one DataPart)."""
        data: dict[str, Any] = {"type": TOOL_RESULT, "id": call_id, "name": name}
        data["result"] = result
        if error:
            data["error"] = True
        await self.ctx.update(_agent_message(Part(data=data)))

    async def ask(
        self,
        question: str,
        *,
        data: object = msgspec.UNSET,
        messages: list[Any] | None = None,
        paused: object = None,
    ) -> Message:
        """Ask the client (INPUT_REQUIRED) and return the reply.

        ``data``, when given, follows the question as a DataPart (what the framework asks,
        machine-readable). ``messages`` (this task's conversation so far) and ``paused``
        (the framework's own pause state, JSON) are stored first, so that a run restarted
        after a server restart can continue from them (:meth:`paused`); so is the usage
        counted so far (in the task metadata), which a restart would otherwise lose.
        """
        if messages is not None:
            await self.save(messages, paused=paused)
        await self.store_usage()
        parts = [Part(text=question)]
        if data is not msgspec.UNSET:
            parts.append(Part(data=data))
        return await self.ctx.ask(_agent_message(*parts))

    def add_usage(self, usage: Usage) -> None:
        """Count ``usage`` (stored by :meth:`finish`)."""
        self._usage = self._usage + usage

    async def save(self, messages: list[Any], *, paused: object = None) -> None:
        """Store this task's conversation so far (and the pause state), privately."""
        record = _conversation.record(self.framework, self._number, messages, paused)
        await self.ctx.update_private(record)

    def paused(self) -> tuple[list[Any], Any] | None:
        """This task's stored messages and pause state when the run was restarted
        (``ctx.resumed``: the server restarted while the task waited for input), else None.
        Call it after :meth:`earlier`."""
        if not self.ctx.resumed:
            return None
        found = _conversation.own(self.ctx, self.framework)
        if found is None:
            return None
        self._number, messages, paused = found
        return messages, paused

    async def finish(self, messages: list[Any] | None) -> None:
        """Close the answer, store usage (in the task metadata) and this task's
        conversation (``messages``, privately: see :mod:`._conversation`).

        The task itself is left running: the handler's return completes it.
        """
        if self._answer is not None and not self._closed:
            await self.ctx.artifact((), artifact_id=self._answer, append=True, last_chunk=True)
        self._closed = True
        if messages is not None:
            record = _conversation.record(self.framework, self._number, messages, None)
            await self.ctx.update_private(record)
        await self.store_usage()

    async def store_usage(self) -> None:
        """Store the usage counted so far (before a question, or of a run that failed);
        nothing when there is none."""
        values = self._counted()
        if values:
            await self.ctx.update_task_metadata(values)

    def _counted(self) -> dict[str, Any]:
        """The metadata value of the usage (summed with what the task stored), once."""
        if self._usage == Usage():
            return {}
        total = _usage_of(self.ctx.task_metadata) + self._usage
        self._usage = Usage()
        return {USAGE_KEY: msgspec.to_builtins(total)}


def approval(reply: Message) -> tuple[bool, str | None]:
    """Whether ``reply`` approves what was asked, and the text of a refusal.

    A DataPart ``{"approve": bool}`` (or ``"approved"``, with an optional ``"message"``)
    says it; otherwise the text: one of :data:`YES` approves, anything else refuses, and a
    refusal other than a plain "no" is its own message (None: the framework's default).
    """
    for part in reply.parts:
        if isinstance(part.data, dict):
            for key in ("approve", "approved"):
                if key in part.data:
                    message = part.data.get("message")
                    return part.data[key] is True, message if isinstance(message, str) else None
    text = reply.text.strip()
    word = text.lower().rstrip(".!")
    if word in YES:
        return True, None
    return False, text if text and word != "no" else None


def _usage_of(metadata: Mapping[str, Any] | None) -> Usage:
    """The usage stored in ``metadata`` (zero when none, or unreadable)."""
    raw = (metadata or {}).get(USAGE_KEY)
    try:
        return msgspec.convert(raw, Usage) if raw is not None else Usage()
    except msgspec.ValidationError:
        return Usage()
