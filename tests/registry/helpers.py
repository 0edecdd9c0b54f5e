"""What the registry and middleware tests share: agents served on 127.0.0.1 port 0."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import anyio

from a2a_actors.protocol._card import AgentSkill
from a2a_actors.runtime import Agent, TaskContext, agent
from a2a_actors.server import ServerConfig, serve
from orchestrator import sequence

__all__ = ("pipeline", "reverser", "served", "upper")


@agent(
    name="upper",
    description="Upper-cases text",
    skills=(AgentSkill(id="upper", name="Upper", description="Shouts", tags=("text",)),),
)
async def upper(ctx: TaskContext) -> str:
    """Answers the text in capitals."""
    return ctx.text.upper()


@agent(
    name="reverser",
    description="Reverses text",
    skills=(AgentSkill(id="reverse", name="Reverse", description="Mirrors", tags=("text",)),),
)
async def reverser(ctx: TaskContext) -> str:
    """Answers the text backwards."""
    return ctx.text[::-1]


@asynccontextmanager
async def served(target: Agent | object, config: ServerConfig | None = None) -> AsyncIterator[str]:
    """Serve ``target`` on 127.0.0.1:0 for the block; yields its base URL."""
    async with anyio.create_task_group() as tg:
        url: str = await tg.start(partial(serve, target, config=config))
        try:
            yield url
        finally:
            tg.cancel_scope.cancel()


#: A pipeline whose steps are names, found in the registry when it runs.
pipeline = sequence("upper", "reverser", name="shout-and-mirror")
