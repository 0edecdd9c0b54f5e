"""A conversation across the tasks of one ``contextId``, kept in the task store.

Each task of a framework agent keeps, in its private data (``ctx.private``: stored with the
task, never shown to a client) under :data:`KEY`, the messages it added to the
conversation, in the framework's own JSON form (tool calls and results, and system prompts
where the framework keeps them in its history)::

    {"a2a-actors/conversation": {"framework": "pydantic-ai", "turn": 3,
                                 "messages": [...], "paused": null}}

The next task of the context reads every earlier record of the context from the store
(``ctx.supervisor.context_records``, as the task's caller) and continues from their
messages, in turn order. So the conversation lives wherever the tasks do: in memory for the
memory store, on disk with SQLite (it survives a restart), on NATS in a cluster (it
continues on any node). A task that starts a new context (the client sent no
``contextId``) reads nothing. Records of another framework are skipped; a context's tasks
deleted by retention take their messages with them.

``paused`` holds a framework's pause state while the task waits for input (see
:meth:`~._turn.Turn.ask`), so that a run restarted after a server restart continues from it.
"""

from __future__ import annotations

from typing import Any

import msgspec

from a2a_actors.runtime import TaskContext

__all__ = ("KEY", "earlier", "own", "record")

#: Task metadata key of a task's conversation record.
KEY = "a2a-actors/conversation"


class _Record(msgspec.Struct, frozen=True):
    framework: str
    turn: int
    messages: list[Any]
    paused: Any = None


def _read(private: dict[str, Any] | None, framework: str) -> _Record | None:
    raw = (private or {}).get(KEY)
    if raw is None:
        return None
    try:
        found = msgspec.convert(raw, _Record)
    except msgspec.ValidationError:
        return None  # written by another version of the agent: no conversation to continue
    return found if found.framework == framework else None


async def earlier(ctx: TaskContext, framework: str) -> tuple[int, list[Any]]:
    """The turn this task is, and the messages of the context's earlier tasks, oldest
    first (``(0, [])`` for a new context)."""
    if not ctx.message.context_id:
        return 0, []
    records: list[tuple[int, str, list[Any]]] = []
    for stored in await ctx.supervisor.context_records(ctx.context_id, caller=ctx.caller):
        found = _read(stored.private, framework) if stored.task.id != ctx.task_id else None
        if found is not None:
            records.append((found.turn, stored.task.id, found.messages))
    records.sort(key=lambda r: (r[0], r[1]))
    messages = [m for _, _, chunk in records for m in chunk]
    turn = records[-1][0] + 1 if records else 0
    return turn, messages


def record(framework: str, turn: int, messages: list[Any], paused: object) -> dict[str, Any]:
    """The private values that store ``messages`` (one task's part of the conversation,
    its turn ``turn``) and ``paused``."""
    return {KEY: {"framework": framework, "turn": turn, "messages": messages, "paused": paused}}


def own(ctx: TaskContext, framework: str) -> tuple[int, list[Any], Any] | None:
    """This task's stored turn, messages and pause state, if it stored any."""
    found = _read(ctx.private, framework)
    return (found.turn, found.messages, found.paused) if found is not None else None
