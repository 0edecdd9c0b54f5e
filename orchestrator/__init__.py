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

from orchestrator._child import ChildStream as ChildStream
from orchestrator._correlation import (
    CORRELATION_URI as CORRELATION_URI,
    ChildRecord as ChildRecord,
    Correlation as Correlation,
    HopRecord as HopRecord,
    child_correlation as child_correlation,
    from_metadata as from_metadata,
    traceparent as traceparent,
)
from orchestrator._delegator import (
    Orchestrator as Orchestrator,
    delegate as delegate,
    stream_delegate as stream_delegate,
)
from orchestrator._errors import (
    CycleError as CycleError,
    DelegationError as DelegationError,
    DepthLimitError as DepthLimitError,
    InputRequired as InputRequired,
)
from orchestrator._orchestrated import (
    orchestrated as orchestrated,
)
from orchestrator._outcome import DelegationResult as DelegationResult
from orchestrator._pipelines import (
    fan_out as fan_out,
    join_texts as join_texts,
    route as route,
    sequence as sequence,
)
from orchestrator._tree import (
    HopNode as HopNode,
    fetch_tree as fetch_tree,
    render_tree as render_tree,
    supervisor_tree as supervisor_tree,
)
from orchestrator.serving import serve as serve

__all__ = (
    "CORRELATION_URI",
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
    "child_correlation",
    "delegate",
    "fan_out",
    "fetch_tree",
    "from_metadata",
    "join_texts",
    "orchestrated",
    "render_tree",
    "route",
    "sequence",
    "serve",
    "stream_delegate",
    "supervisor_tree",
    "traceparent",
)
