"""Explicit cross-hop correlation: what every delegated message carries about its origin.

Theory of operation
-------------------
A delegation chain is a tree of tasks spread over agents and servers. Each outbound message
carries a :class:`Correlation` in ``message.metadata`` under :data:`CORRELATION_URI` (an A2A
extension of ours, declared on every orchestrated agent's card and listed in the message's
``extensions``): the root's trace id, the parent's task id, context id and agent name, the
depth of the receiving hop, and the hop path (agent names from the root to the receiver).
Nothing is inferred from timing or ids: a hop either carries a correlation or it is a root.

Every outbound HTTP call also carries a W3C ``traceparent`` header (version 00) whose trace
id is the correlation's, so tracing systems join the hops without knowing about A2A.

This module is pure: it builds, parses and checks correlations; the delegator does the I/O.
"""

from __future__ import annotations

import re
import secrets
from typing import Any

import msgspec

from .errors import CycleError, DepthLimitError

__all__ = (
    "CORRELATION_URI",
    "DEFAULT_MAX_DEPTH",
    "Correlation",
    "check_incoming",
    "child_correlation",
    "from_metadata",
    "new_trace_id",
    "parse_traceparent",
    "root_correlation",
    "traceparent",
)

#: The extension URI under which a correlation travels in ``message.metadata``.
CORRELATION_URI = "urn:a2a-actors:ext:correlation:v1"
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
    """

    trace_id: str
    depth: int = 0
    path: tuple[str, ...] = ()
    parent_task_id: str = ""
    parent_context_id: str = ""
    parent_agent: str = ""

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
        result: dict[str, Any] = msgspec.to_builtins(self)
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


def child_correlation(
    parent: Correlation,
    *,
    parent_task_id: str,
    parent_context_id: str,
    child_agent: str,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> Correlation:
    """The correlation for a delegation from ``parent``'s hop to ``child_agent``.

    Raises:
        DepthLimitError: The child would be deeper than ``max_depth``.
        CycleError: ``child_agent`` already appears on the hop path.
    """
    if child_agent in parent.path:
        raise CycleError(
            f"delegation to {child_agent!r} would revisit it: path "
            + " -> ".join((*parent.path, child_agent)),
            path=(*parent.path, child_agent),
        )
    depth = parent.depth + 1
    if depth > max_depth:
        raise DepthLimitError(
            f"delegation to {child_agent!r} would reach depth {depth} (max {max_depth})",
            path=(*parent.path, child_agent),
        )
    return Correlation(
        trace_id=parent.trace_id,
        depth=depth,
        path=(*parent.path, child_agent),
        parent_task_id=parent_task_id,
        parent_context_id=parent_context_id,
        parent_agent=parent.agent,
    )


def check_incoming(correlation: Correlation, agent: str, *, max_depth: int) -> None:
    """Refuse a hop that arrives too deep, or whose path already visited ``agent``.

    The path of an incoming correlation ends with the receiving agent's name as the sender
    knew it; an earlier occurrence of it is a cycle.

    Raises:
        DepthLimitError: ``correlation.depth`` exceeds ``max_depth``.
        CycleError: ``agent`` appears on the path before this hop.
    """
    if correlation.depth > max_depth:
        raise DepthLimitError(
            f"hop arrived at depth {correlation.depth} (max {max_depth})", path=correlation.path
        )
    earlier = correlation.path[:-1] if correlation.path[-1:] == (agent,) else correlation.path
    if agent in earlier:
        raise CycleError(
            f"agent {agent!r} already on the path " + " -> ".join(correlation.path),
            path=correlation.path,
        )


def traceparent(trace_id: str, *, span_id: str | None = None, sampled: bool = True) -> str:
    """A W3C ``traceparent`` header value for ``trace_id``."""
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
