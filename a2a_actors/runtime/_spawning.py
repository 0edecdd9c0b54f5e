"""Where a supervisor's actors run: a trio nursery on trio, the anyio task group elsewhere.

anyio's ``TaskGroup.start_soon`` wraps every task in a ``TaskHandle`` (from anyio 4.14): a
cancel scope around the task, an event set when it ends and a wrapper coroutine. An actor
tells its environment itself when it ends, and on trio the wrapper is most of what
spawning an actor costs (see benchmarks/README.md), so there actors are spawned into a
trio nursery opened inside the supervisor's task group, and open their own cancel scope.
On asyncio anyio's task group is used as it is, and the actor cancels the handle's scope.

Either way the actors are children of the supervisor's run: cancelling it cancels them,
and it returns only once every actor has returned.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any

import anyio.abc
import sniffio

__all__ = ("Spawn", "actor_nursery")

#: Starts ``run()`` as a new task; returns anyio's task handle, or None (trio nursery).
Spawn = Callable[[Callable[[], Coroutine[Any, Any, None]]], object]


@asynccontextmanager
async def actor_nursery(task_group: anyio.abc.TaskGroup) -> AsyncIterator[Spawn]:
    """Yield the function that spawns actors, inside ``task_group`` (see the module).

    Leaving the block waits for every task spawned; on cancellation they are cancelled.
    """
    if sniffio.current_async_library() == "trio":
        import trio

        async with trio.open_nursery() as nursery:
            yield nursery.start_soon
    else:
        yield task_group.start_soon
