"""An agent that answers with the garbage collector's state (run by ``a2a-actors serve``):
``gc.get_freeze_count()`` and the youngest generation's threshold."""

from __future__ import annotations

import gc

from a2a_actors.runtime import TaskContext


async def agent(ctx: TaskContext) -> None:
    await ctx.reply(f"{gc.get_freeze_count()} {gc.get_threshold()[0]}")
