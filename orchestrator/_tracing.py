"""What a delegation adds to traces and counts: a CLIENT span and an outcome.

With tracing off (:func:`a2a_actors.runtime._tracing.active` is None) nothing here imports
OpenTelemetry and every function returns at once.

A delegation's span (``a2a.delegate <agent>``, kind CLIENT) is a child of the current span
(the delegating task's span) and is current while the child is started or resumed, so a
local child's task span is its child; a remote child's server continues it from the
``traceparent`` the calls carry (:func:`span_id_for` names it there). Attributes:
``a2a.delegation.target`` (the child agent), ``a2a.delegation.depth``, ``server.address``
(a remote child's base URL), ``a2a.task.id``/``a2a.context.id`` of the child once known,
``a2a.task.state`` at the end; status ERROR unless the outcome is ``completed``.

Outcomes (``a2a_delegations_total{outcome}``, the span's ``a2a.delegation.outcome``): the child's
final state (``completed``, ``failed``, ``canceled``, ``rejected``; a Message reply is
``completed``), ``input_required`` (handed to the agent as
:class:`~orchestrator._errors.InputRequired`; answering it continues as a new delegation),
``refused`` (depth or cycle: nothing was sent), ``error`` (could not be started or followed).
"""

from __future__ import annotations

import collections
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from a2a_actors.client._call_span import ClientSpan
from a2a_actors.runtime import _tracing as tracing
from a2a_actors.runtime._tracing import ATTRIBUTES

if TYPE_CHECKING:
    from orchestrator._correlation import Correlation

__all__ = ("DelegationSpan", "Outcomes", "root_trace_id", "span_id_for")

_OUTCOME = "a2a.delegation.outcome"


class Outcomes:
    """Delegations ended, by outcome (an orchestrator's; read by the server's metrics)."""

    __slots__ = ("_counts",)

    def __init__(self) -> None:
        self._counts: collections.Counter[str] = collections.Counter()

    def count(self, outcome: str) -> None:
        """Count one delegation that ended with ``outcome``."""
        self._counts[outcome] += 1

    def snapshot(self) -> Mapping[str, int]:
        """A copy of the counts."""
        return dict(self._counts)


def root_trace_id() -> str | None:
    """The current span's trace id (32 hex digits) when tracing is on and a span is
    current: a root hop without ``traceparent`` joins the trace it runs in."""
    if tracing.active() is None:
        return None
    from opentelemetry.trace import format_trace_id, get_current_span

    context = get_current_span().get_span_context()
    return format_trace_id(context.trace_id) if context.is_valid else None


def span_id_for(trace_id: str) -> str | None:
    """The current span's id (16 hex digits) when tracing is on and it belongs to
    ``trace_id``: the parent to name in an outgoing ``traceparent``."""
    if tracing.active() is None:
        return None
    from opentelemetry.trace import format_span_id, format_trace_id, get_current_span

    context = get_current_span().get_span_context()
    if not context.is_valid or format_trace_id(context.trace_id) != trace_id:
        return None
    return format_span_id(context.span_id)


class DelegationSpan:
    """The CLIENT span of one delegation (made by :meth:`open` only while tracing is on).

    Args:
        agent: The child agent's name.
        correlation: The child's correlation.
        url: The child server's base URL ("" for a local child).
    """

    __slots__ = ("_span",)

    def __init__(self, agent: str, correlation: Correlation, url: str) -> None:
        attributes: dict[str, str | int] = {
            ATTRIBUTES["target"]: agent,
            ATTRIBUTES["depth"]: correlation.depth,
        }
        if url:
            attributes[ATTRIBUTES["url"]] = url
        self._span = ClientSpan(f"a2a.delegate {agent}", attributes)

    @classmethod
    def open(cls, agent: str, correlation: Correlation, url: str) -> DelegationSpan | None:
        """The delegation's span, or None while tracing is off (one attribute read)."""
        if tracing.active() is None:
            return None
        return cls(agent, correlation, url)

    @property
    def span_id(self) -> str | None:
        """The span's id (16 hex digits), or None without a span."""
        return self._span.span_id

    def current(self) -> AbstractContextManager[None]:
        """While inside, the span is current (a local child started here is its child)."""
        return self._span.current()

    def child(self, task_id: str, context_id: str) -> None:
        """Note the child task the delegation created."""
        self._span.note({ATTRIBUTES["task_id"]: task_id, ATTRIBUTES["context_id"]: context_id})

    def end(self, outcome: str, state: str) -> None:
        """End the span with ``outcome`` (and the child's last ``state``, if known)."""
        self._span.note({_OUTCOME: outcome, ATTRIBUTES["state"]: state})
        self._span.end(None if outcome == "completed" else outcome)
