"""An agent for the durability tests, served by ``a2a-actors serve --store sqlite:PATH``.

``park`` waits for input (and, resumed after a restart, answers with the new message);
``hang`` works until cancelled; anything else completes at once.
"""

from __future__ import annotations

import anyio

from a2a_actors.runtime import TaskContext, agent as make_agent
from a2a_actors.server import ServedAgent, ServerConfig


@make_agent(name="durable")
async def durable(ctx: TaskContext) -> str:
    if ctx.resumed:
        return f"resumed with {ctx.text}"
    if ctx.text == "park":
        answer = await ctx.ask("waiting for you")
        return f"answered {answer.text}"
    if ctx.text == "hang":
        await ctx.update("working")
        await anyio.sleep_forever()
    return f"done {ctx.text}"


agent = ServedAgent(durable, ServerConfig(push_notifications=True, allow_private_push=True))
