"""The agent of the resume tests: it streams chunks, with a gate the test opens."""

from __future__ import annotations

import anyio

from a2a_actors.runtime import Agent, TaskContext

__all__ = ("Chunks",)


class Chunks:
    """``first`` artifact chunks, then (once :attr:`gate` is set) ``rest`` more, then
    COMPLETED. The text is ``"<n> chunks"`` or ``"<n> chunks, ask"`` (then it asks for
    input after the first chunks, and completes with the answer).

    Attributes:
        gate: What the agent waits for after the first chunks (set: no wait).
        waiting: Set when the agent reaches the gate (its first chunks are published).
        finished: Set once the task's final state is published.
    """

    def __init__(self, *, gated: bool = True) -> None:
        self.gate = anyio.Event()
        self.waiting = anyio.Event()
        self.finished = anyio.Event()
        if not gated:
            self.gate.set()
        self.agent = Agent(handler=self.handle, name="chunks", description="chunks")

    async def handle(self, ctx: TaskContext) -> None:
        count_text, _, mode = ctx.text.partition(", ")
        count = int(count_text.split()[0])
        first = count // 2
        for i in range(first):
            await ctx.artifact(f"{i};", artifact_id="out", append=i > 0)
        if mode == "ask":
            answer = await ctx.ask("more?")
            await ctx.artifact(answer.text + ";", artifact_id="out", append=True)
        self.waiting.set()
        await self.gate.wait()
        for i in range(first, count):
            await ctx.artifact(f"{i};", artifact_id="out", append=True)
        await ctx.complete("done")
        self.finished.set()
