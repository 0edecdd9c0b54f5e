"""The agent ``bench_soak.py`` keeps busy for half an hour: one behaviour per message text.

    a2a-actors serve benchmarks.servers.soak_agent:agent --port 0 [--cluster nats://...]

* ``ask``: asks :data:`QUESTION` (INPUT_REQUIRED), then completes with ``answer: <reply>``
  (multi-turn); a task resumed on another node after its owner was lost takes the
  resuming message as the reply;
* ``sleep``: WORKING until cancelled;
* ``stream``: :data:`CHUNKS` chunks of one artifact (``chunks``), then COMPLETED;
* anything else: the text back as artifact ``echo``, then COMPLETED.
"""

from __future__ import annotations

import anyio

from a2a_actors.runtime import Agent, TaskContext

__all__ = ("CHUNKS", "QUESTION", "agent")

QUESTION = "what is the answer?"
#: Artifact chunks of a ``stream`` task.
CHUNKS = 4


async def soak(ctx: TaskContext) -> None:
    """Ask, sleep, stream or echo, as the message text says (see the module docstring)."""
    text = ctx.text
    if text == "ask":
        reply = ctx.message if ctx.resumed else await ctx.ask(QUESTION)
        await ctx.complete(f"answer: {reply.text}")
    elif text == "sleep":
        await ctx.start()
        await anyio.sleep_forever()
    elif text == "stream":
        for i in range(CHUNKS):
            await ctx.artifact(
                f"chunk {i} ",
                artifact_id="chunks",
                name="chunks",
                append=i > 0,
                last_chunk=i == CHUNKS - 1,
            )
    else:
        await ctx.artifact(text, artifact_id="echo", name="echo")


agent = Agent(handler=soak, name="bench-soak", description="ask, sleep, stream or echo")
