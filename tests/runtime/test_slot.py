"""RunSlot alone, over a real Admission: claiming, queueing, waiting, pausing, releasing."""

from __future__ import annotations

import anyio
import pytest

from a2a_actors.runtime._admission import Admission
from a2a_actors.runtime._slot import RunSlot

pytestmark = pytest.mark.anyio


def counts(admission: Admission) -> tuple[int, int]:
    stats = admission.statistics()
    return stats.running, stats.queued


def test_claim_takes_a_free_slot_and_release_gives_it_back() -> None:
    admission = Admission(max_live=None, max_running=1)
    slot = RunSlot(admission)
    assert slot.claim()
    assert (slot.running, slot.queued) == (True, False)
    assert slot.claim()  # already held: nothing more taken
    assert counts(admission) == (1, 0)
    slot.release()
    assert (slot.running, counts(admission)) == (False, (0, 0))
    slot.release()  # holds nothing: no-op
    assert counts(admission) == (0, 0)


def test_claim_without_a_free_slot_takes_one_ticket() -> None:
    admission = Admission(max_live=None, max_running=1)
    first, second = RunSlot(admission), RunSlot(admission)
    assert first.claim()
    assert not second.claim()
    assert not second.claim()  # the same ticket, not a second one
    assert (second.running, second.queued) == (False, True)
    assert counts(admission) == (1, 1)
    second.release()  # abandons the ticket
    assert (second.queued, counts(admission)) == (False, (1, 0))


async def test_wait_gets_the_slot_in_arrival_order() -> None:
    with anyio.fail_after(5):
        admission = Admission(max_live=None, max_running=1)
        holder, a, b = RunSlot(admission), RunSlot(admission), RunSlot(admission)
        assert holder.claim()
        assert not a.claim()
        assert not b.claim()
        order: list[str] = []

        async def run(name: str, slot: RunSlot) -> None:
            await slot.wait()
            order.append(name)
            slot.give_back()

        async with anyio.create_task_group() as tg:
            tg.start_soon(run, "b", b)
            tg.start_soon(run, "a", a)
            await anyio.wait_all_tasks_blocked()
            holder.give_back()
        assert order == ["a", "b"]
        assert counts(admission) == (0, 0)


async def test_a_cancelled_wait_holds_nothing() -> None:
    with anyio.fail_after(5):
        admission = Admission(max_live=None, max_running=1)
        holder, waiter = RunSlot(admission), RunSlot(admission)
        assert holder.claim()
        assert not waiter.claim()
        async with anyio.create_task_group() as tg:
            tg.start_soon(waiter.wait)
            await anyio.wait_all_tasks_blocked()
            assert (waiter.running, waiter.queued) == (False, True)  # waiting for the slot
            tg.cancel_scope.cancel()
        assert (waiter.running, waiter.queued) == (False, False)
        assert counts(admission) == (1, 0)
        holder.give_back()
        assert counts(admission) == (0, 0)


def test_pause_gives_the_slot_back_once_and_nested_pauses_defer_to_the_outer() -> None:
    admission = Admission(max_live=None, max_running=2)
    slot = RunSlot(admission)
    assert slot.claim()
    assert slot.pause()
    assert (slot.paused, slot.running, counts(admission)) == (True, False, (0, 0))
    assert not slot.pause()  # nested: the outer pause resumes
    slot.end_pause()
    assert not slot.paused
    assert slot.claim()
    assert counts(admission) == (1, 0)
