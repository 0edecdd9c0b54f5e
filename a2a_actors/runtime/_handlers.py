"""What an agent handler must be, checked when the agent is built (not at its first task).

A handler is called once per task with the task's context and awaited. Anything else can
never work, and used to start serving only to fail every task ("object str can't be used
in 'await' expression"), so :func:`check_handler` refuses it up front with one line saying
why. Accepted:

* an ``async def`` function of one positional argument (bound methods, ``staticmethod``\\ s
  and ``functools.partial`` objects leaving one argument included);
* an object whose class defines ``async def __call__(self, ctx)`` (or a partial of one);
* a function whose ``__wrapped__`` chain (``functools.wraps``) ends at such an
  ``async def``: a decorator that returns the coroutine of the function it wraps.

"One positional argument" is checked with :func:`inspect.signature`: the handler must be
callable as ``handler(ctx)``; extra parameters with defaults are fine. Callables whose
signature cannot be read (some builtins) are not refused on that ground.
"""

from __future__ import annotations

import functools
import inspect
import types
import weakref

__all__ = ("check_handler",)

_EXPECTED = "an agent handler must be an async def of one argument, the task context"


def check_handler(handler: object) -> None:
    """Refuse ``handler`` unless it can be called as ``await handler(ctx)``.

    Raises:
        TypeError: One line naming the handler and what is wrong with it.
    """
    key = _cache_key(handler)
    if key is None:
        problem = _problem(handler)
    else:
        try:
            problem = _VERDICTS[key]
        except KeyError:
            problem = _VERDICTS[key] = _problem(handler)
    if problem is not None:
        raise TypeError(problem)


#: What :func:`_problem` said, by function or by class of callable object: agents are built
#: per delegation (``orchestrated`` wraps every local child), and reading a signature costs
#: tens of microseconds.
_VERDICTS: weakref.WeakKeyDictionary[object, str | None] = weakref.WeakKeyDictionary()


def _cache_key(handler: object) -> object | None:
    """The handler itself for a plain function; its class for a callable object (whose
    ``__call__`` is the class's); None (not cached) otherwise."""
    if isinstance(handler, types.FunctionType):
        return handler
    if isinstance(handler, type | functools.partial) or inspect.isroutine(handler):
        return None
    return type(handler) if callable(handler) else None


def _problem(handler: object) -> str | None:
    """Why ``handler`` is not an agent handler, or None when it is one."""
    if not callable(handler):
        return f"{_EXPECTED} (or an object with such a handle method); got {_name(handler)}"
    if inspect.isclass(handler):
        return (
            f"{handler.__qualname__!r} is a class; {_EXPECTED} "
            "(serve an instance of a class with async def handle(self, ctx) instead)"
        )
    if not _is_async(handler):
        return f"{_name(handler)} is not async; {_EXPECTED}"
    try:
        signature = inspect.signature(handler)
    except (TypeError, ValueError):  # no readable signature: let it be tried
        return None
    try:
        signature.bind(None)
    except TypeError:
        hint = ""
        if next(iter(signature.parameters), "") == "self":
            hint = " (an unbound method: serve an instance, not the class)"
        return f"{_name(handler)} takes {signature}; {_EXPECTED}{hint}"
    return None


def _is_async(handler: object) -> bool:
    target = handler
    while isinstance(target, functools.partial):
        target = target.func
    if inspect.iscoroutinefunction(target):
        return True
    if hasattr(target, "__wrapped__"):
        # functools.wraps (a decorator returning the wrapped coroutine), staticmethod...
        unwrapped = inspect.unwrap(target)  # type: ignore[arg-type]
        return unwrapped is not target and _is_async(unwrapped)
    if inspect.isroutine(target):
        return False
    return inspect.iscoroutinefunction(type(target).__call__)


def _name(handler: object) -> str:
    if isinstance(handler, functools.partial):
        return f"functools.partial of {_name(handler.func)}"
    qualname = getattr(handler, "__qualname__", None)
    if isinstance(qualname, str) and inspect.isroutine(handler):
        return f"function {qualname!r}"
    return f"an object of type {type(handler).__name__!r}"
