"""What ``a2a-actors serve --middleware`` is tested with: middleware and a local pipeline."""

from __future__ import annotations

from a2a_actors.runtime import TaskContext
from a2a_actors.runtime.middleware import AgentNext
from orchestrator import sequence
from tests.registry.helpers import reverser, upper

__all__ = ("bracket", "local_pipeline", "not_callable", "tag")

not_callable = 42


async def bracket(ctx: TaskContext, next: AgentNext) -> object:
    """Puts the result in brackets."""
    return f"[{await next(ctx)}]"


async def tag(ctx: TaskContext, next: AgentNext) -> object:
    """Prefixes the result with the agent's name."""
    return f"{ctx.agent.name}:{await next(ctx)}"


#: Local steps: the served pipeline needs the delegator it brings, through the middleware.
local_pipeline = sequence(upper, reverser, name="local")
