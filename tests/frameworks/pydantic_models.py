"""A scripted PydanticAI model: PydanticAI's own ``FunctionModel``, fed one step per request.

A step is an async generator of what the model streams: text deltas (``str``) and tool calls
(``call(...)``). :class:`Script` plays its steps in order, one per model request, for both
streamed and plain runs, and records the messages each request received.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from pydantic_ai import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

__all__ = ["Script", "Step", "call", "say"]

Item = str | dict[int, DeltaToolCall]
Step = Callable[[list[ModelMessage], AgentInfo], AsyncIterator[Item]]


def say(*chunks: str) -> Step:
    """A step that streams ``chunks`` as text deltas."""

    async def step(_messages: list[ModelMessage], _info: AgentInfo) -> AsyncIterator[Item]:
        for chunk in chunks:
            yield chunk

    return step


def call(tool: str, arguments: dict[str, Any], call_id: str = "call-1") -> Step:
    """A step that calls ``tool`` with ``arguments``."""

    async def step(_messages: list[ModelMessage], _info: AgentInfo) -> AsyncIterator[Item]:
        yield {0: DeltaToolCall(name=tool, json_args=json.dumps(arguments), tool_call_id=call_id)}

    return step


class Script:
    """Plays ``steps``, one per model request; ``seen`` holds each request's messages."""

    def __init__(self, *steps: Step) -> None:
        self.steps = list(steps)
        self.seen: list[list[ModelMessage]] = []

    def model(self) -> FunctionModel:
        return FunctionModel(self._respond, stream_function=self._stream)

    def _next(self, messages: list[ModelMessage]) -> Step:
        self.seen.append(list(messages))
        if not self.steps:
            raise AssertionError("the script has no step left")
        return self.steps.pop(0)

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Item]:
        async for item in self._next(messages)(messages, info):
            yield item

    async def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        parts: list[TextPart | ToolCallPart] = []
        async for item in self._next(messages)(messages, info):
            if isinstance(item, str):
                parts.append(TextPart(item))
            else:
                for delta in item.values():
                    parts.append(
                        ToolCallPart(
                            delta.name or "", delta.json_args, tool_call_id=delta.tool_call_id or ""
                        )
                    )
        return ModelResponse(parts=parts)
