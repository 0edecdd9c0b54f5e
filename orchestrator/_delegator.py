"""The Orchestrator: the runtime's Delegator, reaching local and remote agents with correlation.

``Supervisor(agent, delegator=Orchestrator())`` makes ``ctx.delegate(target, message)``
work in that supervisor's agents (``orchestrator.serve`` sets this up). A *target* is:

* an :class:`~a2a_actors.runtime.Agent`, an async function of a context, or an object with
  ``async handle(ctx)``: a **local** child, run as a task actor of the *same* supervisor
  (the ``agent=`` override; no HTTP), wrapped by :func:`~orchestrator._orchestrated.orchestrated`;
* an ``http(s)://`` base URL: a **remote** agent, discovered once (its card names it) and
  called through one :class:`~a2a_actors.client.A2AClient` per base URL, all sharing one
  ``httpx.AsyncClient`` (connection reuse);
* a :class:`~a2a_actors.client.RemoteAgent` or an :class:`~a2a_actors.client.A2AClient`:
  a remote agent through that client (its credentials, its timeouts);
* any other string: looked up with the ``resolver`` (a mapping or a function of the name),
  whose answer is one of the above, else in the ``registry`` (an agent's name, see
  :mod:`a2a_actors.client._registry.registry`).

:mod:`._targets` turns a target into a link to the child agent (and keeps the remote ones).

Each delegation is a :class:`~orchestrator._child.ChildStream`: see :mod:`orchestrator._child` for
what happens on completion, failure, input-required and cancellation. :func:`delegate` and
:func:`stream_delegate` are the typed spellings of ``ctx.delegate`` (whose return type the runtime
can only call ``object``).

Lifetime: the orchestrator owns the ``httpx.AsyncClient`` it creates (closed by
:meth:`Orchestrator.aclose` or ``async with``); one passed as ``http_client`` stays yours.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any
from uuid import uuid4

import httpx

from a2a_actors.client import A2AClient, Timeouts
from a2a_actors.client._registry.registry import Registry
from a2a_actors.client.middleware import ClientMiddleware
from a2a_actors.protocol._errors import UnsupportedOperationError
from a2a_actors.protocol._models import Message, Part, Role, Task, utc_now
from a2a_actors.runtime import TaskContext, TaskRunner
from orchestrator._child import ChildStream
from orchestrator._correlation import (
    CORRELATION_URI,
    DEFAULT_MAX_DEPTH,
    HopRecord,
    child_correlation,
    from_metadata,
    hop_record,
    parse_traceparent,
    root_correlation,
)
from orchestrator._hop import Hop, HopRegistry
from orchestrator._orphans import cancel_orphans
from orchestrator._outcome import DelegationResult
from orchestrator._start import Plan
from orchestrator._targets import ClientFactory as ClientFactory, Resolver as Resolver, Targets
from orchestrator._tracing import Outcomes, root_trace_id

__all__ = ("ClientFactory", "Orchestrator", "Resolver", "delegate", "stream_delegate")


class Orchestrator:
    """Delegation with explicit correlation; implements the runtime's ``Delegator``.

    Args:
        max_depth: The deepest hop (the root is depth 0) this orchestrator sends to, and
            that its orchestrated agents accept.
        cancel_timeout: Seconds each attempt to cancel a child may take (retried once).
        start_timeout: Seconds starting (or resuming) a child may take; this wait is
            shielded from cancellation so that the child's id is always learnt.
        poll_interval: Seconds before the first GetTask of a remote child whose agent does
            not stream (it is polled, not subscribed to); each next pause doubles.
        max_poll_interval: The longest pause between two GetTask of such a child.
        http_client: An ``httpx.AsyncClient`` to borrow for remote agents (never closed
            here); by default one is created on first use and closed by :meth:`aclose`.
        client_factory: Makes the :class:`~a2a_actors.client.A2AClient` of a base URL;
            by default ``A2AClient.connect(url, http_client=...)``.
        resolver: Names -> targets, for string targets that are not URLs.
        timeouts: Timeouts of the default clients.
        registry: Where names the resolver does not know are looked up; by default the
            one the ``A2A_ACTORS_REGISTRY`` environment variable names, if any.
        middleware: Caller-side middleware of the default clients
            (:mod:`a2a_actors.client.middleware`).
        public_url: The base URL advertised as this server's in correlations and hop
            records, for supervisors not registered with :meth:`bind_url`.

    Raises:
        ValueError: ``max_depth`` is negative, or the poll intervals are not
            ``0 < poll_interval <= max_poll_interval``.
    """

    def __init__(
        self,
        *,
        max_depth: int = DEFAULT_MAX_DEPTH,
        cancel_timeout: float = 10.0,
        start_timeout: float = 30.0,
        poll_interval: float = 0.005,
        max_poll_interval: float = 0.5,
        http_client: httpx.AsyncClient | None = None,
        client_factory: ClientFactory | None = None,
        resolver: Resolver | None = None,
        timeouts: Timeouts | None = None,
        public_url: str = "",
        registry: Registry | None = None,
        middleware: Sequence[ClientMiddleware] = (),
    ) -> None:
        if max_depth < 0:
            raise ValueError("max_depth must be >= 0")
        if not 0 < poll_interval <= max_poll_interval:
            raise ValueError("poll intervals must be 0 < poll_interval <= max_poll_interval")
        self.max_depth = max_depth
        self.cancel_timeout = cancel_timeout
        self.start_timeout = start_timeout
        self.poll_interval = poll_interval
        self.max_poll_interval = max_poll_interval
        self.public_url = public_url.rstrip("/")
        self._hops = HopRegistry()
        self._targets = Targets(
            http_client=http_client,
            client_factory=client_factory,
            resolver=resolver,
            timeouts=timeouts or Timeouts(),
            registry=registry,
            middleware=middleware,
        )
        self._urls: weakref.WeakKeyDictionary[TaskRunner, str] = weakref.WeakKeyDictionary()
        self._outcomes = Outcomes()

    # -- configuration and lifetime -------------------------------------------------------

    @property
    def hops(self) -> HopRegistry:
        """The hops of the tasks that are delegating now."""
        return self._hops

    def bind_url(self, supervisor: TaskRunner, url: str) -> None:
        """Record that ``supervisor`` is served at the base URL ``url``."""
        self._urls[supervisor] = url.rstrip("/")

    def url_of(self, supervisor: TaskRunner) -> str:
        """The base URL ``supervisor`` is served at (:attr:`public_url` when unbound)."""
        return self._urls.get(supervisor, self.public_url)

    def delegation_outcomes(self) -> Mapping[str, int]:
        """Delegations ended so far, by outcome (``completed``, ``failed``, ``canceled``,
        ``rejected``, ``input_required``, ``refused``, ``error``; docs/observability.md):
        the server's ``a2a_delegations_total``."""
        return self._outcomes.snapshot()

    async def client(self, url: str) -> A2AClient:
        """The (cached) client of the agent at base URL ``url``.

        Raises:
            DelegationError: The agent could not be reached or has no usable card.
        """
        return (await self._targets.remote(url)).client

    async def cancel_orphans(self, task: Task) -> tuple[str, ...]:
        """Cancel the live remote children of ``task``, a parent whose handler is gone (a
        cluster node settled it after its own node was lost); the ids cancelled. See
        :func:`~orchestrator._orphans.cancel_orphans`."""
        return await cancel_orphans(self._targets, task, timeout=self.cancel_timeout)

    async def aclose(self) -> None:
        """Close the remote clients and the ``httpx.AsyncClient`` if it is ours."""
        await self._targets.aclose()

    async def __aenter__(self) -> Orchestrator:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- delegation ---------------------------------------------------------------------

    async def delegate(
        self, ctx: TaskContext, target: object, message: str | Message, **options: Any
    ) -> DelegationResult:
        """The runtime's ``Delegator`` entry point: :meth:`call` with ``options``."""
        return await self.call(ctx, target, message, **options)

    async def call(
        self,
        ctx: TaskContext,
        target: object,
        message: str | Message,
        *,
        relay_input: bool = True,
        metadata: dict[str, Any] | None = None,
        context_id: str = "",
    ) -> DelegationResult:
        """Run ``message`` on ``target`` as a child of ``ctx``'s task; wait for the outcome.

        Args:
            ctx: The delegating task.
            target: See the module docstring.
            message: The child's input (text, or a Message whose parts and metadata are
                used; its ids are not).
            relay_input: Relay a child's questions to this task's caller (``ctx.ask``) and its
                answers back down; when false, raise :class:`~orchestrator._errors.InputRequired`.
            metadata: Extra message metadata for the child.
            context_id: The child's context id ("" lets its server choose).

        Returns:
            The child's result once it COMPLETED (or answered with a Message).

        Raises:
            DepthLimitError, CycleError: Refused before anything was sent.
            DelegationError: The child failed, was rejected or canceled, or could not be
                reached; it names the origin agent and task and the relay path.
            InputRequired: With ``relay_input=False``, when the child asks for input.

        On cancellation of the caller, the child (and so its subtree) is canceled before
        the cancellation propagates. While it waits, the caller holds no running slot of
        its supervisor (``ctx.waiting()``), so a local chain deeper than ``max_running``
        cannot deadlock on its own slots.
        """
        async with (
            ctx.waiting(),
            self.stream(
                ctx,
                target,
                message,
                relay_input=relay_input,
                metadata=metadata,
                context_id=context_id,
            ) as events,
        ):
            async for _ in events:
                pass
            return events.result()

    def stream(
        self,
        ctx: TaskContext,
        target: object,
        message: str | Message,
        *,
        relay_input: bool = True,
        metadata: dict[str, Any] | None = None,
        context_id: str = "",
    ) -> ChildStream:
        """The streaming variant of :meth:`call`: ``async with`` it and iterate the events.

        Events are the child's StreamResponses (a Task snapshot first). Leaving the block
        before the child ended cancels the child. Arguments and errors as for :meth:`call`
        (errors of the child come from the iteration).
        """

        async def plan() -> Plan:
            return await self._plan(ctx, target, message, metadata, context_id)

        return ChildStream(
            plan,
            outcomes=self._outcomes,
            registry=self._hops,
            relay_input=relay_input,
            cancel_timeout=self.cancel_timeout,
            start_timeout=self.start_timeout,
            poll_interval=self.poll_interval,
            max_poll_interval=self.max_poll_interval,
        )

    # -- internals ----------------------------------------------------------------------

    async def _plan(
        self,
        ctx: TaskContext,
        target: object,
        content: str | Message,
        metadata: dict[str, Any] | None,
        context_id: str,
    ) -> Plan:
        link = await self._targets.link(ctx, target)
        hop = self._hop_for(ctx)
        try:
            correlation = child_correlation(
                hop.correlation,
                parent_task_id=ctx.task_id,
                parent_context_id=ctx.context_id,
                child_agent=link.name,
                parent_url=hop.record.url,
                max_depth=self.max_depth,
            )
        except BaseException:
            self._hops.close(hop)
            raise
        if isinstance(content, Message):
            parts, base, extensions = content.parts, content.metadata or {}, content.extensions
        else:
            parts, base, extensions = (Part(text=content),), {}, ()
        message = Message(
            message_id=uuid4().hex,
            role=Role.USER,
            parts=parts,
            context_id=context_id,
            metadata={**base, **(metadata or {}), CORRELATION_URI: correlation.to_metadata()},
            extensions=tuple(dict.fromkeys((*extensions, CORRELATION_URI))),
        )
        return Plan(hop, link, correlation, message)

    def _hop_for(self, ctx: TaskContext) -> Hop:
        """The open hop of ``ctx``'s task, held; made from its metadata when it has none
        (an agent that is not orchestrated delegating)."""
        hop = self._hops.get(ctx.task_id)
        if hop is None:
            record = hop_record(ctx.task_metadata)
            if record is None:
                try:
                    incoming = from_metadata(ctx.metadata)
                except ValueError:
                    incoming = None
                if incoming is None:
                    parsed = parse_traceparent(ctx.headers.get("traceparent"))
                    incoming = root_correlation(
                        ctx.agent.name, trace_id=parsed[0] if parsed else root_trace_id()
                    )
                record = HopRecord.of(
                    incoming,
                    agent=ctx.agent.name,
                    url=self.url_of(ctx.supervisor),
                    started_at=utc_now(),
                )
            hop = Hop(ctx, record)
        return self._hops.open(hop)


def _orchestrator_of(ctx: TaskContext) -> Orchestrator:
    delegator = ctx.delegator
    if not isinstance(delegator, Orchestrator):
        raise UnsupportedOperationError(
            "delegation needs an Orchestrator: serve an orchestrated agent "
            "(orchestrator._orchestrated(agent), or a pipeline), which any a2a-actors server "
            "gives one, or pass Supervisor(agent, delegator=Orchestrator())"
        )
    return delegator


async def delegate(
    ctx: TaskContext,
    target: object,
    message: str | Message,
    *,
    relay_input: bool = True,
    metadata: dict[str, Any] | None = None,
    context_id: str = "",
) -> DelegationResult:
    """``ctx.delegate(...)`` with its precise return type (see :meth:`Orchestrator.call`).

    Raises:
        UnsupportedOperationError: The supervisor's delegator is not an Orchestrator.
        DepthLimitError, CycleError, DelegationError, InputRequired: As
            :meth:`Orchestrator.call`.
    """
    return await _orchestrator_of(ctx).call(
        ctx, target, message, relay_input=relay_input, metadata=metadata, context_id=context_id
    )


def stream_delegate(
    ctx: TaskContext,
    target: object,
    message: str | Message,
    *,
    relay_input: bool = True,
    metadata: dict[str, Any] | None = None,
    context_id: str = "",
) -> ChildStream:
    """The streaming delegation of :meth:`Orchestrator.stream`, for ``ctx``'s orchestrator.

    ``async with stream_delegate(ctx, target, "...") as events: async for ev in events``.

    Raises:
        UnsupportedOperationError: The supervisor's delegator is not an Orchestrator.
    """
    return _orchestrator_of(ctx).stream(
        ctx, target, message, relay_input=relay_input, metadata=metadata, context_id=context_id
    )
