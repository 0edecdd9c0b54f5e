"""What users write: an agent is an async function of a :class:`TaskContext`.

An :class:`Agent` pairs that function (its *handler*) with the description an AgentCard
needs (name, version, skills, extensions, media types). Three spellings are accepted
wherever an agent is expected, and :func:`as_agent` turns each into an :class:`Agent`:

* an :class:`Agent`, usually made with the :func:`agent` decorator::

      @agent(name="echo", description="Says it back")
      async def echo(ctx: TaskContext) -> str:
          return ctx.text

* a plain async function of a context (its ``__name__`` becomes the agent name);
* an object with ``async def handle(self, ctx)``.

A handler's return value finishes the task unless the handler already did:
``None`` completes it, a ``str`` or ``Message`` completes it with that as the status
message, an ``Artifact`` (or a sequence of them) is added and then the task completes.
Anything else fails the task as an invalid agent response. Raising fails the task with the
error text as its status message.

:class:`Delegator` is the seam the orchestrator layer implements so that
``ctx.delegate(...)`` can reach other agents; the runtime only calls it.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, TypeAlias, overload

from a2a_actors.protocol._card import AgentExtension, AgentSkill
from a2a_actors.runtime._handlers import check_handler
from a2a_actors.runtime._interfaces import Delegator as Delegator
from a2a_actors.runtime.middleware import AgentMiddleware, HandlerChain

if TYPE_CHECKING:
    from a2a_actors.runtime._context import TaskContext

__all__ = ("Agent", "AgentHandler", "Delegator", "agent", "as_agent")

#: The function an agent is made of: it receives the task's context and may return
#: ``None``, a ``str``, a ``Message``, or one or more ``Artifact`` objects.
AgentHandler: TypeAlias = "Callable[[TaskContext], Awaitable[object]]"

_TEXT = ("text/plain",)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Agent:
    """An agent: its handler plus what its AgentCard says about it.

    Attributes:
        handler: The async function that runs once per task (and resumes after ``ask``).
        name: Shown on the card; defaults to the handler's ``__name__`` in :func:`agent`.
        description: Shown on the card.
        version: The agent's own version (not the protocol's).
        skills: Declared skills.
        extensions: Extensions declared on the card (``capabilities.extensions``).
        input_modes: Default input media types.
        output_modes: Default output media types.
        middleware: Agent-side middleware around the handler, outermost first (see
            :mod:`.middleware`). Composed when the Agent is built: ``handler`` becomes the
            :class:`~.middleware.HandlerChain` and this field is then ``()``.
        timeout: Seconds a task may run (waiting for input does not count); past them the
            handler is interrupted and the task FAILED. None: the server's
            ``task_timeout``, if any.
    """

    handler: AgentHandler
    name: str
    description: str = ""
    version: str = "1.0.0"
    skills: tuple[AgentSkill, ...] = ()
    extensions: tuple[AgentExtension, ...] = ()
    input_modes: tuple[str, ...] = _TEXT
    output_modes: tuple[str, ...] = _TEXT
    middleware: Sequence[AgentMiddleware] = ()
    timeout: float | None = None

    def __post_init__(self) -> None:
        check_handler(self.handler)  # refused now, not at every task (see .handlers)
        if self.timeout is not None and not self.timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds; got {self.timeout}")
        if self.middleware:
            # Frozen, so set through object: composed once (replace() copies the chain).
            object.__setattr__(self, "handler", HandlerChain(self.handler, self.middleware))
            object.__setattr__(self, "middleware", ())


@overload
def agent(fn: AgentHandler, /) -> Agent: ...


@overload
def agent(
    fn: None = None,
    /,
    *,
    name: str | None = None,
    description: str = "",
    version: str = "1.0.0",
    skills: tuple[AgentSkill, ...] = (),
    extensions: tuple[AgentExtension, ...] = (),
    input_modes: tuple[str, ...] = _TEXT,
    output_modes: tuple[str, ...] = _TEXT,
    middleware: Sequence[AgentMiddleware] = (),
    timeout: float | None = None,
) -> Callable[[AgentHandler], Agent]: ...


def agent(
    fn: AgentHandler | None = None,
    /,
    *,
    name: str | None = None,
    description: str = "",
    version: str = "1.0.0",
    skills: tuple[AgentSkill, ...] = (),
    extensions: tuple[AgentExtension, ...] = (),
    input_modes: tuple[str, ...] = _TEXT,
    output_modes: tuple[str, ...] = _TEXT,
    middleware: Sequence[AgentMiddleware] = (),
    timeout: float | None = None,
) -> Agent | Callable[[AgentHandler], Agent]:
    """Make an :class:`Agent` from a handler; usable bare (``@agent``) or with options.

    The name defaults to the handler's ``__name__``; the description to its docstring's
    first line when not given.
    """

    def wrap(handler: AgentHandler) -> Agent:
        doc = inspect.getdoc(handler) or ""
        return Agent(
            handler=handler,
            name=name if name is not None else getattr(handler, "__name__", "agent"),
            description=description or (doc.splitlines()[0] if doc else ""),
            version=version,
            skills=tuple(skills),
            extensions=tuple(extensions),
            input_modes=tuple(input_modes),
            output_modes=tuple(output_modes),
            middleware=tuple(middleware),
            timeout=timeout,
        )

    return wrap if fn is None else wrap(fn)


def as_agent(obj: object) -> Agent:
    """Turn ``obj`` into an :class:`Agent`.

    Accepts an :class:`Agent` (returned as is), an object with a callable ``handle``
    attribute (``async def handle(self, ctx)``; ``name``/``description`` attributes are
    used when present), or an async callable of a context.

    Raises:
        TypeError: ``obj`` is none of these, or its handler is not an ``async def`` of one
            argument (see :mod:`a2a_actors.runtime._handlers`).
    """
    if isinstance(obj, Agent):
        return obj
    handle = getattr(obj, "handle", None)
    if callable(handle) and not inspect.isfunction(obj):
        doc = inspect.getdoc(type(obj)) or ""
        return Agent(
            handler=handle,
            name=str(getattr(obj, "name", type(obj).__name__)),
            description=str(getattr(obj, "description", doc.splitlines()[0] if doc else "")),
        )
    if callable(obj):
        return agent(obj)
    raise TypeError(
        f"expected an Agent, an async function of a TaskContext or an object with an "
        f"async handle(ctx) method; got {type(obj).__name__}"
    )
