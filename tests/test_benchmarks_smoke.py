"""Smoke runs of the benchmark scripts: they start, measure and print well-formed results.

Each script runs as a subprocess with ``--quick --json``; every stdout line must be a JSON
object with the keys its kind of result promises, and no result may report errors. There
are no timing assertions: speed is what the scripts measure, not what the tests check.
"""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
BENCHMARKS = REPO / "benchmarks"
SCRIPTS = ("bench_protocol", "bench_inprocess", "bench_store", "bench_http", "bench_hops")
PRESENT = [name for name in SCRIPTS if (BENCHMARKS / f"{name}.py").exists()]
TIMEOUT_S = 240

#: Keys of every HTTP measurement (http.send, http.stream, http.loadgen-ceiling).
HTTP_KEYS = {
    "name",
    "setup",
    "backend",
    "workload",
    "concurrency",
    "requests_per_s",
    "p50_ms",
    "p99_ms",
    "errors",
    "completed",
    "duration_s",
    "loadgen",
    "cpu_pinning",
    "server_cpu_pct",
    "loadgen_cpu_pct",
    "versions",
}
RATIO_KEYS = {"name", "workload", "setup", "versus", "concurrency", "metric", "ratio", "target"}
THROUGHPUT = {"requests_per_s", "tasks_per_s", "ops_per_s", "hops_per_s"}


def run_json(*args: str) -> list[dict[str, Any]]:
    """Run ``args`` with the current interpreter; the JSON objects it printed, one a line."""
    process = subprocess.run(
        [sys.executable, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert process.returncode == 0, process.stderr[-4000:]
    lines = [line for line in process.stdout.splitlines() if line.strip()]
    assert lines, f"no output; stderr:\n{process.stderr[-4000:]}"
    results = []
    for line in lines:
        result = json.loads(line)
        assert isinstance(result, dict), line
        results.append(result)
    return results


def check_common(result: dict[str, Any]) -> None:
    assert isinstance(result.get("name"), str), result
    assert isinstance(result.get("versions"), dict), result
    assert result.get("errors", 0) == 0, result


def check_http(results: list[dict[str, Any]], loadgen: str) -> None:
    measured = [r for r in results if r["name"] != "http.ratio"]
    for result in measured:
        assert result.keys() >= HTTP_KEYS, HTTP_KEYS - result.keys()
        assert result["name"] in ("http.send", "http.stream", "http.loadgen-ceiling")
        assert result["loadgen"] == loadgen
        assert result["completed"] > 0, result  # it did measure something
        assert result["requests_per_s"] > 0, result
        assert result["p50_ms"] is not None, result
        assert result["p99_ms"] >= result["p50_ms"], result
        for key in ("server_cpu_pct", "loadgen_cpu_pct"):  # sampled on Linux by both
            assert isinstance(result[key], int | float), result
    for result in (r for r in results if r["name"] == "http.ratio"):
        assert result.keys() >= RATIO_KEYS, RATIO_KEYS - result.keys()
        assert result["ratio"] > 0


@pytest.mark.parametrize("script", PRESENT)
def test_script_quick_json(script: str) -> None:
    args = [str(BENCHMARKS / f"{script}.py"), "--quick", "--json"]
    if script == "bench_http":
        # the a2a-actors bench generator (what CI has); the wrk path is tested below
        args += ["--loadgen=builtin", "--setups=ours-asyncio,bare-quart-asyncio"]
    results = run_json(*args)
    for result in results:
        check_common(result)
    if script == "bench_http":
        check_http(results, "builtin")
        points = {(r["name"], r["setup"], r["workload"]) for r in results}
        for setup in ("ours-asyncio", "bare-quart-asyncio"):
            assert ("http.send", setup, "send") in points
            assert ("http.stream", setup, "stream") in points
        assert ("http.loadgen-ceiling", "trivial", "send") in points
        assert any(r["name"] == "http.ratio" for r in results)
    else:
        for result in results:
            assert THROUGHPUT & result.keys() or "bytes_per_task" in result, result


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed")
def test_http_with_wrk() -> None:
    results = run_json(
        str(BENCHMARKS / "bench_http.py"),
        "--quick",
        "--json",
        "--loadgen=wrk",
        "--setups=bare-quart-asyncio",
        "--no-ceiling",
    )
    for result in results:
        check_common(result)
    check_http(results, "wrk")
    assert {r["workload"] for r in results} == {"send", "stream"}


def test_runner_writes_results(tmp_path: Path) -> None:
    process = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks",
            "--quick",
            "--only=bench_protocol",
            f"--out={tmp_path}",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert process.returncode == 0, process.stderr[-4000:]
    report = json.loads((tmp_path / "results.json").read_text())
    assert {"date", "machine", "scripts", "results"} <= report.keys()
    assert [s["script"] for s in report["scripts"]] == ["bench_protocol"]
    assert report["results"]
    assert all(r["script"] == "bench_protocol" for r in report["results"])
    table = (tmp_path / "results.md").read_text()
    assert "## bench_protocol" in table
    assert "| name |" in table


def test_chart_or_clear_message(tmp_path: Path) -> None:
    runner = importlib.import_module("benchmarks.__main__")
    results = [
        {
            "name": f"http.{workload}",
            "setup": setup,
            "workload": workload,
            "concurrency": concurrency,
            "requests_per_s": 100.0,
            "p99_ms": 10.0,
        }
        for workload in ("send", "stream")
        for setup in ("ours-asyncio", "sdk")
        for concurrency in (16, 64)
    ]
    message = runner.write_chart(results, tmp_path / "chart.png")
    try:
        importlib.import_module("matplotlib")
    except ImportError:
        assert "matplotlib is not installed" in message
        assert not (tmp_path / "chart.png").exists()
    else:
        assert (tmp_path / "chart.png").stat().st_size > 0


#: Keys of every gRPC measurement (grpc.send, grpc.stream, grpc.loadgen-ceiling).
GRPC_KEYS = HTTP_KEYS - {"backend"}


def test_grpc_quick_json() -> None:
    results = run_json(
        str(BENCHMARKS / "bench_grpc.py"),
        "--quick",
        "--json",
        "--duration",
        "0.5",
        "--warmup",
        "0.2",
        "--concurrency",
        "2",
    )
    for result in results:
        check_common(result)
    measured = [r for r in results if r["name"] != "grpc.ratio"]
    points = {(r["name"], r["setup"], r["workload"]) for r in measured}
    for setup in ("ours", "sdk"):
        assert ("grpc.send", setup, "send") in points
        assert ("grpc.stream", setup, "stream") in points
    assert ("grpc.loadgen-ceiling", "trivial", "send") in points
    for result in measured:
        assert result.keys() >= GRPC_KEYS, GRPC_KEYS - result.keys()
        assert result["completed"] > 0, result
        assert result["p99_ms"] >= result["p50_ms"], result
        assert isinstance(result["server_cpu_pct"], int | float), result
    ratio = [r for r in results if r["name"] == "grpc.ratio"]
    assert {r["workload"] for r in ratio} == {"send", "stream"}
    assert all(r.keys() >= RATIO_KEYS and r["target"] == ">= 3.0" for r in ratio)


#: Keys of every bench_frameworks measurement (frameworks.stream, frameworks.loadgen-ceiling).
FRAMEWORKS_KEYS = HTTP_KEYS | {"cpu_ms_per_request"}


def test_bench_frameworks_quick_json() -> None:
    # The same PydanticAI agent on fasta2a (uvicorn) and on a2a-actors, and the same a2a-sdk
    # AgentExecutor on the SDK's server (uvicorn) and on a2a-actors: all must start and
    # complete every request (each answer checked as the a2a-actors bench generator does).
    pytest.importorskip("pydantic_ai", reason="pydantic-ai is not installed")
    pytest.importorskip("fasta2a", reason="fasta2a is not installed")
    pytest.importorskip("a2a.server", reason="a2a-sdk's server is not installed")
    results = run_json(
        str(BENCHMARKS / "bench_frameworks.py"),
        "--quick",
        "--json",
        "--duration",  # the server CPU is sampled about every 0.2 s: several samples
        "1.0",
        "--warmup",
        "0.2",
        "--concurrency",
        "2",
    )
    for result in results:
        check_common(result)
    measured = [r for r in results if r["name"] != "frameworks.ratio"]
    points = {(r["name"], r["setup"], r["workload"]) for r in measured}
    assert points == {
        ("frameworks.loadgen-ceiling", "trivial", "send"),
        ("frameworks.loadgen-ceiling", "trivial", "stream"),
        ("frameworks.stream", "fasta2a", "stream"),
        ("frameworks.stream", "ours-asyncio", "stream"),
        ("frameworks.send", "sdk-executor", "send"),
        ("frameworks.stream", "sdk-executor", "stream"),
        ("frameworks.send", "ours-executor", "send"),
        ("frameworks.stream", "ours-executor", "stream"),
    }
    for result in measured:
        assert result.keys() >= FRAMEWORKS_KEYS, FRAMEWORKS_KEYS - result.keys()
        assert result["loadgen"] == "builtin"
        assert result["completed"] > 0, result
        assert result["p99_ms"] >= result["p50_ms"], result
        assert isinstance(result["cpu_ms_per_request"], int | float), result  # Linux /proc
        if result["setup"] != "trivial":  # an agent keeps its server's CPU busy
            assert result["cpu_ms_per_request"] > 0, result
        assert {"pydantic-ai-slim", "fasta2a", "a2a-sdk", "a2a-actors"} <= result["versions"].keys()
    ratios = [r for r in results if r["name"] == "frameworks.ratio"]
    assert {(r["setup"], r["versus"], r["workload"], r["metric"]) for r in ratios} == {
        (setup, versus, workload, metric)
        for setup, versus, workloads in (
            ("ours-asyncio", "fasta2a", ("stream",)),
            ("ours-executor", "sdk-executor", ("send", "stream")),
        )
        for workload in workloads
        for metric in ("requests_per_s", "cpu_ms_per_request")
    }
    for ratio in ratios:
        assert ratio.keys() >= RATIO_KEYS | {"met"}, RATIO_KEYS - ratio.keys()
        assert ratio["ratio"] > 0
        target = ">= 4.0" if ratio["setup"] == "ours-executor" else ">= 3.0"
        wanted = target if ratio["metric"] == "requests_per_s" else None
        assert ratio["target"] == wanted, ratio
        assert (ratio["met"] is None) == (wanted is None), ratio


#: Keys of every bench_cluster result, by kind.
CLUSTER_POINT_KEYS = {
    "name",
    "setup",
    "nodes",
    "workload",
    "concurrency",
    "requests_per_s",
    "p50_ms",
    "p99_ms",
    "errors",
    "completed",
    "duration_s",
    "cpu_us_per_task",
    "nats_cpu_us_per_task",
    "versions",
}
CLUSTER_LATENCY_KEYS = {"name", "samples", "p50_ms", "p99_ms", "target_p99_ms", "met", "errors"}


def test_bench_cluster_quick_json() -> None:
    pytest.importorskip("nats", reason="the cluster extra is not installed")
    results = run_json(
        str(BENCHMARKS / "bench_cluster.py"),
        "--quick",
        "--json",
        "--nodes=2",
        "--samples=5",
        "--duration=0.5",
        "--warmup=0.1",
    )
    for result in results:
        check_common(result)
    points = [r for r in results if r["name"] in ("cluster.send", "cluster.stream")]
    assert {(r["name"], r["setup"], r["nodes"]) for r in points} == {
        (f"cluster.{workload}", setup, nodes)
        for workload in ("send", "stream")
        for setup, nodes in (("embedded", 1), ("embedded", 2), ("cluster", 2))
    }
    for point in points:
        assert point.keys() >= CLUSTER_POINT_KEYS, CLUSTER_POINT_KEYS - point.keys()
        assert point["completed"] > 0, point
        assert point["cpu_us_per_task"] > 0, point  # sampled from /proc on Linux
        assert (point["nats_cpu_us_per_task"] > 0) == (point["setup"] == "cluster"), point
    ratios = [r for r in results if r["name"] == "cluster.cpu-ratio"]
    assert {(r["workload"], r["nodes"], r["versus"]) for r in ratios} == {
        (w, 2, versus) for w in ("send", "stream") for versus in ("embedded", "embedded-same-nodes")
    }
    assert all(r["ratio"] > 0 for r in ratios)
    for ratio in ratios:  # the target is against the one embedded process only
        wanted = 2.0 if (ratio["workload"], ratio["versus"]) == ("send", "embedded") else None
        assert ratio["target"] == wanted, ratio
    latencies = [r for r in results if r["name"].startswith("cluster.") and "node-" in r["name"]]
    assert {r["name"] for r in latencies} == {
        f"cluster.{where}-node-{kind}"
        for where in ("cross", "same")
        for kind in ("cancel", "first-event")
    }
    for latency in latencies:
        assert latency.keys() >= CLUSTER_LATENCY_KEYS, CLUSTER_LATENCY_KEYS - latency.keys()
        assert latency["samples"] == 5, latency
        assert 0 < latency["p50_ms"] <= latency["p99_ms"], latency


def test_many_core_refuses_what_it_cannot_do(tmp_path: Path) -> None:
    # ``run`` without ``fetch`` first, and no command, are one line and status 2 (the
    # fetch and the run themselves need PyPI and a wheel folder: benchmarks/README.md).
    copy = tmp_path / "repo"
    (copy / "benchmarks").mkdir(parents=True)
    shutil.copy(BENCHMARKS / "many_core.sh", copy / "benchmarks")
    for argv, message in (
        (["run", "--quick"], "no wheels in .whl/: run 'fetch' first\n"),
        ([], "usage: bash benchmarks/many_core.sh fetch [PYTHON] | run [bench_cluster flags]\n"),
    ):
        done = subprocess.run(
            ["bash", str(copy / "benchmarks" / "many_core.sh"), *argv],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert (done.returncode, done.stderr, done.stdout) == (2, message, "")


#: Keys of bench_soak's results, by kind, and of each process in them.
SOAK_SAMPLE_KEYS = {
    "name",
    "setup",
    "t_s",
    "tasks_done",
    "done_by_kind",
    "errors",
    "in_flight",
    "tasks_per_s",
    "processes",
    "store_tasks",
    "jetstream",
    "versions",
}
SOAK_SUMMARY_KEYS = {
    "name",
    "setup",
    "duration_s",
    "samples",
    "tasks_done",
    "done_by_kind",
    "tasks_per_s",
    "errors",
    "error_kinds",
    "processes",
    "store_tasks_first",
    "store_tasks_last",
    "jetstream_first",
    "jetstream_last",
    "settings",
    "versions",
}
SOAK_PROCESS_KEYS = {
    "rss_mb_first",
    "rss_mb_last",
    "rss_mb_max",
    "rss_mb_per_min",
    "flat",
    "fds_first",
    "fds_last",
    "fds_max",
    "cpu_pct",
}
SOAK_PROCESSES = {
    "one-node": {"node", "loadgen"},
    "cluster-2": {"n1", "n2", "nats-server", "loadgen"},
}


def test_bench_soak_quick_json() -> None:
    # Both setups for a few seconds: every sample covers every process (nats-server
    # included), read from /proc; every kind of the mix completes, without errors.
    pytest.importorskip("nats", reason="the cluster extra is not installed")
    results = run_json(
        str(BENCHMARKS / "bench_soak.py"), "--quick", "--json", "--minutes=0.05", "--sample=0.5"
    )
    for result in results:
        check_common(result)
    assert {r["name"] for r in results} == {"soak.sample", "soak.summary"}
    for setup, labels in SOAK_PROCESSES.items():
        samples = [r for r in results if r["name"] == "soak.sample" and r["setup"] == setup]
        assert len(samples) >= 3, samples  # the baseline, one during the load, the end
        for sample in samples:
            assert sample.keys() >= SOAK_SAMPLE_KEYS, SOAK_SAMPLE_KEYS - sample.keys()
            assert sample["processes"].keys() == labels, sample["processes"]
            for process in sample["processes"].values():
                assert process["rss_mb"] > 0, process
                assert process["fds"] > 0, process
                assert process["cpu_s"] >= 0, process
            nodes = {"node"} if setup == "one-node" else {"n1", "n2"}
            assert sample["store_tasks"].keys() == nodes, sample
            assert all(isinstance(n, int) for n in sample["store_tasks"].values()), sample
            assert (sample["jetstream"] is None) == (setup == "one-node"), sample
        (summary,) = [r for r in results if r["name"] == "soak.summary" and r["setup"] == setup]
        assert summary.keys() >= SOAK_SUMMARY_KEYS, SOAK_SUMMARY_KEYS - summary.keys()
        assert summary["samples"] == len(samples)
        assert summary["done_by_kind"].keys() == {"send", "stream", "ask", "sleep"}, summary
        assert summary["tasks_done"] == samples[-1]["tasks_done"] > 0
        assert summary["processes"].keys() == labels
        for process in summary["processes"].values():
            assert process.keys() >= SOAK_PROCESS_KEYS, SOAK_PROCESS_KEYS - process.keys()
            assert process["rss_mb_first"] > 0, process
            assert process["rss_mb_max"] >= process["rss_mb_last"], process
            assert isinstance(process["rss_mb_per_min"], float), process
        assert all(n > 0 for n in summary["store_tasks_last"].values()), summary
        if setup == "cluster-2":  # the tasks bucket is a KV_* stream
            streams = summary["jetstream_last"]
            assert any(name.startswith("KV_") and name.endswith("_tasks") for name in streams)
