"""The three agents of the demo, each built with its own framework.

* **planner** (PydanticAI): plans a day out; asks the researcher through ``remote_tool``.
* **researcher** (LangGraph, a ReAct graph): finds what to see; asks the forecaster through
  ``remote_tool`` (a LangChain tool in its ``ToolNode``).
* **forecaster** (OpenAI Agents): tells the weather.

On scripted models (:mod:`.scripted`) by default. With ``OPENAI_API_KEY`` set, the planner
and the forecaster use a real OpenAI model (``A2A_DEMO_MODEL``, default ``gpt-4o-mini``),
and so does the researcher when ``langchain-openai`` is installed.
"""

from __future__ import annotations

import os
from typing import Any

from agents import Agent as OpenAIAgent, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic_ai import Agent as PydanticAgent, ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.messages import ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from a2a_actors.frameworks import langgraph, openai_agents, pydantic_ai
from a2a_actors.runtime import Agent

from .scripted import StepChatModel

__all__ = ["WEATHER", "build_forecaster", "build_planner", "build_researcher", "real_model"]

WEATHER = "Sunny, 24 °C, a light breeze from the sea."


def real_model() -> str | None:
    """The OpenAI model to use, when ``OPENAI_API_KEY`` is set; None: scripted models."""
    if not os.environ.get("OPENAI_API_KEY"):
        return None
    return os.environ.get("A2A_DEMO_MODEL", "gpt-4o-mini")


# -- the forecaster: OpenAI Agents ----------------------------------------------------------


def build_forecaster() -> Agent:
    model: Any = real_model()
    if model is None:
        set_tracing_disabled(True)  # no key: nowhere to send the SDK's traces
        model = ScriptedModel([[assistant_message(WEATHER)]])
    forecaster = OpenAIAgent(
        name="forecaster",
        instructions="You tell tomorrow's weather for a city, in one short sentence.",
        handoff_description="Tells tomorrow's weather for a city",
        model=model,
    )
    return openai_agents.as_agent(forecaster)


# -- the researcher: LangGraph ------------------------------------------------------------


def _research(messages: list[BaseMessage]) -> AIMessage:
    """What the scripted researcher says: first it asks about the weather, then it answers."""
    asked = next(m for m in reversed(messages) if isinstance(m, HumanMessage))
    city = str(asked.text).rsplit(" in ", 1)[-1].strip(" ?.") or "the city"
    weather = [m for m in messages if isinstance(m, ToolMessage)]
    if not weather:
        arguments = {"message": f"Weather in {city} tomorrow?"}
        return AIMessage("", tool_calls=[{"name": "forecaster", "args": arguments, "id": "w1"}])
    return AIMessage(
        f"In {city}: the castle at dawn, lunch by the river, the old town at dusk. "
        f"Tomorrow: {weather[-1].content}"
    )


def _chat_model() -> Any:
    name = real_model()
    if name is not None:
        try:
            from langchain_openai import ChatOpenAI  # type: ignore[import-not-found]
        except ImportError:
            pass
        else:
            return ChatOpenAI(model=name)
    return StepChatModel(_research)


def build_researcher(forecaster_url: str) -> Agent:
    tools = [langgraph.remote_tool(forecaster_url, name="forecaster")]
    model = _chat_model().bind_tools(tools)

    async def think(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("think", think)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "think")
    graph.add_conditional_edges("think", tools_condition)
    graph.add_edge("tools", "think")
    return langgraph.as_agent(
        graph.compile(), name="researcher", description="Finds what to see in a city"
    )


# -- the planner: PydanticAI ---------------------------------------------------------------


def _plan(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """What the scripted planner says: first it asks the researcher, then it plans."""
    prompt = next(
        p.content if isinstance(p.content, str) else " ".join(map(str, p.content))
        for m in messages
        for p in m.parts
        if isinstance(p, UserPromptPart)
    )
    found = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
    if not found:
        city = prompt.rsplit(" in ", 1)[-1].strip(" ?.")
        question = {"message": f"What is worth seeing in {city}?"}
        return ModelResponse(parts=[ToolCallPart("researcher", question, tool_call_id="r1")])
    return ModelResponse(
        parts=[TextPart(f"Your day, planned. {found[-1].content} Enjoy it, and take a hat.")]
    )


async def _plan_stream(messages: list[ModelMessage], info: AgentInfo) -> Any:
    response = _plan(messages, info)
    for part in response.parts:
        if isinstance(part, TextPart):
            for word in part.content.split(" "):
                yield word + " "
        elif isinstance(part, ToolCallPart):
            delta = DeltaToolCall(
                part.tool_name, part.args_as_json_str(), tool_call_id=part.tool_call_id
            )
            yield {0: delta}


def build_planner(researcher_url: str) -> Agent:
    model: Any = real_model()
    model = f"openai:{model}" if model else FunctionModel(_plan, stream_function=_plan_stream)
    planner = PydanticAgent(
        model,
        name="planner",
        instructions="You plan a day out in a city. Ask the researcher what to see first.",
        tools=[pydantic_ai.remote_tool(researcher_url, name="researcher")],
    )
    return pydantic_ai.as_agent(planner, description="Plans a day out in a city")
