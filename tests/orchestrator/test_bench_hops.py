"""The hop benchmark runs and prints one JSON object per (mode, hops)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KEYS = {
    "name",
    "backend",
    "hops",
    "mode",
    "setup",
    "p50_ms",
    "p99_ms",
    "per_hop_ms",
    "requests_per_s",
    "errors",
    "versions",
}


def test_bench_hops_quick_json() -> None:
    out = subprocess.run(
        [sys.executable, "benchmarks/bench_hops.py", "--quick", "--json", "--hops", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    results = [json.loads(line) for line in out.splitlines()]
    assert [(r["mode"], r["hops"]) for r in results] == [
        ("local", 0),
        ("local", 1),
        ("http", 0),
        ("http", 1),
    ]
    for result in results:
        assert set(result) == KEYS
        assert result["name"] == "hops.chain"
        assert result["errors"] == 0
        assert result["p50_ms"] > 0
    assert [r["per_hop_ms"] for r in results if r["hops"] == 0] == [0.0, 0.0]
