"""The open loop measures from each operation's intended start, so queueing shows."""

from __future__ import annotations

import trio

from .helpers import TIMEOUT, Request, bench, raw_server, rpc_result, task

STALL_S = 0.3
STALLED_REQUEST = 100  # well inside the window: 0.2 s of warm-up at 200/s is 40 requests


async def test_a_server_that_stalls_once_shows_it_in_p99() -> None:
    async def stall_once(request: Request) -> bytes:
        if request.number == STALLED_REQUEST:
            await trio.sleep(STALL_S)
        return rpc_result({"task": task("COMPLETED")})

    with trio.fail_after(TIMEOUT):
        async with raw_server(stall_once) as url:
            run = await bench(
                url,
                "--binding",
                "jsonrpc",
                "--json",
                "--rate",
                "200",
                "--connections",
                "1",
                "--duration",
                "1",
                "--warmup",
                "0.2",
            )
    assert run.status == 0, run
    result = run.only()
    assert result["model"] == "open"
    # Every operation due during the stall waited for it: about STALL_S * 200 = 60 of
    # them, about 20 waiting 200 ms or more. A generator that measured from when it sent
    # (coordinated omission) would see one slow operation, below p99.
    assert result["latency_ms"]["p99"] >= 200, result["latency_ms"]
    slow = sum(n for low, _, n in result["histogram"]["buckets"] if low >= 100_000)
    assert slow >= 10, result["histogram"]


async def test_an_open_loop_that_falls_behind_says_so() -> None:
    async def slow(request: Request) -> bytes:
        await trio.sleep(0.05)
        return rpc_result({"task": task("COMPLETED")})

    with trio.fail_after(TIMEOUT):
        async with raw_server(slow) as url:
            run = await bench(
                url,
                "--binding",
                "jsonrpc",
                "--json",
                "--rate",
                "200",
                "--connections",
                "1",
                "--duration",
                "0.5",
                "--warmup",
                "0",
            )
    result = run.only()
    assert result["backlog"] > 0
    assert result["latency_ms"]["max"] >= 100  # the queue grew all along the window
    assert "could not keep up with --rate 200" in run.stderr
