"""Agent-side middleware: a chain of async callables around an agent's handler.

The shape
---------
A middleware is an async callable of the task's context and ``next``::

    async def middleware(ctx: TaskContext, next: AgentNext) -> object:
        ...                      # before: read ctx, refuse (return without calling next)
        result = await next(ctx)  # the rest of the chain, then the handler
        ...                      # after: read ctx.task (the events the handler produced)
        return result             # or another value: it finishes the task as a handler's

``Agent(handler=..., middleware=[outer, inner])`` runs ``outer`` first: ``outer`` calls
``next`` to run ``inner``, which calls ``next`` to run the handler. What each step can do:

* **observe**: ``ctx`` is the task's context (the message, the caller, ``ctx.task`` at any
  moment); to see each action the handler takes as it takes it, pass
  ``watched(ctx, on_event)`` to ``next`` instead of ``ctx`` (see :func:`watched`);
* **change**: return another value than ``next``'s (it is the handler's return value:
  ``runtime.agent`` says what it does to the task), or pass ``next`` another context;
* **refuse**: do not call ``next``: ``await ctx.reject("why")`` and return, or raise;
* **time**: measure around ``await next(ctx)``.

Failures follow the handler's path, because the chain *is* the handler: a middleware that
raises fails its task (the error text as the status message), exactly as a handler that
raises; cancellation arrives at the middleware's current await like at the handler's. No
other task is affected.

Composition happens once, when the :class:`~a2a_actors.runtime._agent.Agent` is built: its
``handler`` becomes a :class:`HandlerChain` (the original is ``handler.inner``) and its
``middleware`` field is emptied, so copies made with ``dataclasses.replace`` do not wrap twice, and
middleware given to a copy wraps around what the original already had.

:func:`log_calls` is the shipped timing/logging middleware.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, TypeAlias

from a2a_actors.protocol._models import Task

if TYPE_CHECKING:
    from a2a_actors.runtime._context import TaskContext

__all__ = (
    "AgentMiddleware",
    "AgentNext",
    "HandlerChain",
    "check_middleware",
    "innermost",
    "log_calls",
    "watched",
)

logger = logging.getLogger("a2a_actors.middleware")

#: The rest of the chain: call it with the context to run the handler.
AgentNext: TypeAlias = "Callable[[TaskContext], Awaitable[object]]"
#: An agent-side middleware (see the module docstring).
AgentMiddleware: TypeAlias = "Callable[[TaskContext, AgentNext], Awaitable[object]]"


def check_middleware(middleware: object) -> None:
    """Refuse what cannot be an agent middleware (not callable), with one line saying so.

    Raises:
        TypeError: ``middleware`` is not callable.
    """
    if not callable(middleware):
        raise TypeError(
            "a middleware is an async callable (ctx, next) -> result; "
            f"got an object of type {type(middleware).__name__!r}"
        )


class HandlerChain:
    """A handler with middleware around it; called like a handler, ``await chain(ctx)``.

    Attributes:
        inner: The handler the chain ends in.
        middleware: The chain, outermost first.
    """

    __slots__ = ("_run", "inner", "middleware")

    def __init__(self, inner: AgentNext, middleware: Sequence[AgentMiddleware]) -> None:
        for m in middleware:
            check_middleware(m)
        self.inner = inner
        self.middleware = tuple(middleware)
        run: AgentNext = inner
        for m in reversed(self.middleware):
            run = _link(m, run)
        self._run = run

    async def __call__(self, ctx: TaskContext) -> object:
        return await self._run(ctx)

    def __repr__(self) -> str:
        return f"HandlerChain({self.inner!r}, {len(self.middleware)} middleware)"


def innermost(handler: object) -> object:
    """The handler ``handler``'s chains end in (``handler`` itself when it is no chain):
    what a server asks about the agent (an orchestrated agent's ``open_delegator``, so
    that a served pipeline with middleware still brings its delegator) is its."""
    while isinstance(handler, HandlerChain):
        handler = handler.inner
    return handler


def _link(middleware: AgentMiddleware, rest: AgentNext) -> AgentNext:
    async def step(ctx: TaskContext) -> object:
        return await middleware(ctx, rest)

    return step


def watched(ctx: TaskContext, on_event: Callable[[str, Task], object]) -> TaskContext:
    """``ctx.watched(on_event)``: the context to pass to ``next`` to see each action the
    handler takes, as it takes it (see :meth:`~a2a_actors.runtime._context.TaskContext.watched`)."""
    return ctx.watched(on_event)


def log_calls(
    logger_: logging.Logger | None = None, *, level: int = logging.INFO
) -> AgentMiddleware:
    """A middleware that logs each run of the handler: its task, how long it took, and
    how it ended.

    Lines: ``agent <name> task <id>: returned in <ms> ms (<state>)`` (the state before the
    return value is applied: ``TASK_STATE_WORKING`` unless the handler ended the task itself)
    and, when it raised, ``agent <name> task <id>: raised <Type> after <ms> ms`` (then the
    exception goes on and fails the task).
    """
    log = logger_ or logger

    async def log_call(ctx: TaskContext, next: AgentNext) -> object:
        started = time.perf_counter()
        try:
            result = await next(ctx)
        except Exception as exc:
            elapsed = (time.perf_counter() - started) * 1000
            log.log(
                level,
                "agent %s task %s: raised %s after %.1f ms",
                ctx.agent.name,
                ctx.task_id,
                type(exc).__name__,
                elapsed,
            )
            raise
        elapsed = (time.perf_counter() - started) * 1000
        state = ctx.task.status.state.name
        log.log(
            level,
            "agent %s task %s: returned in %.1f ms (%s)",
            ctx.agent.name,
            ctx.task_id,
            elapsed,
            state,
        )
        return result

    return log_call
