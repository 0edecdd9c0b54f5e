"""Streaming: the reply arrives word by word, as chunks of one artifact.

    a2a-actors serve examples.streaming:agent

Send some text over SendStreamingMessage. The stream is: the Task, a WORKING status update,
then one artifact-update per word of the text (artifact id ``words``; ``append`` from the
second chunk on, ``lastChunk`` on the last), then COMPLETED. Joined, the chunks' texts give
the words back separated by single spaces.
"""

from __future__ import annotations

from a2a_actors.protocol import AgentSkill
from a2a_actors.runtime import Agent, TaskContext

__all__ = ("agent",)


async def stream_words(ctx: TaskContext) -> None:
    """Send the words of the message as chunks of artifact ``words``."""
    words = ctx.text.split() or ["(nothing)"]
    await ctx.update(f"streaming {len(words)} word(s)")
    last = len(words) - 1
    for i, word in enumerate(words):
        await ctx.artifact(
            word if i == last else word + " ",
            artifact_id="words",
            name="words",
            append=i > 0,
            last_chunk=i == last,
        )


agent = Agent(
    handler=stream_words,
    name="streaming",
    description="Streams your text back word by word as artifact chunks",
    skills=(
        AgentSkill(
            id="stream-words",
            name="Stream words",
            description="Returns the input as one artifact chunk per word",
            tags=("streaming", "example"),
            examples=("the quick brown fox",),
        ),
    ),
)
