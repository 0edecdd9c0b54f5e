"""Node leases: epochs, a lost node seen by the others within the lease time, fencing of
a node whose lease was taken, a graceful release seen at once."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from a2a_actors.cluster import LeaseLostError
from a2a_actors.cluster._leases import LeaseHeldError, NodeEvent, NodeLeases

from .helpers import connect, nats_server

pytestmark = pytest.mark.anyio

TTL = 2.0  # short, yet long enough for a renewal on a loaded 2-core machine


async def test_a_node_id_has_one_holder_and_each_incarnation_a_higher_epoch(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(30):
        async with nats_server(tmp_path) as server, connect(server) as a, connect(server) as b:
            leases_a = await NodeLeases.open(a, ttl=TTL)
            leases_b = await NodeLeases.open(b, ttl=5.0)
            assert leases_b.ttl == TTL  # the bucket's lease time wins
            first = await leases_a.acquire("n1", url="http://n1")
            with pytest.raises(LeaseHeldError):
                await leases_b.acquire("n1", wait=False)
            assert await leases_b.live() == {"n1": first.record}
            renewed = await leases_a.renew(first)
            assert (renewed.epoch, renewed.revision > first.revision) == (first.epoch, True)
            started = time.monotonic()
            second = await leases_b.acquire("n1")  # waits until the first lease expires
            assert time.monotonic() - started >= TTL * 0.5
            assert second.epoch > first.epoch
            with pytest.raises(LeaseLostError, match="lost its lease"):
                await leases_a.renew(renewed)  # the old incarnation is fenced
            await leases_b.release(second)
            assert await leases_b.live() == {}


async def test_a_lost_node_is_seen_expired_and_a_stopped_one_released(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with nats_server(tmp_path) as server, connect(server) as a, connect(server) as b:
            leases = await NodeLeases.open(b, ttl=TTL)
            async with leases.follow() as events:
                # n1 stops renewing without releasing (a SIGKILL, as far as NATS can tell)
                crashed = await (await NodeLeases.open(a)).acquire("n1")
                assert await events.receive() == NodeEvent("n1", crashed.record)
                started = time.monotonic()
                assert await events.receive() == NodeEvent("n1", None, expired=True)
                assert time.monotonic() - started < TTL * 3
                # n2 holds its lease for longer than the lease time, then stops cleanly
                async with anyio.create_task_group() as tg:
                    lease = await tg.start(NodeLeases.hold, await NodeLeases.open(a), "n2")
                    assert await events.receive() == NodeEvent("n2", lease.record)
                    renewals = 0
                    while renewals < 4:  # about 1.3 lease times
                        event = await events.receive()
                        assert event == NodeEvent("n2", lease.record)
                        renewals += 1
                    tg.cancel_scope.cancel()
                assert await events.receive() == NodeEvent("n2", None, expired=False)


async def test_a_node_cut_from_nats_for_a_lease_time_fences_itself(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with nats_server(tmp_path) as server, connect(server, timeout=0.3) as a:
            leases = await NodeLeases.open(a, ttl=TTL)
            lost = pytest.RaisesExc(LeaseLostError, match="could not renew")
            with pytest.RaisesGroup(lost):
                async with anyio.create_task_group() as tg:
                    await tg.start(leases.hold, "n1")
                    await server.stop()
                    started = time.monotonic()
                    await anyio.sleep_forever()
            assert time.monotonic() - started <= TTL + 0.5
