"""An agent that answers with ``gc.get_freeze_count()`` (run by ``a2a-actors serve``)."""

from __future__ import annotations

import gc

from a2a_actors.runtime import TaskContext


async def agent(ctx: TaskContext) -> None:
    await ctx.reply(str(gc.get_freeze_count()))
