"""One task's AgentScope agent for :mod:`.agentscope`: a new agent of the served one's
configuration, on the conversation's state.

**One agent, many tasks.** An AgentScope ``Agent`` keeps its conversation in its ``state``
(``AgentState``) and changes it while it replies, and its permission engine and compression
tool are bound to it: tasks never share one. :class:`Template` builds, for each task, a new
``Agent`` of the served one's name, system prompt, model, middlewares, offloader and configs,
with a toolkit of the same tools in tool groups of its own (a reply registers its
structured-output and compression tools there) and a state of its own. The model, the tools
and the middlewares are shared, as AgentScope's own app shares them between the agents it
assembles for its sessions. The served agent is never changed.

**The conversation.** A new conversation starts from the served agent's state as
:class:`Template` found it (its permission mode and rules, activated tool groups, and any
messages it held), its ``session_id`` the ``contextId``. Each task stores (:func:`task_record`)
a snapshot of the state it ended with, all but the context, the reply and the read-file
cache (summary, permission, tool-group, plan and middleware contexts), then the messages
it added to ``state.context`` (``Msg.model_dump``)::

    [{"a2a-actors/agentscope-state": {"reset": false, "state": {...}}}, {msg}, {msg}]

:func:`restore` applies the earlier tasks' records in order: messages are appended, the
latest snapshot is the state. When a context compression replaced the context during a
task (the earlier messages are no longer its head), the snapshot says ``"reset": true`` and
is followed by the whole new context, which then replaces what came before. A tool call an
earlier task left without a result (it was cancelled, or still waits for an answer) is
given one, :data:`UNFINISHED`, for the next task's model.
"""

from __future__ import annotations

from typing import Any

from agentscope.agent import Agent as ScopeAgent
from agentscope.message import Msg, ToolCallState, ToolResultBlock, ToolResultState
from agentscope.middleware import MiddlewareBase
from agentscope.state import AgentState
from agentscope.tool import ToolGroup, Toolkit

__all__ = ("STATE_KEY", "UNFINISHED", "Template", "restore", "task_record")

#: The key of the state snapshot that starts each task's stored messages.
STATE_KEY = "a2a-actors/agentscope-state"
#: The result of a tool call an earlier task left without one.
UNFINISHED = "The tool call did not finish: its task was cancelled, or waits for an answer."
#: What a snapshot leaves out: what the context holds, what is per reply, and a cache.
_NOT_KEPT: Any = {
    "context": True,
    "reply_context": True,
    "session_id": True,
    "tool_context": {"read_file_cache"},
}
#: The hooks an Agent sorts its middlewares into (one private list each).
_HOOKS = (
    "reply",
    "reasoning",
    "check_permission",
    "acting",
    "model_call",
    "system_prompt",
    "compress_context",
)


class Template:
    """Builds each task's agent from the served ``agent`` (see the module docstring)."""

    def __init__(self, agent: ScopeAgent) -> None:
        self.agent = agent
        #: The state every conversation starts from: the agent's, as it is now.
        self.base = agent.state.model_copy(deep=True)

    def fresh(self, state: AgentState) -> ScopeAgent:
        """A new agent of the served one's configuration, on ``state``."""
        served = self.agent
        # An Agent keeps its system prompt and middlewares only privately, and has no copy:
        # read them, as a new agent of the same configuration needs them.
        prompt: str = served._system_prompt
        return ScopeAgent(
            name=served.name,
            system_prompt=prompt,
            model=served.model,
            toolkit=_toolkit(served.toolkit),
            middlewares=_middlewares(served),
            state=state,
            offloader=served.offloader,
            model_config=served.model_config,
            context_config=served.context_config,
            # Interrupted, the reply ends raising CancelledError (by default it swallows it).
            react_config=served.react_config.model_copy(
                update={"interruption_raise_cancelled_error": True}
            ),
            # The served agent already applied a deprecated buffer ratio to its context config.
            injection_config=served.injection_config.model_copy(
                update={"context_buffer_ratio": None}
            ),
        )


def restore(base: AgentState, items: list[Any], session: str, *, close: bool = True) -> AgentState:
    """``base`` with the stored ``items`` of a conversation applied in order, its session
    ``session`` (see the module docstring).

    With ``close``, a tool call left without a result (its task was cancelled, or still
    waits for an answer) gets one saying so: a model is never sent a call without one.
    """
    state = base.model_copy(deep=True, update={"session_id": session})
    for item in items:
        if isinstance(item, dict) and STATE_KEY in item:
            snapshot = item[STATE_KEY]
            context = [] if snapshot.get("reset") else state.context
            values = {**snapshot["state"], "context": context, "session_id": session}
            state = AgentState.model_validate(values)
        else:
            state.context.append(Msg.model_validate(item))
    for message in state.context if close else ():
        # A reply keeps its calls and their results in its one message.
        answered = {block.id for block in message.get_content_blocks("tool_result")}
        for call in message.get_content_blocks("tool_call"):
            if call.id not in answered:
                call.state = ToolCallState.FINISHED
                note = ToolResultBlock(id=call.id, name=call.name, output=UNFINISHED)
                note.state = ToolResultState.INTERRUPTED
                message.content.append(note)
    return state


def task_record(state: AgentState, start: list[str]) -> list[Any]:
    """A task's part of the conversation: the snapshot of ``state``, then the messages
    after ``start`` (the ids of the messages before the task), or the whole context when
    those are no longer its head."""
    reset = [m.id for m in state.context[: len(start)]] != start
    own = state.context if reset else state.context[len(start) :]
    snapshot = {"reset": reset, "state": state.model_dump(mode="json", exclude=_NOT_KEPT)}
    return [{STATE_KEY: snapshot}, *(m.model_dump(mode="json") for m in own)]


def _toolkit(toolkit: Toolkit) -> Toolkit:
    """A toolkit of the same tools, skills and MCP clients, in tool groups of its own. A
    subclass is shared as it is: it may hold more than we know how to copy."""
    if type(toolkit) is not Toolkit:
        return toolkit
    groups = {group.name: group for group in toolkit.tool_groups}
    basic = groups.pop("basic", None) or ToolGroup("basic")
    return Toolkit(
        tools=basic.tools,
        skills_or_loaders=basic.skills_or_loaders,
        mcps=basic.mcps,
        tool_groups=[
            ToolGroup(g.name, g.description, g.instructions, g.tools, g.skills_or_loaders, g.mcps)
            for g in groups.values()
        ],
        meta_tool_response_template=toolkit.meta_tool_response_template,
        skill_instruction_template=toolkit.skill_instruction_template,
    )


def _middlewares(agent: ScopeAgent) -> list[MiddlewareBase]:
    """The agent's middlewares, in an order that gives each hook the chain the agent has
    (it keeps one list per hook, each the middlewares given, filtered)."""
    found: dict[int, MiddlewareBase] = {}
    before: dict[int, set[int]] = {}
    for hook in _HOOKS:
        chain: list[MiddlewareBase] = getattr(agent, f"_{hook}_middlewares", [])
        for previous, middleware in zip([None, *chain], chain, strict=False):
            found.setdefault(id(middleware), middleware)
            before.setdefault(id(middleware), set())
            if previous is not None:
                before[id(middleware)].add(id(previous))
    ordered: list[MiddlewareBase] = []
    while found:  # the first found whose predecessors are all placed (the chains agree)
        key = next(k for k in found if not before[k] & found.keys())
        ordered.append(found.pop(key))
    return ordered
