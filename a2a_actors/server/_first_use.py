"""Starting an app's runtime on its first request, when nothing ran its lifespan (an app
mounted in a host framework: see :mod:`a2a_actors.server._mounting`)."""

from __future__ import annotations

import asyncio
import logging

import sniffio

from a2a_actors.server._service import A2AService

__all__ = ("start_on_first_use",)

logger = logging.getLogger(__name__)

#: Detached runtimes on asyncio: the loop keeps only weak references to its tasks.
_DETACHED: set[asyncio.Task[None]] = set()


async def start_on_first_use(service: A2AService) -> None:
    """Make sure ``service`` serves: start it detached if nothing ever ran it, then wait.

    Raises:
        ServerNotRunningError: The service stopped (it was shut down, or failed to start).
    """
    if service.claim():
        _spawn_detached(service)
    await service.wait_serving()


async def _run_detached(service: A2AService) -> None:
    try:
        await service.run()
    except Exception:  # nobody awaits a detached task: say why it stopped
        logger.exception("a2a-actors: the runtime of a mounted app stopped")


def _spawn_detached(service: A2AService) -> None:
    if sniffio.current_async_library() == "trio":
        import trio

        trio.lowlevel.spawn_system_task(_run_detached, service, name="a2a-actors service")
        return
    task = asyncio.get_running_loop().create_task(_run_detached(service), name="a2a-actors service")
    _DETACHED.add(task)
    task.add_done_callback(_DETACHED.discard)
