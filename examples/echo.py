"""Echo: every message comes back as an artifact.

    a2a-actors serve examples.echo:agent

Send any text; the answer is a task in ``TASK_STATE_COMPLETED`` with one artifact named
``echo`` (artifact id ``echo``) whose single text part is the text you sent.
"""

from __future__ import annotations

from a2a_actors.protocol import AgentSkill
from a2a_actors.runtime import Agent, TaskContext

__all__ = ("agent",)


async def echo(ctx: TaskContext) -> None:
    """Echo the text of the message as artifact ``echo``; the task then completes."""
    await ctx.artifact(ctx.text, artifact_id="echo", name="echo")


agent = Agent(
    handler=echo,
    name="echo",
    description="Echoes your text back as an artifact",
    skills=(
        AgentSkill(
            id="echo",
            name="Echo",
            description="Repeats the text it receives",
            tags=("echo", "example"),
            examples=("hello",),
        ),
    ),
)
