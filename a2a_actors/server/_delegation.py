"""Agents that bring their own delegator, so that serving them needs no extra code.

``ctx.delegate`` reaches other agents through the Supervisor's
:class:`~a2a_actors.runtime.Delegator`, which the layer above (``orchestrator``)
implements; nothing in ``a2a_actors`` may import it. An agent built to delegate says what
it needs instead: its handler has an ``open_delegator(public_url)`` method
(:class:`DelegatorProvider`). Every agent made by ``orchestrator._orchestrated`` has one,
hence every pipeline (``sequence``, ``fan_out``, ``route``).

When the server starts such an agent's Supervisor and ``ServerConfig.supervisor_options``
names no ``delegator``, it opens the agent's (:func:`provide_delegator`) for as long as it
serves, and closes it after the Supervisor stopped (a task cancelled at shutdown may still
need it to cancel its remote children). So ``a2a-actors serve mod:pipeline``,
``serve(pipeline)`` and ``create_app(pipeline)`` work as they are; a delegator given in
``supervisor_options`` always wins.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import Any, Protocol, runtime_checkable

import anyio

from a2a_actors.protocol._models import Task
from a2a_actors.runtime import Agent, Delegator
from a2a_actors.runtime.middleware import innermost
from a2a_actors.stores import StoredTask

__all__ = ("DelegatorProvider", "OrphanCanceller", "lost_task_handler", "provide_delegator")


@runtime_checkable
class DelegatorProvider(Protocol):
    """A handler that knows which delegator its agent needs."""

    def open_delegator(self, public_url: str) -> AbstractAsyncContextManager[Delegator]:
        """A delegator for the Supervisor running this agent, usable while it is open.

        ``public_url`` is the server's base URL as other agents reach it (``""`` when
        unknown); the delegator may name it in what it sends.
        """
        ...


async def provide_delegator(
    stack: AsyncExitStack, agent: Agent, options: dict[str, Any], public_url: str
) -> None:
    """Set ``options["delegator"]`` to ``agent``'s own, opened on ``stack``, when
    ``options`` has none and the agent provides one; otherwise leave ``options`` alone."""
    if options.get("delegator") is not None:
        return
    handler = innermost(agent.handler)
    if not isinstance(handler, DelegatorProvider):
        return
    opened = handler.open_delegator(public_url)
    options["delegator"] = await opened.__aenter__()

    async def close(*exc_info: Any) -> bool | None:
        suppress: bool | None = None
        with anyio.CancelScope(shield=True):  # it closes during the server's cancellation
            suppress = await opened.__aexit__(*exc_info)
        return suppress

    stack.push_async_exit(close)


@runtime_checkable
class OrphanCanceller(Protocol):
    """A delegator that can cancel the children of a task whose handler is gone."""

    async def cancel_orphans(self, task: Task) -> object:
        """Cancel ``task``'s children that are still running (cluster mode: ``task`` was
        settled FAILED by this node after the node that ran it was lost)."""
        ...


def lost_task_handler(
    delegator: Delegator | None,
) -> Callable[[StoredTask], Awaitable[object]] | None:
    """What a cluster node does with each task it fails for a lost node: the delegator's
    :meth:`OrphanCanceller.cancel_orphans` when it has one (``orchestrator`` does), else
    None (nothing to do)."""
    if not isinstance(delegator, OrphanCanceller):
        return None
    cancel = delegator.cancel_orphans

    async def handle(record: StoredTask) -> object:
        return await cancel(record.task)

    return handle
