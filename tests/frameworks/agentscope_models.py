"""A scripted AgentScope chat model: a ``ChatModelBase`` subclass that plays one step per
model call, streamed as AgentScope's own models stream (delta ``ChatResponse`` chunks that
the base class accumulates).

:func:`say` streams text deltas, and may await anything between two of them (an event the
test sets, a hold that never ends); :func:`call` and :func:`calls` call tools. Every call
reports usage of 10 input and 5 output tokens. :class:`Script` records the messages each
call received. No network, no API key.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any

from agentscope.credential import CredentialBase
from agentscope.formatter import FormatterBase
from agentscope.message import Msg, TextBlock, ToolCallBlock
from agentscope.model import ChatModelBase, ChatResponse, ChatUsage
from agentscope.tool import ToolChoice

__all__ = ["Script", "ScriptedModel", "Step", "call", "calls", "say"]

#: What :func:`say` streams: a text delta, or something to await before the next one.
Chunk = str | Callable[[], Awaitable[Any]]
#: A step: the delta chunks of one model call.
Step = Callable[[], AsyncIterator[ChatResponse]]

_ids = itertools.count(1)


def _usage() -> ChatUsage:
    return ChatUsage(input_tokens=10, output_tokens=5, time=0.0)


def say(*chunks: Chunk) -> Step:
    """A step that streams the text ``chunks`` as deltas of one text block, awaiting each
    callable chunk where it stands."""
    block = f"text-{next(_ids)}"

    async def step() -> AsyncIterator[ChatResponse]:
        for chunk in chunks:
            if isinstance(chunk, str):
                yield ChatResponse(content=[TextBlock(id=block, text=chunk)], is_last=False)
            else:
                await chunk()
        yield ChatResponse(content=[], is_last=False, usage=_usage())

    return step


def call(tool: str, arguments: dict[str, Any], call_id: str = "call-1", *, text: str = "") -> Step:
    """A step that calls ``tool`` with ``arguments`` (after saying ``text``, if any)."""
    return calls((tool, arguments, call_id), text=text)


def calls(*specs: tuple[str, dict[str, Any], str], text: str = "") -> Step:
    """A step that says ``text`` (if any), then calls several tools at once: each
    ``(tool, arguments, call_id)``, its arguments streamed in two deltas."""
    block = f"text-{next(_ids)}"

    async def step() -> AsyncIterator[ChatResponse]:
        if text:
            yield ChatResponse(content=[TextBlock(id=block, text=text)], is_last=False)
        for tool, arguments, call_id in specs:
            raw = json.dumps(arguments)
            half = len(raw) // 2
            for part in (raw[:half], raw[half:]):
                delta = ToolCallBlock(id=call_id, name=tool, input=part)
                yield ChatResponse(content=[delta], is_last=False)
        yield ChatResponse(content=[], is_last=False, usage=_usage())

    return step


class ScriptedFormatter(FormatterBase):
    """What the agent asks of a model's formatter: the media types it takes."""

    async def format(self, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        return []


class ScriptedModel(ChatModelBase):
    """Plays its script's steps, one per model call (an exception step raises it)."""

    def __init__(self, script: Script, input_types: list[str], context_size: int) -> None:
        super().__init__(
            credential=CredentialBase(),
            model="scripted",
            parameters=ChatModelBase.Parameters(),
            max_retries=0,
            context_size=context_size,
        )
        self.script = script
        self.formatter = ScriptedFormatter(input_types=input_types)

    async def _call_api(
        self,
        model_name: str,
        messages: list[Msg],
        tools: list[dict[str, Any]] | None = None,
        tool_choice: ToolChoice | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[ChatResponse, None]:
        step = self.script.next([m.model_copy(deep=True) for m in messages], tools or [])
        if isinstance(step, Exception):
            raise step
        return _generator(step())


async def _generator(chunks: AsyncIterator[ChatResponse]) -> AsyncGenerator[ChatResponse, None]:
    async for chunk in chunks:
        yield chunk


class Script:
    """The steps of a scripted model, one per model call; ``seen`` holds the messages each
    call received (the system prompt first), ``tools`` the names of the tools it was given.

    Args:
        steps: The steps, in order.
        input_types: What the model's formatter takes (``text/plain`` and media type
            patterns): images, audio and PDF by default.
        context_size: The model's context size in tokens (AgentScope compresses the context
            past 80% of it, counting 4 bytes a token).
    """

    def __init__(
        self,
        *steps: Step | Exception,
        input_types: tuple[str, ...] = ("text/plain", "image/*", "audio/*", "application/pdf"),
        context_size: int = 32768,
    ) -> None:
        self.steps = list(steps)
        self.seen: list[list[Msg]] = []
        self.tools: list[list[str]] = []
        self.model = ScriptedModel(self, list(input_types), context_size)

    def add(self, *steps: Step | Exception) -> None:
        """Append steps (for the calls of a later task)."""
        self.steps.extend(steps)

    def next(self, messages: list[Msg], tools: list[dict[str, Any]]) -> Step | Exception:
        self.seen.append(messages)
        self.tools.append([t["function"]["name"] for t in tools])
        if not self.steps:
            raise AssertionError("the script has no step left")
        return self.steps.pop(0)
