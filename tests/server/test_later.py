"""Coarse timers (server/_http/later.py): one task serves every pending call."""

from __future__ import annotations

import logging

import anyio
import pytest

from a2a_actors.server._http.later import Later

pytestmark = pytest.mark.anyio


async def test_calls_run_in_order_once_due() -> None:
    later = Later(tick=0.01)
    ran: list[tuple[str, float]] = []
    done = anyio.Event()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            later.attach(tg)
            start = anyio.current_time()
            later.call(0.02, lambda: ran.append(("a", anyio.current_time())))
            later.call(0.02, lambda: ran.append(("b", anyio.current_time())))
            later.call(0.05, done.set)
            assert later.pending == 3
            await done.wait()
    assert [name for name, _ in ran] == ["a", "b"]
    assert all(at >= start + 0.02 for _, at in ran)
    assert later.pending == 0


async def test_a_call_due_now_runs_without_waiting_for_a_tick() -> None:
    later = Later(tick=60)
    done = anyio.Event()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            later.attach(tg)
            later.call(0, done.set)
            await done.wait()


async def test_calls_close_together_share_a_wake_up() -> None:
    # Delays well above a loaded machine's scheduling delays: a timer task that starts
    # after its first call is due runs it at once, without sleeping a tick.
    later = Later(tick=0.4)
    ran: list[float] = []
    done = anyio.Event()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            later.attach(tg)
            start = anyio.current_time()
            later.call(0.1, lambda: ran.append(anyio.current_time()))
            later.call(0.2, lambda: ran.append(anyio.current_time()))
            later.call(0.2, done.set)
            await done.wait()
    # The task slept a whole tick, not 100 ms, then made both calls in one go.
    assert ran[0] >= start + 0.4
    assert ran[1] - ran[0] < 0.05


async def test_without_a_task_group_calls_are_dropped() -> None:
    later = Later()
    later.call(0, lambda: None)
    assert later.pending == 0
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            later.attach(tg)
            later.call(10, lambda: None)
            assert later.pending == 1
            later.attach(None)  # shutting down: pending calls are forgotten
            assert later.pending == 0
            later.call(0, lambda: None)
            assert later.pending == 0


async def test_a_failing_call_is_logged_and_the_others_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    later = Later(tick=0.01)
    done = anyio.Event()

    def boom() -> None:
        raise RuntimeError("boom")

    with anyio.fail_after(5), caplog.at_level(logging.ERROR, "a2a_actors.server"):
        async with anyio.create_task_group() as tg:
            later.attach(tg)
            later.call(0, boom)
            later.call(0, done.set)
            await done.wait()
    assert "a delayed call failed" in caplog.text
