"""On the same target, ``a2a-actors bench`` and wrk agree on the rate (when wrk is installed).

Not a timing assertion: both measure the same local server one after the other, three
times, and their median rates must agree within 15%. The server answers each request after
a fixed 20 ms, so its rate is set by its timer rather than by how much CPU this shared
machine leaves it, and the comparison is of the two generators' counting, not of noise.
"""

from __future__ import annotations

import re
import shutil
import statistics
from pathlib import Path

import pytest
import trio

from .helpers import TIMEOUT, Request, bench, raw_server, rpc_result, task

pytestmark = pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed")

BODY = (
    '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":'
    '{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}'
)
LUA = f"""
wrk.method = "POST"
wrk.body = [==[{BODY}]==]
wrk.headers["Content-Type"] = "application/json"
wrk.headers["A2A-Version"] = "1.0"
"""


async def _wrk(url: str, script: Path) -> float:
    command = ["wrk", "-t1", "-c8", "-d1s", "-s", str(script), url]
    done = await trio.run_process(command, capture_stdout=True, check=True)
    out = done.stdout.decode()
    assert "Non-2xx" not in out, out
    match = re.search(r"Requests/sec:\s+([0-9.]+)", out)
    assert match is not None, out
    return float(match.group(1))


async def _bench(url: str) -> float:
    run = await bench(
        url,
        "--binding",
        "jsonrpc",
        "--json",
        "--concurrency",
        "8",
        "--duration",
        "1",
        "--warmup",
        "0.3",
    )
    assert run.status == 0, run
    rate: float = run.only()["ops_per_s"]
    return rate


async def _slow(request: Request) -> bytes:
    await trio.sleep(0.02)
    return rpc_result({"task": task("COMPLETED")})


async def test_bench_agrees_with_wrk_within_15_percent(tmp_path: Path) -> None:
    script = tmp_path / "send.lua"
    script.write_text(LUA)
    with trio.fail_after(TIMEOUT * 2):
        async with raw_server(_slow) as url:
            wrk, ours = [], []
            for _ in range(3):
                wrk.append(await _wrk(url, script))
                ours.append(await _bench(url))
    assert statistics.median(ours) == pytest.approx(statistics.median(wrk), rel=0.15), (ours, wrk)
