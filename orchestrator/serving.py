"""Serving an agent that delegates: one call wires the agent, the orchestrator and the server.

``url = await task_group.start(orchestrator.serve, agent)`` is
:func:`a2a_actors.server._serve` plus what delegation needs:

* the agent is wrapped with :func:`~orchestrator._orchestrated.orchestrated` (correlation extension
  on the card, incoming correlation checked and recorded, cancel cascade);
* its Supervisor gets an :class:`~orchestrator._delegator.Orchestrator` as ``delegator`` (a fresh
  one, closed at shutdown, unless you pass yours), so ``ctx.delegate`` works;
* the orchestrator learns the server's base URL, so hop records and correlations name it and
  the hop tree can be rebuilt from any hop.

An agent that is already orchestrated (a pipeline) needs none of this: any a2a-actors server
(``a2a-actors serve``, :func:`a2a_actors.server._serve`, ``create_app``) gives it an
Orchestrator of its own (see :mod:`a2a_actors.server._delegation`). This helper also wraps a
plain agent and lets you pass the Orchestrator.

Without this helper, build the same by hand::

    orch = Orchestrator(public_url="https://agents.example.com")
    app = create_app(
        orchestrated(agent),
        ServerConfig(supervisor_options={"delegator": orch}),
    )
"""

from __future__ import annotations

import dataclasses
from functools import partial
from typing import Any

import anyio
from anyio.abc import TaskStatus

from a2a_actors.runtime import Supervisor
from a2a_actors.server import ServerConfig, serve as serve_app
from orchestrator._delegator import Orchestrator
from orchestrator._orchestrated import orchestrated

__all__ = ("serve",)


async def serve(
    agent: object,
    *,
    orchestrator: Orchestrator | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    config: ServerConfig | None = None,
    task_status: TaskStatus[str] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``agent`` (orchestrated) over HTTP until cancelled.

    Args:
        agent: Anything ``as_agent`` accepts (a pipeline is an agent too).
        orchestrator: The delegator to use (borrowed); by default a new one, closed when
            serving stops.
        host: Interface to bind.
        port: Port to bind; 0 picks a free one.
        config: Server configuration; its capacity and ``supervisor_options`` apply to the
            Supervisor made here.
        task_status: Receives the base URL once serving.

    Raises:
        OSError: The address cannot be bound.
    """
    config = config or ServerConfig()
    options: dict[str, Any] = dict(config.supervisor_options)
    if config.max_live_tasks is not None:
        options["max_live_tasks"] = config.max_live_tasks
    if config.max_running is not None:
        options["max_running"] = config.max_running
    orch = orchestrator if orchestrator is not None else Orchestrator()
    options["delegator"] = orch
    served = orchestrated(agent)
    if config.middleware:  # the Supervisor is ours, so the middleware is applied here
        served = dataclasses.replace(served, middleware=config.middleware)
        config = config.replace(middleware=())
    supervisor = Supervisor(served, **options)
    try:
        async with anyio.create_task_group() as tg:
            await tg.start(supervisor.run)
            url: str = await tg.start(
                partial(serve_app, supervisor, host=host, port=port, config=config)
            )
            orch.bind_url(supervisor, config.public_url or url)
            task_status.started(url)
    finally:
        if orchestrator is None:
            with anyio.CancelScope(shield=True):
                await orch.aclose()
