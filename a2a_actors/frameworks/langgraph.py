"""LangGraph graphs served as a2a-actors agents, and A2A agents as LangChain tools.

``as_agent(graph, name=...)`` serves a compiled LangGraph graph that keeps its conversation
under ``messages`` with the ``add_messages`` reducer (``MessagesState``); ``remote_tool(target)``
gives a LangChain ``BaseTool`` (for a ``ToolNode``) that calls an A2A agent. Needs the
``langgraph`` extra.

How a run maps onto its task (the rules every bridge shares are in :mod:`._turn`):

=====================================  =====================================================
LangGraph                              the task
=====================================  =====================================================
``astream``, ``"messages"`` mode: the  chunks of the ``answer`` artifact, as produced (two
text of every model's AI message       AI messages' texts parted by a blank line); a model
chunks                                 tagged ``nostream``: its final text, whole
``"updates"`` mode: an AI message's    WORKING with a ``tool_call`` / ``tool_result``
``tool_calls``, a ``ToolMessage``      DataPart (``"error": true`` for ``status="error"``)
``interrupt(value)`` in a node or      INPUT_REQUIRED, one question per interrupt: a ``str``
tool                                   is the question; another value is also a DataPart
                                       (its JSON), the question being its ``"question"``,
                                       ``"message"`` or ``"description"``, else its JSON
the reply                              ``Command(resume=...)``: its DataPart's value, else
                                       its text (``{interrupt id: value}`` for several)
``thread_id``                          the ``contextId``; a graph compiled without a
                                       checkpointer runs on a copy with an ``InMemorySaver``
the thread's messages                  each task stores its new ones (``messages_to_dict``,
                                       :mod:`._conversation`); a thread the checkpointer
                                       lacks (a restart, another node) is seeded from them
a cancel, a failure                    the node or tool in flight is stopped; a tool call
                                       left without a result gets an error ``ToolMessage``
AI messages' ``usage_metadata``        ``metadata.usage`` (``requests``: those reporting)
text, data, file parts                 a ``HumanMessage``: text, or standard content blocks
                                       (``image`` / ``audio`` / ``video`` / ``file``, with
                                       ``base64`` or ``url``, and ``mime_type``)
=====================================  =====================================================

Without a checkpointer of the graph's own, threads live in memory: after a restart the
conversation is rebuilt from the task store, but a pause is not. So a task answered after
the server restarted while it waited resumes with ``Command(resume=...)`` when the graph has
a durable checkpointer, and goes on with the reply as the next human message when it has
none (the interrupted tool call answered by a note that it did not run). Tasks of one
context share one thread: run them one at a time.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import AsyncGenerator, Sequence
from typing import Any, cast

import anyio
import msgspec

from a2a_actors.frameworks._extras import require

require("langgraph", extra="langgraph", bridge="a2a_actors.frameworks.langgraph")

from langchain_core.messages import (  # noqa: E402  (after the extra's check)
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    messages_from_dict,
    messages_to_dict,
)
from langchain_core.runnables import RunnableConfig  # noqa: E402
from langchain_core.tools import BaseTool, StructuredTool  # noqa: E402
from langgraph.checkpoint.base import BaseCheckpointSaver  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.constants import END, START  # noqa: E402
from langgraph.pregel import Pregel  # noqa: E402
from langgraph.types import Command, Interrupt, StateSnapshot, StateUpdate  # noqa: E402
from pydantic_core import to_jsonable_python  # noqa: E402

from a2a_actors.frameworks._agent import framework_agent  # noqa: E402
from a2a_actors.frameworks._parts import UnsupportedContent, data_text, media_type, part_name  # noqa: E402
from a2a_actors.frameworks._remote import RemoteCall  # noqa: E402
from a2a_actors.frameworks._turn import Turn, Usage  # noqa: E402
from a2a_actors.protocol._card import AgentSkill  # noqa: E402
from a2a_actors.protocol._models import Message, Part  # noqa: E402
from a2a_actors.runtime import Agent  # noqa: E402

__all__ = ("as_agent", "remote_tool")

FRAMEWORK = "langgraph"
_INPUTS = ("text/plain", "application/json", "image/*", "audio/*", "video/*", "application/pdf")
#: What a tool call left without a result is answered with.
_UNFINISHED = "The tool call did not finish: the run was cancelled or failed."
_NOT_RUN = "The tool call did not finish: it was waiting for input when the server restarted."
#: How long a run cut short may take to stop, then to be tidied (shielded from cancel).
_SETTLE_S = 5.0

Graph = Pregel[Any, Any, Any, Any]


def as_agent(
    graph: Graph,
    *,
    name: str,
    description: str | None = None,
    skills: Sequence[AgentSkill] = (),
    recursion_limit: int = 25,
) -> Agent:
    """Serve ``graph`` (compiled, over ``messages``) as an a2a-actors agent: an orchestrated
    :class:`~a2a_actors.runtime.Agent` (:mod:`._agent`) with the card's ``name``,
    ``description`` and ``skills``. A graph without a checkpointer runs on a copy with an
    ``InMemorySaver``. A run may take ``recursion_limit`` supersteps (a model call and a tool
    round are one each; LangGraph's own default is in the thousands); past it the task fails
    with ``GraphRecursionError``."""
    saver: InMemorySaver | None = None
    if not isinstance(graph.checkpointer, BaseCheckpointSaver):
        saver = InMemorySaver()
        graph = graph.copy(update={"checkpointer": saver})

    async def run(turn: Turn) -> None:
        await _Run(graph, turn, saver, recursion_limit).run()

    return framework_agent(
        run,
        framework=FRAMEWORK,
        name=name,
        description=description or "",
        skills=skills,
        input_modes=_INPUTS,
    )


def remote_tool(
    target: str, *, name: str | None = None, description: str | None = None
) -> BaseTool:
    """A LangChain tool that sends its ``message`` argument to the A2A agent ``target`` (a
    URL or a registry name) and returns its answer (see :mod:`._remote`); async only, as
    graphs run it (``ainvoke``)."""
    call = RemoteCall(target, name=name, description=description)

    async def send(message: str) -> str:  # a function: ToolNode reads its type hints
        return await call(message)

    return StructuredTool.from_function(
        coroutine=send, name=call.name, description=call.description
    )


class _Run:
    """One task's run of the graph: its thread, and what it reported so far."""

    def __init__(self, graph: Graph, turn: Turn, saver: InMemorySaver | None, limit: int) -> None:
        self.graph, self.turn, self.saver = graph, turn, saver
        self.config: RunnableConfig = {"configurable": {"thread_id": turn.ctx.context_id}}
        self.config["recursion_limit"] = limit
        self.before: set[str | None] = set()  # the ids of the thread's messages of other tasks
        self.reported: set[str | None] = set()  # the ids of the messages reported

    async def run(self) -> None:
        turn = self.turn
        earlier = messages_from_dict(await turn.earlier())
        paused = turn.paused()
        own = messages_from_dict(paused[0]) if paused is not None else []
        state = paused[1] if paused is not None and isinstance(paused[1], dict) else {}
        snapshot = await self.graph.aget_state(self.config)
        pending = {i.id: i for i in snapshot.interrupts}
        command: Command[Any] | dict[str, list[BaseMessage]]
        if state.get("asked") in pending:  # restarted, and the checkpointer kept the pause
            self.before = _ids(_messages(snapshot)) - _ids(own)
            answers = {**(state.get("answers") or {}), state["asked"]: _value(turn.ctx.message)}
            command = await self._answer(list(pending.values()), answers)
        else:
            human = HumanMessage(content=_content(turn.ctx.parts))
            await self._prepare(snapshot, earlier, own)
            command = {"messages": [human]}
        while True:
            await self._stream(command)
            snapshot = await self.graph.aget_state(self.config)
            if not snapshot.interrupts:
                break
            command = await self._answer(list(snapshot.interrupts), {})
        new = [m for m in _messages(snapshot) if m.id not in self.before]
        turn.add_usage(_usage(new))
        if not turn.answered and new and isinstance(new[-1], AIMessage):
            await turn.text(str(new[-1].text))  # a graph whose answer was never streamed
        await turn.finish(messages_to_dict(new))

    async def _prepare(
        self, snapshot: StateSnapshot, earlier: list[BaseMessage], own: list[BaseMessage]
    ) -> None:
        """Make the thread hold the conversation before this task's input (and this task's
        own messages, if it was restarted while it waited). Our in-memory thread copies the
        task store's conversation: rebuilt when it differs (a restart, another node, a task
        that stored nothing). The graph's own checkpointer is the conversation: seeded when
        it holds nothing (or lost this task's pause), else tidied (:meth:`_repair`)."""
        held = _messages(snapshot)
        past, mine = _closed(earlier, _UNFINISHED), _closed(own, _NOT_RUN)
        if self.saver is not None:
            rebuild = [m.id for m in held] != [m.id for m in past] or bool(mine)
        else:
            rebuild = (not held and bool(past)) or bool(mine)
        if not rebuild:
            await self._repair(_UNFINISHED, snapshot)
        else:
            if self.saver is not None and held:
                await self.saver.adelete_thread(self.turn.ctx.context_id)
            if past or mine:
                await self._update([StateUpdate({"messages": past + mine}, START)])
        self.before = _ids(_messages(await self.graph.aget_state(self.config))) - _ids(mine)

    async def _stream(self, command: Command[Any] | dict[str, list[BaseMessage]]) -> None:
        """Run the graph until it ends or is interrupted, reporting what it does; cancelled,
        return once the node or tool in flight has stopped, and the thread is tidied."""
        # LangGraph runs nodes as asyncio tasks; cancelled, its stream cancels them and awaits
        # them, a wait an anyio cancel scope cuts short (the node stopping after CANCELED): so
        # the stream is read in an asyncio task of its own, cancelled once, awaited shielded.
        reader = asyncio.ensure_future(self._read(command))  # context copied: remote tools
        try:
            await asyncio.wait([reader])
            reader.result()
        except BaseException:
            reader.cancel()
            with anyio.move_on_after(_SETTLE_S, shield=True):
                await asyncio.wait([reader])
                # Not done while asking (a server stopping keeps the question for after its
                # restart): the next run on the thread tidies what a cancel there left.
                with contextlib.suppress(Exception):  # the error that ended the run matters more
                    await self._repair(_UNFINISHED)
            raise

    async def _read(self, command: Command[Any] | dict[str, list[BaseMessage]]) -> None:
        # astream is an async generator (typed as an iterator): closing it is what stops the
        # node or tool in flight; leaving the loop alone would not.
        events = cast(
            "AsyncGenerator[tuple[str, Any], None]",
            self.graph.astream(command, self.config, stream_mode=["messages", "updates"]),
        )
        async with contextlib.aclosing(events) as stream:
            async for mode, data in stream:
                if mode == "messages":
                    await self._text(data[0])
                elif isinstance(data, dict):  # interrupts are read from the state afterwards
                    for message in _found([v for k, v in data.items() if k != "__interrupt__"]):
                        if message.id is None or message.id not in self.before | self.reported:
                            self.reported.add(message.id)  # a node may return old ones too
                            await self._report(message)

    async def _text(self, message: object) -> None:
        if isinstance(message, AIMessage) and (text := str(message.text)):  # chunks included
            await self.turn.text(text, source=message.id)

    async def _report(self, message: BaseMessage) -> None:
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                await self.turn.tool_call(
                    name=call["name"], call_id=call.get("id") or "", arguments=call["args"]
                )
        elif isinstance(message, ToolMessage):
            await self.turn.tool_result(
                name=message.name or "",
                call_id=message.tool_call_id,
                result=to_jsonable_python(message.content, fallback=str),
                error=message.status == "error",
            )

    async def _answer(self, interrupts: list[Interrupt], answers: dict[str, Any]) -> Command[Any]:
        """Ask each interrupt's question not answered yet; the command that resumes."""
        for pending in (i for i in interrupts if i.id not in answers):
            question, data = _question(pending.value)
            snapshot = await self.graph.aget_state(self.config)
            own = [m for m in _messages(snapshot) if m.id not in self.before]
            reply = await self.turn.ask(
                question,
                data=data,
                messages=messages_to_dict(own),
                paused={"asked": pending.id, "answers": answers},
            )
            answers[pending.id] = _value(reply)
        if len(interrupts) == 1:
            return Command(resume=answers[interrupts[0].id])
        return Command(resume={i.id: answers[i.id] for i in interrupts})

    async def _repair(self, note: str, snapshot: StateSnapshot | None = None) -> None:
        """Answer the thread's tool calls left without a result (by ``note``) and drop its
        pending nodes and interrupts: what a run cut short leaves, which would otherwise
        linger under the next run's input (and make a provider refuse the conversation)."""
        snapshot = snapshot or await self.graph.aget_state(self.config)
        held = _messages(snapshot)
        missing = [m for m in _closed(held, note) if m.id not in _ids(held)]
        if missing or snapshot.next:
            await self._update([StateUpdate({"messages": missing}, START)] if missing else [])

    async def _update(self, steps: list[StateUpdate]) -> None:
        """Apply ``steps`` as input (the start node writes them), then drop the nodes they
        (or anything before) left pending: the thread waits for new input."""
        supersteps = [*([step] for step in steps), [StateUpdate(None, END)]]
        await self.graph.abulk_update_state(self.config, supersteps)


def _messages(snapshot: StateSnapshot) -> list[BaseMessage]:
    values = snapshot.values if isinstance(snapshot.values, dict) else {}
    return [m for m in values.get("messages") or () if isinstance(m, BaseMessage)]


def _ids(messages: list[BaseMessage]) -> set[str | None]:
    return {m.id for m in messages}


def _found(update: object) -> list[BaseMessage]:
    """The messages in nodes' updates (dicts, commands, lists of them...)."""
    if isinstance(update, Command):
        update = update.update
    if isinstance(update, dict):
        update = update.get("messages")
    if isinstance(update, list | tuple):
        return [m for item in update for m in _found(item)]
    return [update] if isinstance(update, BaseMessage) else []


def _closed(messages: list[BaseMessage], note: str) -> list[BaseMessage]:
    """``messages`` with an error ToolMessage saying ``note`` right after each AI message
    whose tool call has no result (its id derived from the call's: made twice, it is one)."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    closed: list[BaseMessage] = []
    for message in messages:
        closed.append(message)
        if isinstance(message, AIMessage):
            closed += [
                ToolMessage(
                    note, tool_call_id=c["id"], name=c["name"], status="error", id=f"{c['id']}-"
                )
                for c in message.tool_calls
                if c.get("id") and c["id"] not in answered
            ]
    return closed


def _usage(messages: list[BaseMessage]) -> Usage:
    total = Usage()
    for message in messages:
        if isinstance(message, AIMessage) and (used := message.usage_metadata):
            i, o, t = used["input_tokens"], used["output_tokens"], used["total_tokens"]
            total += Usage(input_tokens=i, output_tokens=o, total_tokens=t, requests=1)
    return total


def _question(value: object) -> tuple[str, object]:
    """An interrupt's question: its text, and its DataPart (UNSET for a plain text)."""
    if isinstance(value, str):
        return value, msgspec.UNSET
    data = to_jsonable_python(value, fallback=str)
    if isinstance(data, dict):
        for key in ("question", "message", "description"):
            if isinstance(data.get(key), str):
                return data[key], data
    return json.dumps(data, ensure_ascii=False), data


def _value(reply: Message) -> object:
    """What a reply resumes an interrupt with: its data part's value, else its text."""
    data = [part.data for part in reply.parts if part.kind == "data"]
    return data[0] if data else reply.text


def _content(parts: Sequence[Part]) -> str | list[str | dict[str, Any]]:
    """A message's parts as a ``HumanMessage``'s content: its text when they are all text
    (or data), else content blocks (see the module docstring)."""
    blocks = [_block(part) for part in parts]
    if all(b["type"] == "text" for b in blocks):
        return "\n".join(b["text"] for b in blocks)
    return list(blocks)


def _block(part: Part) -> dict[str, Any]:
    """One part as a standard content block.

    Raises:
        UnsupportedContent: A file part whose media type the bridge does not take.
    """
    if part.text is not None or part.kind == "data":
        return {"type": "text", "text": part.text if part.text is not None else data_text(part)}
    kind = media_type(part)
    major = kind.split("/", 1)[0]
    if major not in ("image", "audio", "video", "text") and kind != "application/pdf":
        raise UnsupportedContent(
            "LangGraph agents take text, data, and image, audio, video, PDF or text files; "
            f"got {part_name(part)}"
        )
    block: dict[str, Any] = {"type": major if major in ("image", "audio", "video") else "file"}
    block["mime_type"] = kind
    if part.raw is not None:
        block["base64"] = base64.b64encode(part.raw).decode("ascii")
    else:
        block["url"] = part.url
    if part.filename:
        block["extras"] = {"filename": part.filename}
    return block
