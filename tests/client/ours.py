"""Our own server (a2a_actors.server) serving the scenario agent, for the shared client suite.

The agent behaves as tests/interop/NOTES.md describes the SDK harness's executors, keyed on
the task's first user text: ``input…`` asks :data:`MULTI_TURN_QUESTION` and puts the answer
in artifact ``"answer"``; ``sleep…`` works until canceled; ``stream…`` streams
:data:`STREAM_CHUNKS` as chunks of artifact ``"stream"``; ``message…`` answers with a Message;
anything else echoes into artifact ``"echo"``.

:func:`run_our_server` runs it in a thread with its own trio loop (like the SDK harness), so
session fixtures can share it between trio and asyncio tests.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import trio

from a2a_actors.protocol._card import AgentSkill
from a2a_actors.protocol._models import Role
from a2a_actors.runtime import TaskContext, agent
from a2a_actors.server import ExtendedCard, ServedAgent, ServerConfig, serve
from tests.client.scenarios import MULTI_TURN_QUESTION, STREAM_CHUNKS

__all__ = ["AGENT_NAME", "run_our_server", "scenario_agent"]

AGENT_NAME = "a2a-actors-scenario-agent"
_STARTUP_TIMEOUT_S = 10.0


@agent(
    name=AGENT_NAME,
    description="a2a-actors server running the client suite's scenario agent",
    skills=(AgentSkill(id="echo", name="Echo", description="Echoes text", tags=("echo", "test")),),
)
async def scenario_agent(ctx: TaskContext) -> None:
    """The scenario agent (see the module docstring)."""
    first = next((m.text for m in ctx.history if m.role is Role.USER), ctx.text)
    key = first.strip().lower()
    if key.startswith("input"):
        answer = await ctx.ask(MULTI_TURN_QUESTION)
        await ctx.artifact(answer.text, artifact_id="answer", name="answer")
    elif key.startswith("sleep"):
        await ctx.update("sleeping until canceled")
        await anyio.sleep_forever()
    elif key.startswith("stream"):
        last = len(STREAM_CHUNKS) - 1
        for i, chunk in enumerate(STREAM_CHUNKS):
            await ctx.artifact(
                chunk, artifact_id="stream", name="stream", append=i > 0, last_chunk=i == last
            )
    elif key.startswith("message"):
        await ctx.reply(ctx.text)
    else:
        await ctx.artifact(ctx.text, artifact_id="echo", name="echo")


def default_config(**changes: Any) -> ServerConfig:
    """Push configs on (to loopback receivers) and an extended card, as in the SDK harness."""
    config = ServerConfig(
        push_notifications=True,
        allow_private_push=True,
        extended_card=ExtendedCard(name=f"{AGENT_NAME} (extended)"),
    )
    return config.replace(**changes) if changes else config


@contextlib.contextmanager
def run_our_server(config: ServerConfig | None = None) -> Iterator[str]:
    """Serve the scenario agent on 127.0.0.1:0 from a background trio thread; yields its URL."""
    served = ServedAgent(scenario_agent, config or default_config())
    ready = threading.Event()
    found: list[str] = []
    errors: list[BaseException] = []
    token: list[trio.lowlevel.TrioToken] = []
    stop: list[trio.CancelScope] = []

    async def main() -> None:
        with trio.CancelScope() as scope:
            stop.append(scope)
            token.append(trio.lowlevel.current_trio_token())
            async with trio.open_nursery() as nursery:
                url = await nursery.start(_serve, served)
                found.append(url)
                ready.set()

    def target() -> None:
        try:
            trio.run(main)
        except BaseException as exc:  # reported to the caller thread
            errors.append(exc)
        finally:
            ready.set()

    thread = threading.Thread(target=target, name="our-server", daemon=True)
    thread.start()
    try:
        if not ready.wait(_STARTUP_TIMEOUT_S) or not found:
            raise RuntimeError(f"our server failed to start: {errors!r}")
        yield found[0]
    finally:
        if stop and token and thread.is_alive():
            trio.from_thread.run_sync(stop[0].cancel, trio_token=token[0])
        thread.join(_STARTUP_TIMEOUT_S)
    if errors:  # pragma: no cover
        raise RuntimeError("our server thread failed") from errors[0]


async def _serve(served: ServedAgent, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    await serve(served, task_status=task_status)
