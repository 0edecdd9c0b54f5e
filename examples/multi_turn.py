"""Multi-turn: the agent asks a question, then answers using the reply.

    a2a-actors serve examples.multi_turn:agent

The first message puts the task in ``TASK_STATE_INPUT_REQUIRED`` with the status message
"What is your name?". Send the answer as a new message with the same ``taskId``: the task
then completes with the status message "Hello, <answer>!".

The task survives a restart (``--store sqlite:PATH``) and, in cluster mode, the loss of the
node it waits on: the next message then restarts the handler with ``ctx.resumed`` true, and
that message is the answer to the question already asked, so it is not asked again.
"""

from __future__ import annotations

from a2a_actors.protocol import AgentSkill
from a2a_actors.runtime import Agent, TaskContext

__all__ = ("QUESTION", "agent")

QUESTION = "What is your name?"


async def greet(ctx: TaskContext) -> None:
    """Ask for a name, then greet it; resumed, the resuming message is the name."""
    reply = ctx.message if ctx.resumed else await ctx.ask(QUESTION)
    name = reply.text.strip() or "stranger"
    await ctx.complete(f"Hello, {name}!")


agent = Agent(
    handler=greet,
    name="multi-turn",
    description="Asks for your name, then greets you",
    skills=(
        AgentSkill(
            id="greet",
            name="Greet",
            description="Asks a question (input-required), then completes with a greeting",
            tags=("multi-turn", "example"),
            examples=("hi",),
        ),
    ),
)
