"""Scripted models for the demo: each framework's own test model, answering from what it was
sent, so the demo runs with no network and no API key.

* PydanticAI: its ``FunctionModel``, given a function of the messages.
* LangGraph: LangChain's ``GenericFakeChatModel``, made to take ``bind_tools`` and to answer
  from a function of the messages (:class:`StepChatModel`).
* OpenAI Agents: the SDK's own ``agents.testing.ScriptedModel``.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.chat_models import agenerate_from_stream
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool

__all__ = ["StepChatModel"]

#: What a :class:`StepChatModel` answers, given the conversation so far.
Step = Callable[[list[BaseMessage]], AIMessage]


class StepChatModel(GenericFakeChatModel):
    """A chat model whose answer is ``step(messages)``, streamed word by word, then its
    tool calls (``bind_tools`` is accepted: the step decides the calls)."""

    step: Step

    def __init__(self, step: Step) -> None:
        super().__init__(messages=iter(()), step=step)  # type: ignore[call-arg]  # pydantic

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        return self

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        message = self.step(messages)
        text = message.content if isinstance(message.content, str) else ""
        for word in re.split(r"(\s)", text):
            if word:
                yield ChatGenerationChunk(message=AIMessageChunk(content=word))
        calls = [
            tool_call_chunk(name=c["name"], args=json.dumps(c["args"]), id=c["id"], index=i)
            for i, c in enumerate(message.tool_calls)
        ]
        last = AIMessageChunk(content="", tool_call_chunks=calls, chunk_position="last")
        yield ChatGenerationChunk(message=last)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return await agenerate_from_stream(self._astream(messages, stop, run_manager, **kwargs))
