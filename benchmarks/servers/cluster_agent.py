"""The agent ``bench_cluster.py`` measures cross-node latencies with.

``spin``: WORKING until cancelled (the cancel-from-another-node measurement);
``tick``: asks for input, then reports the wall-clock time (``time.time()``, the same
clock for every process of the host) as a status update the moment it has the answer,
and completes (the first-event-on-another-node measurement).
"""

from __future__ import annotations

import time

import anyio

from a2a_actors.runtime import Agent, TaskContext

__all__ = ("agent",)


async def handler(ctx: TaskContext) -> None:
    if ctx.text == "spin":
        await ctx.start()
        await anyio.sleep_forever()
    await ctx.ask("go?")
    await ctx.update(repr(time.time()))
    await ctx.complete("ticked")


agent = Agent(handler=handler, name="bench-cluster")
