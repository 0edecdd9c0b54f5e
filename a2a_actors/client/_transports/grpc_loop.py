"""Where the gRPC transport's ``grpc.aio`` work runs: on the caller's asyncio loop, or, for a
caller on trio, on a private asyncio loop in a thread the transport owns.

``grpc.aio`` is built on asyncio: its channels and calls belong to the loop they were
created on. A caller on asyncio awaits them directly (:class:`CallerLoop`, no overhead
beyond one call). A caller on trio hands each step (start a call, read the next stream
message, close the channel) to a :class:`ThreadLoop` and waits for it without blocking trio:
the step's completion wakes the waiting trio task through its ``TrioToken``. Cancelling the
trio side cancels the step on the asyncio side (which cancels the RPC). Either way the
transport's code is the same sequence of steps; only who runs them differs.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

import anyio
import sniffio

__all__ = ("CallerLoop", "LoopRunner", "ThreadLoop", "runner_for_current_loop")

T = TypeVar("T")


class LoopRunner(Protocol):
    """Runs ``grpc.aio`` steps on the asyncio loop that owns the transport's channel."""

    async def run(self, step: Callable[[], Awaitable[T]]) -> T:
        """Run ``step()`` on the owning loop and return its result (or raise its error)."""
        ...

    def call_soon(self, fn: Callable[[], object]) -> None:
        """Call ``fn()`` on the owning loop, without waiting (e.g. to cancel a call)."""
        ...

    async def aclose(self) -> None:
        """Release the loop if this runner owns one."""
        ...


class CallerLoop:
    """The caller runs on asyncio: steps are awaited in place."""

    async def run(self, step: Callable[[], Awaitable[T]]) -> T:
        """Await ``step()`` here."""
        return await step()

    def call_soon(self, fn: Callable[[], object]) -> None:
        """Call ``fn()`` now."""
        fn()

    async def aclose(self) -> None:
        """Nothing to release."""


async def _await(step: Callable[[], Awaitable[T]]) -> T:
    return await step()


async def _finish_tasks() -> None:
    """Cancel and await every other task of the running loop (grpc's own, after a close)."""
    current = asyncio.current_task()
    tasks = [task for task in asyncio.all_tasks() if task is not current]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await asyncio.get_running_loop().shutdown_asyncgens()


class ThreadLoop:
    """A private asyncio loop in a daemon thread, driven from trio."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="a2a-actors-grpc", daemon=True
        )
        self._thread.start()

    async def run(self, step: Callable[[], Awaitable[T]]) -> T:
        """Run ``step()`` on the private loop; cancelling the caller cancels it there."""
        import trio

        token = trio.lowlevel.current_trio_token()
        done = trio.Event()

        def wake(_: object) -> None:
            with contextlib.suppress(trio.RunFinishedError):
                token.run_sync_soon(done.set)

        future = asyncio.run_coroutine_threadsafe(_await(step), self._loop)
        future.add_done_callback(wake)
        try:
            await done.wait()
        finally:
            if not future.done():
                future.cancel()
        return future.result()

    def call_soon(self, fn: Callable[[], object]) -> None:
        """Schedule ``fn()`` on the private loop."""
        if not self._loop.is_closed():
            self._loop.call_soon_threadsafe(fn)

    async def aclose(self) -> None:
        """Finish what still runs on the private loop, stop it and wait for its thread."""
        if self._loop.is_closed():
            return
        await self.run(_finish_tasks)
        self._loop.call_soon_threadsafe(self._loop.stop)
        await anyio.to_thread.run_sync(self._thread.join)
        self._loop.close()


def runner_for_current_loop() -> LoopRunner:
    """:class:`CallerLoop` on asyncio, :class:`ThreadLoop` on trio."""
    if sniffio.current_async_library() == "asyncio":
        return CallerLoop()
    return ThreadLoop()
