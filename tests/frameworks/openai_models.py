"""A scripted OpenAI Agents model: the SDK's own ``agents.testing.ScriptedModel``, one step
per model call.

:func:`say` streams text deltas, and may await anything between two of them (an event the
test sets, a hold that never ends); :func:`call` calls a tool (the SDK streams it). Every
call reports usage of 10 input and 5 output tokens. :class:`Script` records the input
items each call received. No network, no API key.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from agents import Usage
from agents.items import TResponseStreamEvent
from agents.testing import ModelCall, ModelStep, ScriptedModel, function_call
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseCreatedEvent,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseTextDeltaEvent,
    ResponseUsage,
)
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

__all__ = ["Script", "call", "calls", "say"]

#: What :func:`say` streams: a text delta, or something to await before the next one.
Chunk = str | Callable[[], Awaitable[Any]]

_ids = itertools.count(1)
_USAGE = Usage(requests=1, input_tokens=10, output_tokens=5, total_tokens=15)


def _response(rid: str, output: list[ResponseOutputMessage], status: str) -> Response:
    usage = ResponseUsage(
        input_tokens=10,
        output_tokens=5,
        total_tokens=15,
        input_tokens_details=InputTokensDetails(cached_tokens=0, cache_write_tokens=0),
        output_tokens_details=OutputTokensDetails(reasoning_tokens=0),
    )
    return Response.model_validate(
        {
            "id": rid,
            "created_at": 0,
            "model": "scripted",
            "object": "response",
            "output": [o.model_dump() for o in output],
            "tool_choice": "auto",
            "tools": [],
            "parallel_tool_calls": False,
            "status": status,
            "usage": usage.model_dump() if status == "completed" else None,
        }
    )


def say(*chunks: Chunk) -> ModelStep:
    """A step that streams the text ``chunks`` as deltas of one assistant message, awaiting
    each callable chunk where it stands (a plain run gets the whole message)."""
    n = next(_ids)
    rid = f"resp-{n}"
    text = "".join(c for c in chunks if isinstance(c, str))
    message = ResponseOutputMessage(
        type="message",
        id=f"msg-{n}",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[], logprobs=[])],
    )

    async def events(_call: ModelCall) -> AsyncIterator[TResponseStreamEvent]:
        numbers = itertools.count()
        yield ResponseCreatedEvent(
            type="response.created",
            sequence_number=next(numbers),
            response=_response(rid, [], "in_progress"),
        )
        yield ResponseOutputItemAddedEvent(
            type="response.output_item.added",
            output_index=0,
            sequence_number=next(numbers),
            item=message.model_copy(update={"content": [], "status": "in_progress"}),
        )
        for chunk in chunks:
            if not isinstance(chunk, str):
                await chunk()
                continue
            yield ResponseTextDeltaEvent(
                type="response.output_text.delta",
                item_id=message.id,
                output_index=0,
                content_index=0,
                delta=chunk,
                logprobs=[],
                sequence_number=next(numbers),
            )
        yield ResponseOutputItemDoneEvent(
            type="response.output_item.done",
            output_index=0,
            sequence_number=next(numbers),
            item=message,
        )
        yield ResponseCompletedEvent(
            type="response.completed",
            sequence_number=next(numbers),
            response=_response(rid, [message], "completed"),
        )

    # ``output`` serves a run that is not streamed (``Runner.run``).
    return ModelStep.stream(events, output=[message], usage=_USAGE)


def call(tool: str, arguments: dict[str, Any], call_id: str = "call-1") -> ModelStep:
    """A step that calls ``tool`` with ``arguments``."""
    return calls((tool, arguments, call_id))


def calls(*specs: tuple[str, dict[str, Any], str]) -> ModelStep:
    """A step that calls several tools at once: each ``(tool, arguments, call_id)``."""
    output = [function_call(tool, arguments, call_id=call_id) for tool, arguments, call_id in specs]
    return ModelStep(output=output, usage=_USAGE)


class Script:
    """Plays ``steps``, one per model call (an exception step raises it)."""

    def __init__(self, *steps: ModelStep | Exception) -> None:
        self.model = ScriptedModel(steps)

    def add(self, *steps: ModelStep | Exception) -> None:
        """Append steps (for the calls of a later task)."""
        self.model.extend(steps)

    @property
    def seen(self) -> list[list[Any]]:
        """The input items each model call received, oldest call first."""
        return [list(c.input) if isinstance(c.input, list) else [c.input] for c in self.model.calls]
