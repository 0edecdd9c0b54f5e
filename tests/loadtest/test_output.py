"""The outputs: one JSON object per target and round, the table, the chart."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import trio

from a2a_actors.loadtest._histogram import Histogram
from examples.echo import agent as echo

from .helpers import QUICK, TIMEOUT, Request, bench, raw_server, rpc_result, served, task

HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None


async def _completed(request: Request) -> bytes:
    return rpc_result({"task": task("COMPLETED")})


async def test_json_has_one_object_per_target_and_round() -> None:
    with trio.fail_after(TIMEOUT):
        async with served(echo) as ours, raw_server(_completed) as raw:
            run = await bench(
                f"ours={ours}",
                f"raw={raw}",
                "--binding",
                "jsonrpc",
                "--rounds",
                "2",
                "--json",
                *QUICK,
            )
    assert run.status == 0, run
    objects = run.objects()
    # interleaved: every target once per round, the order rotating from round to round
    assert [(o["target"], o["round"]) for o in objects] == [
        ("ours", 1),
        ("raw", 1),
        ("raw", 2),
        ("ours", 2),
    ]
    for obj in objects:
        assert obj["url"].startswith("http://127.0.0.1:")
        assert (obj["model"], obj["concurrency"], obj["connections"], obj["rate"]) == (
            "closed",
            4,
            4,
            None,
        )
        assert obj["duration_s"] == 0.6
        assert obj["ops_per_s"] == pytest.approx(obj["ops"] / 0.6, abs=0.01)
        histogram = Histogram.from_json(obj["histogram"])
        assert histogram.count == obj["ops"] == sum(n for _, _, n in obj["histogram"]["buckets"])
        assert obj["latency_ms"]["p99"] == histogram.percentile(99) / 1000
        assert obj["latency_ms"]["max"] == obj["histogram"]["max"] / 1000
        for low, high, n in obj["histogram"]["buckets"]:
            assert 0 <= low <= high
            assert n > 0
        assert obj["generator_cpu_pct"] >= 0
        assert obj["errors"] == 0
        assert obj["errors_by_kind"] == {}
        assert obj["error_samples"] == {}


async def test_the_table_has_a_row_per_target_over_its_rounds() -> None:
    with trio.fail_after(TIMEOUT):
        async with served(echo) as ours, raw_server(_completed) as raw:
            run = await bench(
                f"ours={ours}", f"raw={raw}", "--binding", "jsonrpc", "--rounds", "2", *QUICK
            )
    assert run.status == 0, run
    lines = run.stdout.splitlines()
    assert "0.6 s x 2 round(s)" in lines[0]
    rows = [line.split() for line in lines[2:4]]
    assert [row[0] for row in rows] == ["ours", "raw"]
    for row in rows:
        assert row[2].startswith("(")
        assert row[2].endswith(")")


@pytest.mark.skipif(not HAS_MATPLOTLIB, reason="matplotlib (the bench extra) is not installed")
async def test_chart_is_a_png(tmp_path: Path) -> None:
    chart = tmp_path / "bench.png"
    with trio.fail_after(TIMEOUT):
        async with served(echo) as ours, raw_server(_completed) as raw:
            run = await bench(
                f"ours={ours}", f"raw={raw}", "--binding", "jsonrpc", "--chart", str(chart), *QUICK
            )
    assert run.status == 0, run
    assert chart.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert chart.stat().st_size > 10_000


@pytest.mark.skipif(not HAS_MATPLOTLIB, reason="matplotlib (the bench extra) is not installed")
async def test_chart_into_a_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    with trio.fail_after(TIMEOUT):
        async with raw_server(_completed) as raw:
            run = await bench(
                raw, "--binding", "jsonrpc", "--chart", str(tmp_path / "no" / "x.png"), *QUICK
            )
    assert run.status == 1
    assert run.stderr.startswith("a2a-actors bench: --chart ")
    assert run.stderr.count("\n") == 1


async def test_calibration_reports_the_generators_ceiling() -> None:
    with trio.fail_after(TIMEOUT):
        async with raw_server(_completed) as raw:
            run = await bench(raw, "--binding", "jsonrpc", "--calibrate", *QUICK)
    assert run.status == 0, run
    line = next(line for line in run.stdout.splitlines() if line.startswith("generator ceiling"))
    assert float(line.split(": ")[1].split()[0].replace(",", "")) > 0
    with trio.fail_after(TIMEOUT):
        async with raw_server(_completed) as raw:
            as_json = await bench(raw, "--binding", "jsonrpc", "--calibrate", "--json", *QUICK)
    assert as_json.only()["generator_ceiling_ops_per_s"] > 0
