"""The agents of the multi-hop demo: deterministic, each taking a visible moment per hop.

::

    planner ──┬── researcher-a ── archive ── index      (depth 0 .. 3)
              ├── researcher-b ── archive ── index
              └── writer ── editor

Every agent is served on its own loopback server except ``index`` and ``editor``, which run
as *local* children of ``archive`` and ``writer`` (task actors of the same supervisor, no
HTTP). Agents name their remote peers ("archive", "writer"...) and the orchestrator's
resolver maps the names to URLs (:data:`Directory`).
"""

from __future__ import annotations

from collections.abc import Mapping

import anyio

from a2a_actors.runtime import Agent, TaskContext
from orchestrator import ChildStream, delegate, stream_delegate

__all__ = ("REMOTE", "Directory", "build_agents")

#: The agents that get a server of their own, in start order (leaves first).
REMOTE = ("archive", "writer", "researcher-a", "researcher-b", "planner")
#: Agent name -> base URL; filled once the servers run.
Directory = dict[str, str]

_FACTS = {
    "researcher-a": ("origins", "first recorded in the 3rd century"),
    "researcher-b": ("trade", "carried along the Silk Road"),
}


async def _follow(events: ChildStream) -> None:
    """Read a delegation's events to its end."""
    async for _ in events:
        pass


def build_agents(step: float) -> Mapping[str, Agent]:
    """The demo's served agents; each hop works a multiple of ``step`` seconds.

    With the default step (0.15 s) a run takes about 1.2 s, and the index (depth 3) is at
    work from about 0.4 s to 0.7 s, so ``--cancel-after 0.5`` cancels all four levels.
    """

    async def index(ctx: TaskContext) -> str:
        await anyio.sleep(2 * step)
        return f"3 entries on {ctx.text}"

    index_agent = Agent(handler=index, name="index", description="Looks entries up (local)")

    async def archive(ctx: TaskContext) -> str:
        await ctx.update(f"searching the archive for {ctx.text}")
        await anyio.sleep(step / 2)
        found = await delegate(ctx, index_agent, ctx.text)
        return f"archive: {found.text}"

    def researcher(name: str) -> Agent:
        angle, fact = _FACTS[name]

        async def research(ctx: TaskContext) -> str:
            await ctx.update(f"researching the {angle} of {ctx.text}")
            await anyio.sleep(step)
            sources = await delegate(ctx, "archive", f"{ctx.text} ({angle})")
            return f"{ctx.text}: {fact} ({sources.text})"

        return Agent(handler=research, name=name, description=f"Researches the {angle}")

    async def editor(ctx: TaskContext) -> str:
        await anyio.sleep(step)
        return ctx.text.replace(" | ", "; ")

    editor_agent = Agent(handler=editor, name="editor", description="Tidies a draft (local)")

    async def writer(ctx: TaskContext) -> str:
        await ctx.update("writing")
        await anyio.sleep(step)
        edited = await delegate(ctx, editor_agent, " | ".join(ctx.text.splitlines()))
        return f"Report. {edited.text}."

    async def planner(ctx: TaskContext) -> str:
        await ctx.update(f"planning a report on {ctx.text}")
        await anyio.sleep(step)
        # Start both researchers (in this order), then follow them concurrently.
        async with (
            stream_delegate(ctx, "researcher-a", ctx.text) as first,
            stream_delegate(ctx, "researcher-b", ctx.text) as second,
        ):
            async with anyio.create_task_group() as tg:
                for research in (first, second):
                    tg.start_soon(_follow, research)
            notes = [first.result().text, second.result().text]
        report = await delegate(ctx, "writer", "\n".join(notes))
        await ctx.update("reviewing the report")
        await anyio.sleep(step)
        return report.text

    return {
        "archive": Agent(handler=archive, name="archive", description="Searches sources"),
        "writer": Agent(handler=writer, name="writer", description="Writes the report"),
        "researcher-a": researcher("researcher-a"),
        "researcher-b": researcher("researcher-b"),
        "planner": Agent(handler=planner, name="planner", description="Plans a report"),
    }
