"""The hop tree: rebuilt from task metadata alone, rendered as text or JSON.

Every orchestrated hop keeps a :class:`~orchestrator._correlation.HopRecord` in its task metadata:
its correlation (trace, parent task, parent URL, depth) and its children (agent, task id, URL,
state). :func:`fetch_tree` reads one hop with GetTask, climbs to the root through
``parentTaskId``/``parentUrl`` (unless told not to), then reads every child the same way,
concurrently, down to the leaves. Nothing is inferred from timing or ids: a hop is in the tree
because its parent recorded it.

A hop that cannot be read (its server is gone) is still shown, with what its parent
recorded about it. Durations come from the hop's own ``startedAt`` to its final status
timestamp (or now, for a hop still running). A hop whose agent keeps no record (one that is
not orchestrated, such as a plain agent served by ``a2a-actors serve``) is placed, and
timed from its start, as its parent recorded it: the parent's ``startedAt`` of a child is
when it sent the child its message.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import anyio

from a2a_actors.client import A2AClient
from a2a_actors.protocol._errors import A2AError
from a2a_actors.protocol._models import Task
from a2a_actors.protocol._state import TERMINAL_STATES
from a2a_actors.runtime import Supervisor
from orchestrator._correlation import ChildRecord, hop_record

__all__ = (
    "HopNode",
    "TaskReader",
    "build_tree",
    "fetch_tree",
    "render_tree",
    "supervisor_tree",
)

#: Reads a task: ``(base_url, task_id) -> Task``; ``base_url`` is "" for the local server.
TaskReader = Callable[[str, str], Awaitable[Task]]

_MAX_CLIMB = 64


@dataclasses.dataclass(slots=True)
class HopNode:
    """One hop of the tree.

    Attributes:
        agent: The hop's agent name.
        task_id: Its task id.
        context_id: Its context id.
        trace_id: The tree's trace id as the hop recorded it.
        parent_task_id: The delegating task ("" at the root).
        depth: 0 at the root.
        state: Its state (``TASK_STATE_...``), as read, or as its parent last recorded it.
        url: Its server's base URL, where known.
        started_at: When its agent started.
        ended_at: When it ended (its final status timestamp), if it did.
        reachable: False when the hop could not be read and is shown as its parent saw it.
        children: The hops it delegated to, in the order they started.
    """

    agent: str
    task_id: str
    context_id: str = ""
    trace_id: str = ""
    parent_task_id: str = ""
    depth: int = 0
    state: str = ""
    url: str = ""
    started_at: _dt.datetime | None = None
    ended_at: _dt.datetime | None = None
    reachable: bool = True
    children: list[HopNode] = dataclasses.field(default_factory=list)

    @property
    def duration_s(self) -> float | None:
        """Seconds from start to end (to now while running); None when unknown."""
        if self.started_at is None:
            return None
        end = self.ended_at or _dt.datetime.now(_dt.UTC)
        return max(0.0, (end - self.started_at).total_seconds())

    def walk(self) -> Iterator[HopNode]:
        """This hop and every hop below it, depth first, parents before children."""
        yield self
        for child in self.children:
            yield from child.walk()

    def to_json(self) -> dict[str, Any]:
        """The hop and its subtree as JSON: ``agent``, ``taskId``, ``contextId``,
        ``traceId``, ``parentTaskId``, ``depth``, ``state``, ``durationMs``, ``children``."""
        duration = self.duration_s
        return {
            "agent": self.agent,
            "taskId": self.task_id,
            "contextId": self.context_id,
            "traceId": self.trace_id,
            "parentTaskId": self.parent_task_id,
            "depth": self.depth,
            "state": self.state,
            "durationMs": None if duration is None else round(duration * 1000, 1),
            "children": [child.to_json() for child in self.children],
        }


def _node(task: Task, url: str, seen_as: ChildRecord | None, parent: HopNode | None) -> HopNode:
    record = hop_record(task.metadata)
    state = task.status.state
    node = HopNode(
        agent=record.agent if record is not None and record.agent else _agent(seen_as),
        task_id=task.id,
        context_id=task.context_id,
        state=state.value,
        url=record.url if record is not None and record.url else url,
        ended_at=task.status.timestamp if state in TERMINAL_STATES else None,
    )
    if record is not None:
        node.trace_id = record.trace_id
        node.parent_task_id = record.parent_task_id
        node.depth = record.depth
        node.started_at = record.started_at
    elif seen_as is not None and parent is not None:
        # An agent that keeps no hop record (not orchestrated): where it sits in the tree
        # is what its parent recorded.
        node.trace_id = parent.trace_id
        node.parent_task_id = parent.task_id
        node.depth = seen_as.depth
    if node.started_at is None and seen_as is not None:
        node.started_at = seen_as.started_at
    return node


def _agent(seen_as: ChildRecord | None) -> str:
    return seen_as.agent if seen_as is not None else "?"


def _unreachable(child: ChildRecord, parent: HopNode) -> HopNode:
    return HopNode(
        agent=child.agent,
        task_id=child.task_id,
        context_id=child.context_id,
        trace_id=parent.trace_id,
        parent_task_id=parent.task_id,
        depth=child.depth,
        state=child.state,
        url=child.url,
        started_at=child.started_at,
        ended_at=child.ended_at,
        reachable=False,
    )


async def build_tree(read: TaskReader, url: str, task_id: str, *, climb: bool = True) -> HopNode:
    """The tree containing ``task_id`` at ``url``, read with ``read`` (see :func:`fetch_tree`).

    Raises:
        A2AError: The first hop could not be read.
    """
    task = await read(url, task_id)
    if climb:
        for _ in range(_MAX_CLIMB):
            record = hop_record(task.metadata)
            if record is None or not record.parent_task_id or not record.parent_url:
                break
            try:
                parent = await read(record.parent_url, record.parent_task_id)
            except A2AError:
                break
            url, task = record.parent_url, parent
    return await _down(read, url, task, None, None)


async def _down(
    read: TaskReader, url: str, task: Task, seen_as: ChildRecord | None, parent: HopNode | None
) -> HopNode:
    node = _node(task, url, seen_as, parent)
    record = hop_record(task.metadata)
    children = [c for c in (record.children if record is not None else ()) if c.task_id]
    slots: list[HopNode | None] = [None] * len(children)

    async def one(index: int, child: ChildRecord) -> None:
        child_url = child.url or url
        try:
            child_task = await read(child_url, child.task_id)
        except A2AError:
            slots[index] = _unreachable(child, node)
            return
        slots[index] = await _down(read, child_url, child_task, child, node)

    async with anyio.create_task_group() as tg:
        for index, child in enumerate(children):
            tg.start_soon(one, index, child)
    node.children = [n for n in slots if n is not None]
    return node


async def fetch_tree(
    url: str,
    task_id: str,
    *,
    climb: bool = True,
    client: Callable[[str], Awaitable[A2AClient]] | None = None,
) -> HopNode:
    """Rebuild the hop tree of ``task_id``, a task of the agent at base URL ``url``.

    Args:
        url: The base URL of the server of ``task_id``.
        task_id: Any hop of the tree.
        climb: Go up to the root first (through each hop's ``parentUrl``); otherwise the
            tree starts at ``task_id``.
        client: Gives the client of a base URL (e.g. ``Orchestrator.client``, with its
            credentials and connection reuse); by default a client is discovered per URL
            and closed afterwards.

    Raises:
        A2AError: The first hop could not be read.
    """
    owned: dict[str, A2AClient] = {}
    locks: dict[str, anyio.Lock] = {}

    async def client_of(base: str) -> A2AClient:
        if client is not None:
            return await client(base)
        async with locks.setdefault(base, anyio.Lock()):  # one client per server
            found = owned.get(base)
            if found is None:
                found = owned[base] = await A2AClient.connect(base)
        return found

    async def read(base: str, tid: str) -> Task:
        return await (await client_of(base or url)).get_task(tid, history_length=0)

    try:
        return await build_tree(read, url, task_id, climb=climb)
    finally:
        with anyio.CancelScope(shield=True):
            for opened in owned.values():
                await opened.aclose()


async def supervisor_tree(
    supervisor: Supervisor, task_id: str, *, caller: str | None = None
) -> HopNode:
    """The hop tree below ``task_id`` among the tasks of one supervisor (local children).

    Remote children are shown as their parent recorded them.
    """

    async def read(base: str, tid: str) -> Task:
        if base:
            raise A2AError(f"{base} is not this supervisor")
        return await supervisor.get_task(tid, history_length=0, caller=caller)

    return await build_tree(read, "", task_id, climb=False)


def render_tree(node: HopNode) -> str:
    """The tree as text: one line per hop with agent, state, depth, duration and task id."""
    rows: list[tuple[str, HopNode]] = []

    def visit(hop: HopNode, prefix: str, branch: str) -> None:
        rows.append((prefix + branch, hop))
        below = prefix + ("    " if branch == "└── " else "│   " if branch else "")
        for i, child in enumerate(hop.children):
            visit(child, below, "└── " if i == len(hop.children) - 1 else "├── ")

    visit(node, "", "")
    width = max(len(lead) + len(hop.agent) for lead, hop in rows)
    lines = []
    for lead, hop in rows:
        label = (lead + hop.agent).ljust(width)
        state = hop.state.removeprefix("TASK_STATE_")
        duration = hop.duration_s
        took = f"{duration:6.2f} s" if duration is not None else "     ? s"
        unseen = "  (as its parent last saw it)" if not hop.reachable else ""
        lines.append(f"{label}  {state:<14} depth {hop.depth}  {took}  task {hop.task_id}{unseen}")
    return "\n".join(lines)
