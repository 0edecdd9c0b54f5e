"""Explicit cross-hop correlation: what every delegated message carries about its origin.

Theory of operation
-------------------
A delegation chain is a tree of tasks spread over agents and servers. Each outbound message
carries a :class:`Correlation` in ``message.metadata`` under :data:`CORRELATION_URI` (an A2A
extension of ours, declared on every orchestrated agent's card, listed in the message's
``extensions`` and activated with the ``A2A-Extensions`` header): the root's trace id, the
parent's task id, context id, agent name and (when known) base URL, the depth of the
receiving hop, and the hop path (agent names from the root to the receiver). Nothing is
inferred from timing or ids: a hop either carries a correlation or it is a root.

Every outbound call also carries a W3C ``traceparent`` header (version 00) whose trace id is
the correlation's, so tracing systems join the hops without knowing about A2A.

The receiving hop records what it knows in its *task* metadata, under the same URI, as a
:class:`HopRecord`: its correlation, its own agent name and URL, when it started, its children
(:class:`ChildRecord`: agent, task id, context id, state, depth, URL, times), the children a
cancel stopped, and the delegation error it failed with. Any hop's task therefore names its
parent (trace, parent task, parent URL) and its children (task ids and URLs), so the whole tree
can be rebuilt from any hop with GetTask alone (:mod:`orchestrator._tree`).

This module is pure: it builds, parses and checks correlations; the delegator does the I/O.
"""

from __future__ import annotations

import datetime as _dt
import re
import secrets
from typing import Any

import msgspec

from orchestrator._errors import CycleError, DepthLimitError

__all__ = (
    "CORRELATION_URI",
    "DEFAULT_MAX_DEPTH",
    "STARTS_AT_ONCE",
    "ChildRecord",
    "Correlation",
    "HopRecord",
    "check_incoming",
    "child_correlation",
    "from_metadata",
    "hop_record",
    "new_trace_id",
    "parse_traceparent",
    "root_correlation",
    "traceparent",
)

#: The extension URI under which a correlation travels in ``message.metadata`` (and a hop
#: record is kept in task metadata).
CORRELATION_URI = "urn:a2a-actors:ext:correlation:v1"
#: The parameter of the extension's card declaration by which an agent says that its task
#: exists and is WORKING before it acts: a stream's first event then names it at once, so a
#: parent can start and follow it with one SendStreamingMessage.
STARTS_AT_ONCE = "startsAtOnce"
#: The deepest hop accepted by default (the root is depth 0).
DEFAULT_MAX_DEPTH = 8

_HEX32 = re.compile(r"^[0-9a-f]{32}$")
_TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")


class Correlation(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """Where a hop sits in its delegation tree.

    Attributes:
        trace_id: 32 lower-case hex digits, the same on every hop of one tree.
        depth: 0 for the root, parent depth + 1 for each hop below it.
        path: Agent names from the root down to (and including) this hop.
        parent_task_id: The delegating task ("" at the root).
        parent_context_id: The delegating task's context ("" at the root).
        parent_agent: The delegating agent's name ("" at the root).
        parent_url: The base URL of the delegating agent's server, when it knows it.
    """

    trace_id: str
    depth: int = 0
    path: tuple[str, ...] = ()
    parent_task_id: str = ""
    parent_context_id: str = ""
    parent_agent: str = ""
    parent_url: str = ""

    def __post_init__(self) -> None:
        if not _HEX32.match(self.trace_id) or self.trace_id == "0" * 32:
            raise ValueError("traceId must be 32 lower-case hex digits, not all zero")
        if self.depth < 0:
            raise ValueError("depth must be >= 0")

    @property
    def agent(self) -> str:
        """The name of the hop this correlation describes (last element of ``path``)."""
        return self.path[-1] if self.path else ""

    def to_metadata(self) -> dict[str, Any]:
        """The JSON object stored under :data:`CORRELATION_URI`."""
        return _json_object(self)


class ChildRecord(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    """One delegation of a hop, as its parent records it (mutable while it runs).

    Attributes:
        agent: The child's agent name.
        task_id: The child's task id.
        context_id: The child's context id.
        state: The child's last known state (``TASK_STATE_...``).
        depth: The child's depth.
        url: The base URL of the child's server ("" for a local child: the parent's server).
        local: True when the child runs in the parent's own supervisor.
        started_at: When the parent started it.
        ended_at: When the parent saw it end (terminal), if it did.
    """

    agent: str
    task_id: str
    context_id: str = ""
    state: str = ""
    depth: int = 0
    url: str = ""
    local: bool = False
    started_at: _dt.datetime | None = None
    ended_at: _dt.datetime | None = None


class HopRecord(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    """What a hop keeps in its task metadata under :data:`CORRELATION_URI`.

    The correlation's fields (flattened), then this hop's own facts.

    Attributes:
        trace_id: As :class:`Correlation`.
        depth: As :class:`Correlation`.
        path: As :class:`Correlation`.
        parent_task_id: As :class:`Correlation`.
        parent_context_id: As :class:`Correlation`.
        parent_agent: As :class:`Correlation`.
        parent_url: As :class:`Correlation`.
        agent: This hop's agent name.
        url: This hop's server base URL, when known.
        started_at: When this hop's agent started.
        children: Every delegation this hop made, in the order they started.
        canceled_children: Task ids of the children this hop canceled (its cancel cascade).
        error: The delegation error this hop ended with (``DelegationError.to_metadata``).
    """

    trace_id: str
    depth: int = 0
    path: tuple[str, ...] = ()
    parent_task_id: str = ""
    parent_context_id: str = ""
    parent_agent: str = ""
    parent_url: str = ""
    agent: str = ""
    url: str = ""
    started_at: _dt.datetime | None = None
    children: list[ChildRecord] = msgspec.field(default_factory=list)
    canceled_children: list[str] = msgspec.field(default_factory=list)
    error: dict[str, Any] | None = None

    @classmethod
    def of(
        cls, correlation: Correlation, *, agent: str, url: str = "", started_at: _dt.datetime
    ) -> HopRecord:
        """A fresh record of a hop with ``correlation``."""
        return cls(
            trace_id=correlation.trace_id,
            depth=correlation.depth,
            path=correlation.path,
            parent_task_id=correlation.parent_task_id,
            parent_context_id=correlation.parent_context_id,
            parent_agent=correlation.parent_agent,
            parent_url=correlation.parent_url,
            agent=agent,
            url=url,
            started_at=started_at,
        )

    @property
    def correlation(self) -> Correlation:
        """The correlation part of the record."""
        return Correlation(
            trace_id=self.trace_id,
            depth=self.depth,
            path=self.path,
            parent_task_id=self.parent_task_id,
            parent_context_id=self.parent_context_id,
            parent_agent=self.parent_agent,
            parent_url=self.parent_url,
        )

    def to_metadata(self) -> dict[str, Any]:
        """The JSON object stored under :data:`CORRELATION_URI` in task metadata."""
        return _json_object(self)


def _json_object(value: msgspec.Struct) -> dict[str, Any]:
    """``value`` as plain JSON types (lists, not tuples), as metadata is once encoded."""
    result: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(value))
    return result


def new_trace_id() -> str:
    """A fresh random trace id (W3C format)."""
    return secrets.token_hex(16)


def root_correlation(agent: str, *, trace_id: str | None = None) -> Correlation:
    """The correlation of a task that nobody delegated to it."""
    return Correlation(trace_id=trace_id or new_trace_id(), depth=0, path=(agent,))


def from_metadata(metadata: dict[str, Any] | None) -> Correlation | None:
    """The correlation carried in message or task metadata, or None when absent.

    Raises:
        ValueError: The metadata holds a correlation that is malformed.
    """
    if not metadata or CORRELATION_URI not in metadata:
        return None
    try:
        return msgspec.convert(metadata[CORRELATION_URI], Correlation)
    except msgspec.ValidationError as exc:
        raise ValueError(f"malformed correlation metadata: {exc}") from None


def hop_record(metadata: dict[str, Any] | None) -> HopRecord | None:
    """The :class:`HopRecord` kept in a task's metadata, or None when absent or malformed."""
    if not metadata or CORRELATION_URI not in metadata:
        return None
    try:
        return msgspec.convert(metadata[CORRELATION_URI], HopRecord)
    except msgspec.ValidationError:
        return None


def child_correlation(
    parent: Correlation,
    *,
    parent_task_id: str,
    parent_context_id: str,
    child_agent: str,
    parent_url: str = "",
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> Correlation:
    """The correlation for a delegation from ``parent``'s hop to ``child_agent``.

    Raises:
        DepthLimitError: The child would be deeper than ``max_depth``.
        CycleError: ``child_agent`` already appears on the hop path.
    """
    path = (*parent.path, child_agent)
    if child_agent in parent.path:
        raise CycleError(
            f"delegation to {child_agent!r} refused: it would revisit it (path "
            + " -> ".join(path)
            + ")",
            origin_agent=parent.agent,
            origin_task_id=parent_task_id,
            path=path,
        )
    depth = parent.depth + 1
    if depth > max_depth:
        raise DepthLimitError(
            f"delegation to {child_agent!r} refused: it would reach depth {depth} "
            f"(max {max_depth})",
            origin_agent=parent.agent,
            origin_task_id=parent_task_id,
            path=path,
        )
    return Correlation(
        trace_id=parent.trace_id,
        depth=depth,
        path=path,
        parent_task_id=parent_task_id,
        parent_context_id=parent_context_id,
        parent_agent=parent.agent,
        parent_url=parent_url,
    )


def check_incoming(
    correlation: Correlation, agent: str, *, max_depth: int, task_id: str = ""
) -> None:
    """Refuse a hop that arrives too deep, or whose path already visited ``agent``.

    The path of an incoming correlation ends with the receiving agent's name as the sender
    knew it; an earlier occurrence of it is a cycle.

    Raises:
        DepthLimitError: ``correlation.depth`` exceeds ``max_depth``.
        CycleError: ``agent`` appears on the path before this hop.
    """
    if correlation.depth > max_depth:
        raise DepthLimitError(
            f"hop refused by {agent!r}: it arrived at depth {correlation.depth} (max {max_depth})",
            origin_agent=agent,
            origin_task_id=task_id,
            path=correlation.path,
        )
    earlier = correlation.path[:-1] if correlation.path[-1:] == (agent,) else correlation.path
    if agent in earlier:
        raise CycleError(
            f"hop refused by {agent!r}: it is already on the path " + " -> ".join(correlation.path),
            origin_agent=agent,
            origin_task_id=task_id,
            path=correlation.path,
        )


def traceparent(trace_id: str, *, span_id: str | None = None, sampled: bool = True) -> str:
    """A W3C ``traceparent`` header value for ``trace_id`` (a fresh span id by default)."""
    span = span_id or secrets.token_hex(8)
    return f"00-{trace_id}-{span}-{'01' if sampled else '00'}"


def parse_traceparent(value: str | None) -> tuple[str, str] | None:
    """``(trace_id, parent_span_id)`` from a ``traceparent`` header, or None if invalid."""
    if not value:
        return None
    m = _TRACEPARENT.match(value.strip().lower())
    if m is None or m.group(1) == "0" * 32 or m.group(2) == "0" * 16:
        return None
    return m.group(1), m.group(2)
