"""Sleeper: works for a while, reporting each second; cancel it to stop early.

    a2a-actors serve examples.sleeper:agent

Send a number of seconds (``"3"``, ``"0.5"``): the task reports WORKING with the status
message "sleeping N s" at once and "slept N s" after each whole second, and completes with
"done after N s". Send ``forever`` to have it work ("sleeping until canceled") until the
task is cancelled (CancelTask ends it CANCELED).
Anything else is rejected (``TASK_STATE_REJECTED``).
"""

from __future__ import annotations

import math

import anyio

from a2a_actors.protocol import AgentSkill
from a2a_actors.runtime import Agent, TaskContext

__all__ = ("agent",)


def _duration(text: str) -> float | None:
    text = text.strip().lower()
    if text == "forever":
        return math.inf
    try:
        seconds = float(text)
    except ValueError:
        return None
    return seconds if seconds >= 0 and math.isfinite(seconds) else None


async def sleep(ctx: TaskContext) -> None:
    """Work for the requested number of seconds (or forever), one update per second."""
    seconds = _duration(ctx.text)
    if seconds is None:
        await ctx.reject("send a number of seconds, or 'forever'")
        return
    await ctx.update(
        "sleeping until canceled" if seconds == math.inf else f"sleeping {seconds:g} s"
    )
    elapsed = 0
    while elapsed + 1 <= seconds:
        await anyio.sleep(1)
        elapsed += 1
        await ctx.update(f"slept {elapsed} s")
    if seconds > elapsed:
        await anyio.sleep(seconds - elapsed)
    await ctx.complete(f"done after {seconds:g} s")


agent = Agent(
    handler=sleep,
    name="sleeper",
    description="Works for the given number of seconds (or forever) until cancelled",
    skills=(
        AgentSkill(
            id="sleep",
            name="Sleep",
            description="Sleeps N seconds with a status update per second; 'forever' never ends",
            tags=("long-running", "cancel", "example"),
            examples=("3", "forever"),
        ),
    ),
)
