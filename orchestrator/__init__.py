"""Delegation across agents with explicit cross-hop correlation (see docs/orchestrator.md).

``ctx.delegate(target, message)`` reaches a local agent (a child task actor in the same
supervisor) or a remote A2A agent; every hop carries the trace id, its parent task and its
depth (the correlation extension), the parent records its children, cancelling a task
cancels its whole subtree, failures name their origin and relay path, and a child's
questions are relayed up the chain. Pipelines (:func:`sequence`, :func:`fan_out`,
:func:`route`) compose agents into agents.

This package sits above every ``a2a_actors`` layer: it may import all of them and nothing
imports it.
"""

from __future__ import annotations

from orchestrator.child import ChildStream as ChildStream
from orchestrator.correlation import (
    CORRELATION_URI as CORRELATION_URI,
    DEFAULT_MAX_DEPTH as DEFAULT_MAX_DEPTH,
    ChildRecord as ChildRecord,
    Correlation as Correlation,
    HopRecord as HopRecord,
    check_incoming as check_incoming,
    child_correlation as child_correlation,
    from_metadata as from_metadata,
    hop_record as hop_record,
    parse_traceparent as parse_traceparent,
    root_correlation as root_correlation,
    traceparent as traceparent,
)
from orchestrator.delegator import (
    Orchestrator as Orchestrator,
    delegate as delegate,
    stream_delegate as stream_delegate,
)
from orchestrator.errors import (
    CycleError as CycleError,
    DelegationError as DelegationError,
    DepthLimitError as DepthLimitError,
    InputRequired as InputRequired,
)
from orchestrator.orchestrated import (
    CORRELATION_EXTENSION as CORRELATION_EXTENSION,
    is_orchestrated as is_orchestrated,
    orchestrated as orchestrated,
)
from orchestrator.outcome import DelegationResult as DelegationResult
from orchestrator.pipelines import (
    fan_out as fan_out,
    join_texts as join_texts,
    route as route,
    sequence as sequence,
)
from orchestrator.serving import serve as serve
from orchestrator.tree import (
    HopNode as HopNode,
    fetch_tree as fetch_tree,
    render_tree as render_tree,
    supervisor_tree as supervisor_tree,
)

__all__ = (
    "CORRELATION_EXTENSION",
    "CORRELATION_URI",
    "DEFAULT_MAX_DEPTH",
    "ChildRecord",
    "ChildStream",
    "Correlation",
    "CycleError",
    "DelegationError",
    "DelegationResult",
    "DepthLimitError",
    "HopNode",
    "HopRecord",
    "InputRequired",
    "Orchestrator",
    "check_incoming",
    "child_correlation",
    "delegate",
    "fan_out",
    "fetch_tree",
    "from_metadata",
    "hop_record",
    "is_orchestrated",
    "join_texts",
    "orchestrated",
    "parse_traceparent",
    "render_tree",
    "root_correlation",
    "route",
    "sequence",
    "serve",
    "stream_delegate",
    "supervisor_tree",
    "traceparent",
)
