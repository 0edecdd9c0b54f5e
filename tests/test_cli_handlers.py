"""Handlers are checked when an agent is built or served, not at its first task.

``@agent``, ``Agent(...)``, ``as_agent`` and ``a2a-actors serve`` refuse anything that is
not an ``async def`` of one context argument (or an object with such a ``handle``), in one
line; every spelling that works keeps working.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from a2a_actors.cli import main
from a2a_actors.runtime import Agent, TaskContext, agent, as_agent

# -- module-level targets for ``a2a-actors serve tests.test_cli_handlers:NAME`` --------------


def plain(ctx: TaskContext) -> str:
    return ctx.text


async def two_args(ctx: TaskContext, extra: str) -> str:
    return ctx.text + extra


class Handles:
    """An agent object; serving the class instead of an instance is a mistake."""

    async def handle(self, ctx: TaskContext) -> str:
        return ctx.text


async def good(ctx: TaskContext) -> str:
    return ctx.text


# -- what keeps working ----------------------------------------------------------------


class _AsyncCallable:
    async def __call__(self, ctx: TaskContext) -> str:
        return ctx.text


def _wrapping(fn: Callable[[TaskContext], Awaitable[str]]) -> Callable[[TaskContext], object]:
    @functools.wraps(fn)
    def wrapper(ctx: TaskContext) -> Awaitable[str]:
        return fn(ctx)

    return wrapper


@pytest.mark.parametrize(
    "handler",
    [
        good,
        functools.partial(two_args, extra="!"),
        _AsyncCallable(),
        functools.partial(_AsyncCallable()),
        Handles().handle,
        _wrapping(good),
        staticmethod(good),
    ],
    ids=["async-def", "partial", "async-call", "partial-of-callable", "bound", "wraps", "static"],
)
def test_valid_handlers_are_accepted(handler: Any) -> None:
    assert Agent(handler=handler, name="x").handler is handler
    assert as_agent(handler).handler is handler
    assert agent(handler).handler is handler


def test_an_object_with_handle_is_accepted() -> None:
    made = as_agent(Handles())
    assert made.name == "Handles"


# -- what is refused ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "says"),
    [
        (plain, "function 'plain' is not async; an agent handler must be an async def"),
        (lambda ctx: None, "function '<lambda>' is not async"),
        (two_args, "function 'two_args' takes (ctx: 'TaskContext', extra: 'str')"),
        (functools.partial(plain), "functools.partial of function 'plain' is not async"),
        (TaskContext, "'TaskContext' is a class; an agent handler must be an async def"),
        (Handles, "'Handles.handle' takes (self, ctx: 'TaskContext')"),
        ("text", "got str"),
    ],
)
def test_bad_handlers_are_refused_in_one_line(target: object, says: str) -> None:
    with pytest.raises(TypeError) as caught:
        as_agent(target)
    message = str(caught.value)
    assert says in message
    assert "\n" not in message
    if callable(target) and not isinstance(target, type):
        with pytest.raises(TypeError, match=r"not async|takes"):
            Agent(handler=target, name="x")
        with pytest.raises(TypeError, match=r"not async|takes"):
            agent(target)


def test_agent_decorator_with_options_refuses_a_plain_def() -> None:
    with pytest.raises(TypeError, match="function 'plain' is not async"):
        agent(name="p")(plain)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("plain", "function 'plain' is not async"),
        ("two_args", "takes (ctx"),
        ("Handles", "serve an instance, not the class"),
        ("TaskContext", "'TaskContext' is a class"),
    ],
)
def test_serve_refuses_bad_handlers_with_status_2(
    name: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["serve", f"tests.test_cli_handlers:{name}"])
    out, err = capsys.readouterr()
    assert status == 2
    assert out == ""
    assert err.startswith("a2a-actors serve: ")
    assert says in err
    assert err.count("\n") == 1
