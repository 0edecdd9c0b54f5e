"""``orchestrated(agent)``: an agent that takes part in correlated delegation trees.

The wrapper does, around every task of the agent:

1. **before the handler runs**: read the incoming correlation from the message metadata
   (:data:`~orchestrator._correlation.CORRELATION_URI`). A malformed one, a hop deeper than the
   maximum depth, or a hop path that already visited this agent is refused: the task ends REJECTED
   with the error's text (and the error as JSON in the status message and task metadata), and the
   handler never runs. Without a correlation the task is a root; its trace id comes from an incoming
   W3C ``traceparent`` header when there is one.
2. record the hop (:class:`~orchestrator._correlation.HopRecord`) in the task metadata and start the
   task (``ctx.start()``: committed, WORKING, so its Task snapshot is the first event of a
   stream at once and a parent learns the child's id before the handler does anything),
   then run the handler; delegations made by it append their children to that record;
3. **when the handler raises a** :class:`~orchestrator._errors.DelegationError` (a child failed and
   the agent did not handle it), fail the task with that error relayed by this agent, so the origin
   and relay path travel up;
4. **when the task ends** in any way, cancel the children still outstanding (questions
   handed to the agent and never answered): the cancel cascade's second half (the first is
   in :class:`~orchestrator._child.ChildStream`).

Served by any a2a-actors server (``a2a-actors serve``, ``a2a_actors.server._serve``,
``create_app``) without a delegator in ``supervisor_options``, an orchestrated agent gets a
fresh :class:`~orchestrator._delegator.Orchestrator` of its own for as long as it is served
(``open_delegator``, see :mod:`a2a_actors.server._delegation`): delegation needs no extra code.

The card declares the correlation extension (``capabilities.extensions``), not required:
any A2A client can still call the agent; it is then simply a root.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING, Any
from uuid import uuid4

from a2a_actors.protocol._card import AgentExtension
from a2a_actors.protocol._models import Message, Part, Role, utc_now
from a2a_actors.protocol._state import TERMINAL_STATES
from a2a_actors.runtime import Agent, TaskContext, as_agent
from orchestrator._correlation import (
    CORRELATION_URI,
    DEFAULT_MAX_DEPTH,
    STARTS_AT_ONCE,
    HopRecord,
    check_incoming,
    from_metadata,
    parse_traceparent,
    root_correlation,
)
from orchestrator._errors import DelegationError
from orchestrator._hop import Hop, HopHost
from orchestrator._tracing import root_trace_id

if TYPE_CHECKING:
    from orchestrator._delegator import Orchestrator

__all__ = ("CORRELATION_EXTENSION", "error_message", "is_orchestrated", "orchestrated")

logger = logging.getLogger("orchestrator")

#: The card declaration of the correlation extension.
CORRELATION_EXTENSION = AgentExtension(
    uri=CORRELATION_URI,
    description=(
        "Cross-hop correlation of a2a-actors delegation: message.metadata[<this URI>] carries "
        "traceId, depth, path, parentTaskId, parentContextId, parentAgent and parentUrl; "
        "task.metadata[<this URI>] records the hop and its children."
    ),
    # Said explicitly (rather than implied by the URI): the agent's task exists and is
    # WORKING before the agent acts, so a stream's first event names it at once.
    params={STARTS_AT_ONCE: True},
)

_DEFAULT_CANCEL_TIMEOUT = 10.0


def error_message(error: DelegationError) -> Message:
    """An agent status message stating ``error``, with the error as JSON in its metadata."""
    return Message(
        message_id=uuid4().hex,
        role=Role.AGENT,
        parts=(Part(text=str(error)),),
        metadata={CORRELATION_URI: {"error": error.to_metadata()}},
    )


class _Orchestrated:
    """The handler of an orchestrated agent (see the module docstring)."""

    __slots__ = ("inner", "max_depth")

    def __init__(self, inner: Agent, max_depth: int | None) -> None:
        self.inner = inner
        self.max_depth = max_depth

    def open_delegator(self, public_url: str) -> Orchestrator:
        """The delegator a server gives this agent when it is configured with none (see
        :mod:`a2a_actors.server._delegation`): a fresh Orchestrator advertising
        ``public_url``; the server closes it when it stops serving."""
        # Imported here: the orchestrator reaches local agents through orchestrated().
        from orchestrator._delegator import Orchestrator

        if self.max_depth is None:
            return Orchestrator(public_url=public_url)
        return Orchestrator(public_url=public_url, max_depth=self.max_depth)

    async def __call__(self, ctx: TaskContext) -> object:
        host = ctx.delegator if isinstance(ctx.delegator, HopHost) else None
        if self.max_depth is not None:
            max_depth = self.max_depth
        else:
            max_depth = host.max_depth if host is not None else DEFAULT_MAX_DEPTH
        name = ctx.agent.name
        url = host.url_of(ctx.supervisor) if host is not None else ""
        started = utc_now()
        try:
            incoming = from_metadata(ctx.metadata)
        except ValueError as exc:
            await ctx.reject(error_message(DelegationError(str(exc), origin_agent=name)))
            return None
        if incoming is not None:
            try:
                check_incoming(incoming, name, max_depth=max_depth, task_id=ctx.task_id)
            except DelegationError as refusal:
                refusal.state = "TASK_STATE_REJECTED"
                record = HopRecord.of(incoming, agent=name, url=url, started_at=started)
                record.error = refusal.to_metadata()
                await ctx.update_task_metadata({CORRELATION_URI: record.to_metadata()})
                await ctx.reject(error_message(refusal))
                return None
            correlation = incoming
        else:
            parsed = parse_traceparent(ctx.headers.get("traceparent"))
            correlation = root_correlation(name, trace_id=parsed[0] if parsed else root_trace_id())
        hop = Hop(ctx, HopRecord.of(correlation, agent=name, url=url, started_at=started))
        if host is not None:
            hop = host.hops.open(hop)
        timeout = host.cancel_timeout if host is not None else _DEFAULT_CANCEL_TIMEOUT
        try:
            await hop.save()  # still provisional: the commit below stores it in one write
            await ctx.start()  # visible at once: the parent learns the id from the 1st event
            try:
                return await self.inner.handler(ctx)
            except DelegationError as error:
                if ctx.task.status.state in TERMINAL_STATES:
                    raise
                relayed = error if error.origin_task_id == ctx.task_id else error.relayed_by(name)
                hop.record.error = relayed.to_metadata()
                await hop.save()
                await ctx.fail(error_message(relayed))
                return None
        finally:
            try:
                await hop.cancel_outstanding(timeout=timeout)
            finally:
                if host is not None:
                    host.hops.close(hop)


def orchestrated(
    agent_or_fn: object,
    *,
    name: str | None = None,
    description: str | None = None,
    max_depth: int | None = None,
) -> Agent:
    """Wrap an agent so its tasks join delegation trees (see the module docstring).

    Args:
        agent_or_fn: Anything :func:`~a2a_actors.runtime.as_agent` accepts. An agent that
            is already orchestrated is re-wrapped around its original handler.
        name: Replaces the agent's name (the name hop paths and cycle checks use).
        description: Replaces the agent's description.
        max_depth: The deepest incoming hop accepted; by default the supervisor's
            :class:`~orchestrator._delegator.Orchestrator` says (8 without one).

    Returns:
        An :class:`~a2a_actors.runtime.Agent` whose card declares the correlation extension.
    """
    base = as_agent(agent_or_fn)
    handler: Any = base.handler
    inner = handler.inner if isinstance(handler, _Orchestrated) else base
    if isinstance(handler, _Orchestrated) and max_depth is None:
        max_depth = handler.max_depth
    extensions = base.extensions
    if all(e.uri != CORRELATION_URI for e in extensions):
        extensions = (*extensions, CORRELATION_EXTENSION)
    return dataclasses.replace(
        base,
        handler=_Orchestrated(inner, max_depth),
        name=name if name is not None else base.name,
        description=description if description is not None else base.description,
        extensions=extensions,
    )


def is_orchestrated(agent: Agent) -> bool:
    """Whether ``agent`` was made by :func:`orchestrated`."""
    return isinstance(agent.handler, _Orchestrated)
