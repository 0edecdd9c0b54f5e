"""A pipeline of local and remote agents, served as one A2A agent.

    python -m examples.pipeline "hello   world, the tea is good"

The pipeline is built from :mod:`orchestrator._pipelines`::

    text-pipeline = sequence(
        clean,                                   # local: tidy the whitespace
        fan_out(translator_url, count,           # remote translator and local counter,
                merge=report),                   #   concurrently, merged into one report
    )

The translator runs on a server of its own; the pipeline is served on another one, so any
A2A client (the official SDK's included) calls it as one agent, and every step is a
correlated child task of the pipeline's task (``python -m examples.pipeline`` prints the hop
tree after the answer).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from functools import partial

import anyio

from a2a_actors.client import A2AClient
from a2a_actors.protocol import Task
from a2a_actors.runtime import Agent, TaskContext
from orchestrator import DelegationResult, fan_out, fetch_tree, render_tree, sequence, serve

__all__ = ("build_pipeline", "clean", "count", "main", "report", "translator")

_WORDS = {"hello": "bonjour", "world": "monde", "the": "le", "tea": "thé", "is": "est"}
_WORDS |= {"good": "bon", "and": "et", "cat": "chat", "sleeps": "dort"}


async def _translate(ctx: TaskContext) -> str:
    """Word-by-word English -> French (a tiny dictionary; unknown words are kept)."""
    return " ".join(_WORDS.get(w.lower().strip(",.!?"), w) for w in ctx.text.split())


#: The remote step: served on its own server.
translator = Agent(handler=_translate, name="translator", description="English to French")


async def _clean(ctx: TaskContext) -> str:
    return " ".join(ctx.text.split())


async def _count(ctx: TaskContext) -> str:
    return f"{len(ctx.text.split())} words"


#: Local steps: run as child task actors of the pipeline's own supervisor.
clean = Agent(handler=_clean, name="clean", description="Tidies whitespace")
count = Agent(handler=_count, name="count", description="Counts words")


def report(results: list[DelegationResult]) -> str:
    """The fan-out's merge: one line per branch, ``agent: text``."""
    return "\n".join(f"{r.agent}: {r.text}" for r in results)


def build_pipeline(translator_target: object) -> Agent:
    """The pipeline, with ``translator_target`` (a URL, a RemoteAgent...) as the remote step."""
    return sequence(
        clean,
        fan_out(translator_target, count, merge=report, name="translate-and-count"),
        name="text-pipeline",
        description="Cleans a text, then translates it and counts its words",
    )


async def run(text: str) -> tuple[Task, str]:
    """Serve the translator and the pipeline, call the pipeline once; (task, hop tree)."""
    async with anyio.create_task_group() as tg:
        translator_url = await tg.start(partial(serve, translator))
        pipeline_url = await tg.start(partial(serve, build_pipeline(translator_url)))
        async with await A2AClient.connect(pipeline_url) as client:
            reply = await client.send_message(text)
        assert isinstance(reply, Task)
        task: Task = reply
        tree = await fetch_tree(pipeline_url, task.id)
        tg.cancel_scope.cancel()
    return task, render_tree(tree)


def main(argv: Sequence[str] | None = None) -> int:
    """Call the pipeline with the text given on the command line and print the result."""
    parser = argparse.ArgumentParser(prog="python -m examples.pipeline", description=__doc__)
    parser.add_argument("text", nargs="?", default="hello   world, the tea is good")
    args = parser.parse_args(argv)
    task, tree = anyio.run(run, args.text, backend="trio")
    state = task.status.state.value.removeprefix("TASK_STATE_")
    answer = "\n".join(p.text or "" for a in task.artifacts for p in a.parts)
    if not answer and task.status.message is not None:
        answer = task.status.message.text
    print(f"{state}:\n{answer}\n\n{tree}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
