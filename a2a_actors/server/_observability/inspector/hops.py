"""The hop tree of a delegation, read for the inspector from the hops' own records.

A task an orchestrated agent ran keeps its hop record in its metadata (docs/orchestrator.md):
its children, each with its task id and, for a child on another server, that server's base
URL. :func:`read_tree` starts at a task the caller may see on this server and goes *down*
only, through the children each hop recorded: a local child (no URL, or the URL of a hop
that is itself read remotely) is read where its parent lives, a remote one with A2A
``GetTask`` on the server its parent recorded (:class:`PeerReader`). It never climbs
through ``parentUrl``: that URL came with the incoming message, from whoever sent it, and
the server must not fetch what a client names. A hop that cannot be read (its server is
gone or refuses, the peer is not allowed, the hop budget is spent) is shown as its parent
recorded it, marked ``reachable: false``.

What this server sends to a peer: one JSON-RPC ``GetTask`` (``historyLength`` 0) per hop,
with the headers configured for that peer (:attr:`InspectorOptions.peer_headers`) and
never the browser's credentials; no redirects are followed, an answer over
:data:`MAX_ANSWER` bytes or slower than ``peer_timeout`` fails the read, and peers can be
limited to an allow-list (:attr:`InspectorOptions.peers`).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, cast

import anyio
import httpx

from a2a_actors.protocol._errors import A2AError, InternalError
from a2a_actors.protocol._jsonrpc import decode_response, encode_request
from a2a_actors.protocol._models import Task
from a2a_actors.protocol._requests import GetTaskRequest
from a2a_actors.protocol._state import TERMINAL_STATES
from a2a_actors.server._config.inspector import InspectorOptions
from a2a_actors.server._observability.inspector.views import (
    ChildFacts,
    hop_facts,
    http_url,
    state_name,
)

__all__ = ("MAX_ANSWER", "PeerReader", "TaskReader", "read_tree")

#: Largest GetTask answer read from a peer.
MAX_ANSWER = 1 << 20

#: Reads a task: ``(base_url, task_id) -> Task``; ``base_url`` is ``""`` for this server.
TaskReader = Callable[[str, str], Awaitable[Task]]


class PeerReader:
    """Reads tasks on other A2A servers for the hop tree (see the module docstring).

    Args:
        options: Which peers, with which headers, how fast.
        client: The HTTP client (borrowed).
    """

    def __init__(self, options: InspectorOptions, client: httpx.AsyncClient) -> None:
        self._options = options
        self._client = client

    def allowed(self, url: str) -> bool:
        """Whether the hop tree may read tasks at base URL ``url``."""
        if not http_url(url):
            return False
        peers = self._options.peers
        return peers is None or url.rstrip("/") in peers

    async def get_task(self, url: str, task_id: str) -> Task:
        """GetTask ``task_id`` at base URL ``url``.

        Raises:
            A2AError: Not allowed, unreachable, too slow, too big, or the peer's own error.
        """
        if not self.allowed(url):
            raise InternalError(f"{url} is not an allowed peer")
        base = url.rstrip("/")
        body = encode_request(1, "GetTask", GetTaskRequest(id=task_id, history_length=0))
        headers = {
            "Content-Type": "application/json",
            "A2A-Version": "1.0",
            **self._options.peer_headers.get(base, {}),
        }
        try:
            with anyio.fail_after(self._options.peer_timeout):
                request = self._client.build_request(
                    "POST", base + "/", content=body, headers=headers
                )
                response = await self._client.send(request, stream=True, follow_redirects=False)
                try:
                    data = b""
                    async with contextlib.aclosing(_chunks(response)) as chunks:
                        async for chunk in chunks:
                            data += chunk
                            if len(data) > MAX_ANSWER:
                                raise InternalError(f"{base}: answer over {MAX_ANSWER} bytes")
                finally:
                    await response.aclose()
        except (TimeoutError, httpx.HTTPError) as exc:
            raise InternalError(f"{base}: {type(exc).__name__}") from None
        if response.status_code != 200:
            raise InternalError(f"{base}: HTTP {response.status_code}")
        task = decode_response(data, Task)
        if task is None or task.id != task_id:
            raise InternalError(f"{base}: not the task asked for")
        return task


def _chunks(response: httpx.Response) -> AsyncGenerator[bytes, None]:
    return cast("AsyncGenerator[bytes, None]", response.aiter_bytes())  # it is one


def _iso(moment: _dt.datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


class _Budget:
    __slots__ = ("left",)

    def __init__(self, hops: int) -> None:
        self.left = hops

    def take(self) -> bool:
        self.left -= 1
        return self.left >= 0


def _node(
    task: Task, url: str, agent: str, seen_as: ChildFacts | None, parent: dict[str, Any] | None
) -> dict[str, Any]:
    facts = hop_facts(task.metadata)
    state = task.status.state
    started = facts.started_at if facts is not None else None
    if started is None and seen_as is not None:
        started = seen_as.started_at
    ended = task.status.timestamp if state in TERMINAL_STATES else None
    depth = facts.depth if facts is not None else (seen_as.depth if seen_as is not None else 0)
    if facts is not None and facts.agent:
        agent = facts.agent
    elif seen_as is not None and seen_as.agent:
        agent = seen_as.agent
    node = _shape(
        agent=agent,
        task_id=task.id,
        context_id=task.context_id,
        state=state_name(state),
        depth=depth,
        url=url,
        started=started,
        ended=ended,
        reachable=True,
    )
    node["traceId"] = facts.trace_id if facts is not None else (parent or {}).get("traceId", "")
    return node


def _shape(
    *,
    agent: str,
    task_id: str,
    context_id: str,
    state: str,
    depth: int,
    url: str,
    started: _dt.datetime | None,
    ended: _dt.datetime | None,
    reachable: bool,
) -> dict[str, Any]:
    duration = None
    if started is not None:
        end = ended or _dt.datetime.now(_dt.UTC)
        duration = round(max(0.0, (end - started).total_seconds()) * 1000, 1)
    link = http_url(url)
    return {
        "agent": agent,
        "taskId": task_id,
        "contextId": context_id,
        "state": state,
        "depth": depth,
        "local": not url,
        "url": link,
        "inspectUrl": f"{link}/inspect#task={task_id}" if link else "",
        "startedAt": _iso(started),
        "endedAt": _iso(ended),
        "durationMs": duration,
        "reachable": reachable,
        "children": [],
    }


def _as_recorded(child: ChildFacts, url: str, parent: dict[str, Any]) -> dict[str, Any]:
    node = _shape(
        agent=child.agent or "?",
        task_id=child.task_id,
        context_id=child.context_id,
        state=state_name(child.state) if child.state else "unknown",
        depth=child.depth,
        url=url,
        started=child.started_at,
        ended=child.ended_at,
        reachable=False,
    )
    node["traceId"] = parent.get("traceId", "")
    return node


async def read_tree(root: Task, read: TaskReader, *, agent: str, max_hops: int) -> dict[str, Any]:
    """The hop tree below ``root`` (a task of this server), as JSON.

    Each node: ``agent``, ``taskId``, ``contextId``, ``state``, ``depth``, ``local`` (on this
    server), ``url`` (its server, when remote), ``inspectUrl``, ``startedAt``, ``endedAt``,
    ``durationMs``, ``reachable``, ``traceId``, ``children`` (in the order they started).
    ``agent`` names the hops whose record names none. At most ``max_hops`` hops are read.
    """
    budget = _Budget(max_hops - 1)

    async def down(
        task: Task, url: str, seen_as: ChildFacts | None, parent: dict[str, Any] | None
    ) -> dict[str, Any]:
        node = _node(task, url, agent, seen_as, parent)
        facts = hop_facts(task.metadata)
        children = [c for c in (facts.children if facts is not None else ()) if c.task_id]
        slots: list[dict[str, Any]] = [{} for _ in children]

        async def one(index: int, child: ChildFacts) -> None:
            child_url = child.url or url  # a local child lives where its parent does
            if not budget.take():
                slots[index] = _as_recorded(child, child_url, node)
                return
            try:
                found = await read(child_url, child.task_id)
            except A2AError:
                slots[index] = _as_recorded(child, child_url, node)
                return
            slots[index] = await down(found, child_url, child, node)

        async with anyio.create_task_group() as tg:
            for index, child in enumerate(children):
                tg.start_soon(one, index, child)
        node["children"] = slots
        return node

    return await down(root, "", None, None)
