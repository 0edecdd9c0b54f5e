"""A scripted LangChain chat model and the ReAct graph the LangGraph tests serve.

:class:`ScriptedChatModel` is LangChain's own ``GenericFakeChatModel`` (one scripted
``AIMessage`` per model call, from its ``messages`` iterator), made to do what the stock one
does not: take ``bind_tools`` (the script decides the calls), and stream a step as a real
provider does, its text word by word, then its tool calls, then its usage. It records what
each call received (``seen``) and awaits ``pause(call, chunk)`` before each chunk, so that a
test can hold a model mid-answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
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
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import Field

__all__ = ["Pause", "ScriptedChatModel", "call", "react", "say", "scripted"]

#: ``await pause(call, chunk)`` runs before chunk ``chunk`` of model call ``call`` (from 0).
Pause = Callable[[int, int], Awaitable[None]]


def say(text: str, *, tokens: tuple[int, int] = (10, 2)) -> AIMessage:
    """A step that answers ``text`` (streamed word by word), reporting ``tokens`` used."""
    return AIMessage(text, usage_metadata=_usage(*tokens))


def call(
    tool: str, arguments: dict[str, Any], call_id: str, *, text: str = "", tokens: int = 5
) -> AIMessage:
    """A step that calls ``tool`` (after saying ``text``, if any)."""
    return AIMessage(
        text,
        tool_calls=[{"name": tool, "args": arguments, "id": call_id}],
        usage_metadata=_usage(tokens, 1),
    )


def _usage(given: int, taken: int) -> Any:
    return {"input_tokens": given, "output_tokens": taken, "total_tokens": given + taken}


class ScriptedChatModel(GenericFakeChatModel):
    """Plays its ``messages``, one per model call, streamed (see the module docstring)."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)
    pause: Pause | None = None

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        return self  # the script decides which tools are called

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        number = len(self.seen)
        self.seen.append(list(messages))
        step = next(self.messages, None)
        if step is None:
            raise AssertionError("the script has no step left")
        message = step if isinstance(step, AIMessage) else AIMessage(step)
        for index, chunk in enumerate(_chunks(message)):
            if self.pause is not None:
                await self.pause(number, index)
            # No on_llm_new_token here: BaseChatModel reports each chunk it is given.
            yield ChatGenerationChunk(message=chunk)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return await agenerate_from_stream(self._astream(messages, stop, run_manager, **kwargs))


def _chunks(message: AIMessage) -> list[AIMessageChunk]:
    """What a provider streams for ``message``: words, tool calls, usage."""
    text = message.content if isinstance(message.content, str) else ""
    chunks = [AIMessageChunk(content=word) for word in re.split(r"(\s)", text) if word]
    if message.tool_calls:
        calls = [
            tool_call_chunk(name=c["name"], args=json.dumps(c["args"]), id=c["id"], index=i)
            for i, c in enumerate(message.tool_calls)
        ]
        chunks.append(AIMessageChunk(content="", tool_call_chunks=calls))
    chunks.append(AIMessageChunk(content="", usage_metadata=message.usage_metadata))
    chunks[-1].chunk_position = "last"
    return chunks


def scripted(*steps: AIMessage | str, pause: Pause | None = None) -> ScriptedChatModel:
    """A model playing ``steps`` in order."""
    return ScriptedChatModel(messages=iter(steps), pause=pause)


def react(
    model: ScriptedChatModel,
    tools: Sequence[BaseTool] = (),
    *,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    handle_tool_errors: bool = False,
) -> CompiledStateGraph[MessagesState, None, MessagesState, MessagesState]:
    """The ReAct graph: the model, then its tool calls (a ``ToolNode``; a tool's error is a
    result when ``handle_tool_errors``), until it answers."""
    bound = model.bind_tools(list(tools))

    async def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(list(tools), handle_tool_errors=handle_tool_errors))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=checkpointer)
