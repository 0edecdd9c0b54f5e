"""The agent the cluster serving tests serve (in process and through the CLI)."""

from __future__ import annotations

import anyio

from a2a_actors.runtime import TaskContext
from a2a_actors.runtime._agent import Agent

__all__ = ("agent",)


async def handler(ctx: TaskContext) -> None:
    """``spin``: WORKING until cancelled; ``count``: five updates, then COMPLETED;
    anything else: asks for a name and greets it (resumed elsewhere: the message is it)."""
    if ctx.text == "spin":
        await ctx.start()
        await anyio.sleep_forever()  # a cancel from any node interrupts it here
    if ctx.text == "count":
        await ctx.start()
        for i in range(5):
            await ctx.update(f"step {i}")
            await anyio.sleep(0.05)
        await ctx.complete("counted")
        return
    if ctx.resumed:  # restarted on another node: the message is the answer
        await ctx.complete(f"Hello, {ctx.text}! (resumed)")
        return
    name = (await ctx.ask("What is your name?")).text
    await ctx.complete(f"Hello, {name}!")


agent = Agent(handler=handler, name="cluster-test")
