"""MemoryKeys: the idempotency keys of one process (claim, wait on the first request's
record, release, expiry, the bound). The server's use of them is tests/server/
test_idempotency.py; the cluster's store is tests/cluster/test_idempotency.py."""

from __future__ import annotations

import anyio
import pytest

from a2a_actors.stores._keys import MemoryKeys, Sent

pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_a_second_claim_waits_for_the_first_record() -> None:
    keys = MemoryKeys()
    seen: list[Sent | None] = []
    with anyio.fail_after(5):
        assert await keys.claim("k", "f1") is None
        async with anyio.create_task_group() as tg:

            async def second() -> None:
                seen.append(await keys.claim("k", "f1"))

            tg.start_soon(second)
            await anyio.wait_all_tasks_blocked()
            assert seen == []  # still waiting
            await keys.record("k", Sent("f1", task_id="t1"))
    assert seen == [Sent("f1", task_id="t1")]
    assert await keys.claim("k", "other") == Sent("f1", task_id="t1")  # the caller compares


async def test_a_released_key_is_claimed_afresh_by_who_waited() -> None:
    keys = MemoryKeys()
    seen: list[Sent | None] = []
    with anyio.fail_after(5):
        assert await keys.claim("k", "f") is None
        async with anyio.create_task_group() as tg:

            async def second() -> None:
                seen.append(await keys.claim("k", "f"))

            tg.start_soon(second)
            await anyio.wait_all_tasks_blocked()
            await keys.release("k")
        assert seen == [None]  # the waiter now holds the key: it sends
        async with anyio.create_task_group() as tg:
            tg.start_soon(second)
            await anyio.wait_all_tasks_blocked()
            assert seen == [None]  # and the next one waits on it
            tg.cancel_scope.cancel()


async def test_keys_expire_after_their_ttl() -> None:
    clock = Clock()
    keys = MemoryKeys(ttl=60, clock=clock)
    assert await keys.claim("k", "f") is None
    await keys.record("k", Sent("f", task_id="t1"))
    clock.now = 59.9
    assert await keys.claim("k", "f") == Sent("f", task_id="t1")
    clock.now = 60.0
    assert await keys.claim("k", "f") is None  # forgotten: a new send


async def test_at_most_max_keys_the_oldest_dropped_first() -> None:
    keys = MemoryKeys(max_keys=3)
    for name in "abcd":
        assert await keys.claim(name, "f") is None
        await keys.record(name, Sent("f", task_id=name))
    assert await keys.claim("b", "f") == Sent("f", task_id="b")
    assert await keys.claim("a", "f") is None  # "a" was dropped for "d"
