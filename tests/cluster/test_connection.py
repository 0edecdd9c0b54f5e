"""A connection's acknowledged publishes: the inbox is there before the first write, many
writes in flight at once each get their own answer, refusals are told apart."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from nats.js.api import StreamConfig
from nats.js.errors import APIError, KeyWrongLastSequenceError

from a2a_actors.cluster._bucket import FollowedBucket, KVChange
from a2a_actors.cluster._connection import acked_sequence

from .helpers import connect, nats_server

pytestmark = pytest.mark.anyio


async def test_the_first_writes_of_a_new_connection_are_all_acknowledged(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with nats_server(tmp_path) as server:
            async with connect(server) as setup:
                await setup.js.add_stream(StreamConfig(name="S", subjects=["s.>"]))
            for _ in range(5):  # a fresh connection each time: the first writes race nothing
                async with connect(server, timeout=2.0) as conn:
                    with conn.bounded("write"):
                        acks = [await conn.publish_acked(f"s.{n}", b"x", {}) for n in range(100)]
                        sequences = [acked_sequence(await ack) for ack in acks]
                    assert sequences == sorted(sequences)
                    assert len(set(sequences)) == 100


async def test_refusals_are_errors_and_a_conditional_write_that_lost_says_so(
    tmp_path: Path,
) -> None:
    async def apply(_: KVChange) -> None:
        return None

    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as conn,
            FollowedBucket.open(conn, "B", apply) as bucket,
        ):
            with conn.bounded("write"):
                first = await bucket.update("k", b"1", last=0)
                second = await bucket.update("k", b"2", last=first)
                with pytest.raises(KeyWrongLastSequenceError):
                    await bucket.update("k", b"3", last=first)  # another write came first
                with pytest.raises(KeyWrongLastSequenceError):
                    await bucket.update("k", b"3", last=0)  # it exists
                ack = await conn.publish_acked("nobody.takes.this", b"x", {})
                with pytest.raises(APIError) as refused:
                    acked_sequence(await ack)
                assert refused.value.code == 503
            entry = await bucket.kv.get("k")
            assert (entry.revision, entry.value) == (second, b"2")
