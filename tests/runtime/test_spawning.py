"""Where actors run (runtime/_spawning.py): a trio nursery on trio, anyio's task group else."""

from __future__ import annotations

import anyio
import pytest
import sniffio

from a2a_actors.runtime._spawning import actor_nursery

pytestmark = pytest.mark.anyio


async def test_spawned_tasks_run_and_are_waited_for() -> None:
    finished: list[int] = []

    async def work(n: int) -> None:
        await anyio.lowlevel.checkpoint()
        finished.append(n)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg, actor_nursery(tg) as spawn:
            handles = [spawn(lambda n=n: work(n)) for n in range(3)]  # type: ignore[misc]
            assert finished == []
    assert sorted(finished) == [0, 1, 2]
    if sniffio.current_async_library() == "trio":
        assert handles == [None, None, None]  # a plain trio task: no anyio handle to cancel
    else:
        assert all(callable(getattr(handle, "cancel", None)) for handle in handles)


async def test_cancelling_the_group_cancels_the_spawned_tasks() -> None:
    cancelled = anyio.Event()
    started = anyio.Event()

    async def park() -> None:
        try:
            started.set()
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            cancelled.set()
            raise

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg, actor_nursery(tg) as spawn:
            spawn(park)
            await started.wait()
            tg.cancel_scope.cancel()
    assert cancelled.is_set()
