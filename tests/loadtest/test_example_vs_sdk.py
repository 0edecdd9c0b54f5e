"""``examples/bench_vs_sdk.py``: our echo agent and the official SDK's, measured side by side.

Also an interoperability check of the bench itself: every answer of the SDK's server, on
both bindings, passes the same validation as ours.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio

from .helpers import TIMEOUT, BenchRun

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "bench_vs_sdk.py"


@pytest.mark.parametrize(("workload", "binding"), [("send", "jsonrpc"), ("stream", "rest")])
async def test_example_compares_ours_with_the_sdk(workload: str, binding: str) -> None:
    command = [sys.executable, str(EXAMPLE), "--workload", workload, "--binding", binding]
    command += ["--duration", "0.5", "--warmup", "0.2", "--concurrency", "4", "--json"]
    with trio.fail_after(TIMEOUT):
        done = await trio.run_process(
            command, capture_stdout=True, capture_stderr=True, check=False
        )
    run = BenchRun(done.returncode, done.stdout.decode(), done.stderr.decode())
    assert run.status == 0, run
    results = {obj["target"]: obj for obj in run.objects()}
    assert list(results) == ["ours", "sdk"]
    for result in results.values():
        assert result["binding"] == binding
        assert result["errors"] == 0, result["error_samples"]
        assert result["ops"] > 0
