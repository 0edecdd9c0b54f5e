"""The Agent around a framework run: what every bridge's ``as_agent`` returns.

:func:`framework_agent` makes an :class:`~a2a_actors.runtime.Agent` whose handler, for
each task, checks that it runs on asyncio (every framework here does), binds the task for
remote tools (:func:`._remote.bound`), hands a :class:`~._turn.Turn` to the bridge's
``run``, and turns what comes out of it into the task's end:

* ``run`` returns: the task COMPLETED (``run`` has closed the answer);
* :class:`~._parts.UnsupportedContent`: REJECTED, the status message
  ``"ContentTypeNotSupportedError: <the part, and what the agent takes>"`` (the error's
  code and text in its metadata);
* a :class:`~orchestrator.DelegationError` (a delegation's failure left unhandled):
  passed on, so that its origin and relay path travel up (``orchestrated``);
* any other exception of the framework: FAILED with ``"<framework> agent failed:
  <ExceptionType>: <text>"``, the usage counted so far stored first;
* cancellation: passed on (the task ends CANCELED).

The agent is ``orchestrated``: any a2a-actors server gives it an Orchestrator, its tasks
record their hop, and the remote tools' calls show in the hop tree as its children.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from uuid import uuid4

import sniffio

from a2a_actors.frameworks._parts import UnsupportedContent
from a2a_actors.frameworks._remote import bound
from a2a_actors.frameworks._turn import Turn
from a2a_actors.protocol._card import AgentSkill
from a2a_actors.protocol._models import Message, Part, Role
from a2a_actors.runtime import Agent, TaskContext
from orchestrator import DelegationError, orchestrated

__all__ = ("framework_agent",)

Run = Callable[[Turn], Awaitable[None]]


def _refusal(error: UnsupportedContent) -> Message:
    return Message(
        message_id=uuid4().hex,
        role=Role.AGENT,
        parts=(Part(text=f"ContentTypeNotSupportedError: {error.message}"),),
        metadata={"error": {"code": error.code, "message": error.message}},
    )


def framework_agent(
    run: Run,
    *,
    framework: str,
    name: str,
    description: str,
    skills: Sequence[AgentSkill],
    input_modes: tuple[str, ...],
) -> Agent:
    """An orchestrated Agent whose tasks are runs of ``run`` (see the module docstring)."""

    async def handler(ctx: TaskContext) -> None:
        if sniffio.current_async_library() != "asyncio":
            raise RuntimeError(f"{framework} agents run on asyncio: serve with --backend asyncio")
        turn = Turn(ctx, framework)
        with bound(ctx):
            try:
                await run(turn)
            except UnsupportedContent as exc:
                await ctx.reject(_refusal(exc))
            except DelegationError:
                raise
            except Exception as exc:
                await turn.store_usage()
                await ctx.fail(f"{framework} agent failed: {type(exc).__name__}: {exc}")

    handler.__name__ = name
    inner = Agent(
        handler=handler,
        name=name,
        description=description,
        skills=tuple(skills),
        input_modes=input_modes,
        output_modes=("text/plain", "application/json"),
    )
    return orchestrated(inner)
