"""A remote A2A agent as a tool the model calls: what every ``remote_tool`` is built on.

:class:`RemoteCall` is the async ``(message: str) -> str`` function each framework module
wraps in its native tool type. What a call does depends on where the model runs:

* **inside a task of a served framework agent** (the bridge :func:`binds <bound>` the task's
  context for the run): the call is a delegation of that task (``orchestrator.delegate``),
  so it carries the cross-hop correlation, shows in the hop tree as the task's child,
  and a cancel of the task cancels it; a target that is a name is looked up in the
  orchestrator's registry;
* **anywhere else** (the framework agent run by hand): a plain call through a
  :class:`~a2a_actors.client.RemoteAgent` connected for the call (a name is looked up in
  the registry ``A2A_ACTORS_REGISTRY`` names), in one session per tool, without
  correlation.

Either way the tool returns text: the remote answer; for a remote question
(INPUT_REQUIRED), a text that says the agent asks and what, and the next call of the same
tool (in the same task) answers it, on the same remote task; for a remote failure, a text
that says so (the model can act on it), never an exception.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from a2a_actors.client import RemoteAgent
from a2a_actors.client._agent_tool import tool_name
from a2a_actors.client._registry.registry import REGISTRY_ENV, is_url, open_registry
from a2a_actors.client._remote_agent import Session
from a2a_actors.protocol._errors import A2AError
from a2a_actors.runtime import TaskContext
from orchestrator import DelegationError, InputRequired, delegate

__all__ = ("RemoteCall", "bound", "default_name")


@dataclass(slots=True)
class _Run:
    """One framework run in a task: its context, and the remote questions left open."""

    ctx: TaskContext
    questions: dict[int, InputRequired] = field(default_factory=dict)


_RUN: ContextVar[_Run | None] = ContextVar("a2a_actors_framework_run", default=None)


@contextmanager
def bound(ctx: TaskContext) -> Iterator[None]:
    """Make remote tools called inside the block delegations of ``ctx``'s task.

    The framework's own tasks started inside the block inherit the binding (context
    variables are copied into new asyncio tasks).
    """
    token = _RUN.set(_Run(ctx))
    try:
        yield
    finally:
        _RUN.reset(token)


def default_name(target: str) -> str:
    """A tool name for ``target``: the registry name, or the URL without its scheme."""
    return tool_name(target.split("://", 1)[-1] if is_url(target) else target)


def _asks(exc: InputRequired) -> str:
    return (
        f"The agent {exc.agent} asks: {exc.text}\n"
        "(Call this tool again with the answer to continue; its task waits.)"
    )


class RemoteCall:
    """The call behind a remote tool (see the module docstring).

    Args:
        target: The remote agent's base URL (``http(s)://...``) or its registry name.
        name: The tool's name (:func:`default_name` of ``target`` when None).
        description: The tool's description for the model.
    """

    def __init__(self, target: str, *, name: str | None = None, description: str | None = None):
        if not isinstance(target, str) or not target:
            raise TypeError("remote_tool needs the agent's URL or registry name")
        self.target = target
        self.name = tool_name(name) if name else default_name(target)
        self.description = description or (
            f"Send a message to the A2A agent {target} and get its answer. If it asks a "
            "question, call again with the answer."
        )
        self._session = Session(f"tool:{self.name}")

    async def __call__(self, message: str) -> str:
        """Send ``message``; the answer, the question asked, or the failure, as text."""
        run = _RUN.get()
        if run is None:
            return await self._call_directly(message)
        pending = run.questions.pop(id(self), None)
        try:
            if pending is not None:
                result = await pending.answer(message)
            else:
                result = await delegate(run.ctx, self.target, message, relay_input=False)
        except InputRequired as exc:
            run.questions[id(self)] = exc
            return _asks(exc)
        except DelegationError as exc:
            return f"The agent failed: {exc}"
        return result.text

    async def _call_directly(self, message: str) -> str:
        try:
            url = await self._url()
            async with await RemoteAgent.connect(url) as remote:
                result = await remote.call(message, session=self._session)
        except (A2AError, OSError, ValueError) as exc:
            return f"The agent failed: {exc}"
        if result.needs_input:
            return f"The agent asks: {result.text}\n(Call this tool again with the answer.)"
        return result.text

    async def _url(self) -> str:
        if is_url(self.target):
            return self.target
        spec = os.environ.get(REGISTRY_ENV, "")
        if not spec:
            raise ValueError(
                f"{self.target!r} is not a URL, and no registry is set ({REGISTRY_ENV})"
            )
        async with open_registry(spec) as registry:
            return (await registry.resolve(self.target)).url
