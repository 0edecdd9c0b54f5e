"""Run every benchmark script and write a results table and chart.

    python -m benchmarks [--quick] [--out DIR] [--only bench_http,bench_protocol]
                         [--script-args 'bench_http=--rounds 3']

Runs ``bench_protocol.py``, ``bench_inprocess.py``, ``bench_store.py``, ``bench_http.py``,
``bench_hops.py``, ``bench_grpc.py``, ``bench_cluster.py`` and ``bench_frameworks.py`` (each
when present) one after the other as subprocesses with ``--json`` (and ``--quick`` when
given), collects their result lines and writes:

* ``DIR/results.json``: date, machine, the scripts' exit statuses and every result (each
  with ``script`` added);
* ``DIR/results.md``: a Markdown table per script, the ``http.ratio`` and
  ``frameworks.ratio`` targets, the machine and the versions;
* ``DIR/chart.png``: requests/s and p99 of every HTTP setup (``http.send`` and
  ``http.stream``) per concurrency level; skipped with a message when matplotlib is not
  installed (``pip install matplotlib``).

``DIR`` defaults to ``benchmarks/results/`` (git-ignored). The exit status is 1 when a
script failed (the files are still written), else 0.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import math
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SCRIPTS = (
    "bench_protocol",
    "bench_inprocess",
    "bench_store",
    "bench_http",
    "bench_hops",
    "bench_grpc",
    "bench_cluster",
    "bench_frameworks",
)
#: Result names shown in a script's "Ratios" table rather than its results table.
RATIO_NAMES = ("http.ratio", "frameworks.ratio")
#: Keys that identify a result within its name, in table order.
IDENTITY = ("setup", "backend", "store", "nodes", "workload", "concurrency")
#: Throughput keys, the first present is shown.
THROUGHPUT = ("requests_per_s", "tasks_per_s", "ops_per_s", "hops_per_s")
LATENCY = (("p50_ms", "p99_ms"), ("p50_us", "p99_us"))
EXTRA = (
    "errors",
    "overhead_ms",
    "bytes_per_task",
    "server_cpu_pct",
    "loadgen_cpu_pct",
    "cpu_us_per_task",
    "cpu_ms_per_request",
    "nats_cpu_us_per_task",
    "ratio",
    "met",
)


def machine() -> dict[str, Any]:
    """CPU model and count, memory, OS and Python of this machine."""
    model = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except (OSError, ValueError):
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 0
    return {
        "cpu": model,
        "cpus": usable,
        "memory": memory,
        "os": platform.platform(),
        "python": platform.python_version(),
    }


def run_script(path: Path, quick: bool, extra: list[str], timeout: float) -> dict[str, Any]:
    """Run one script with ``--json``; its exit status, duration and parsed results."""
    command = [sys.executable, str(path), "--json", *(["--quick"] if quick else []), *extra]
    print(f"== {path.name} {' '.join(command[3:])}", file=sys.stderr, flush=True)
    started = time.monotonic()
    try:
        process = subprocess.run(
            command, cwd=REPO, stdout=subprocess.PIPE, text=True, timeout=timeout, check=False
        )
        returncode, out = process.returncode, process.stdout
    except subprocess.TimeoutExpired as exc:
        returncode = -1
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        print(f"{path.name}: timed out after {timeout:.0f} s", file=sys.stderr)
    results = []
    for line in out.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            result = json.loads(line)
        except json.JSONDecodeError:
            print(f"{path.name}: not JSON: {line[:200]}", file=sys.stderr)
            continue
        results.append({"script": path.stem, **result})
    seconds = round(time.monotonic() - started, 1)
    if returncode != 0:
        print(f"{path.name}: exit status {returncode}", file=sys.stderr)
    return {"script": path.stem, "returncode": returncode, "seconds": seconds, "results": results}


def _summary(run: dict[str, Any]) -> dict[str, Any]:
    return {key: len(value) if key == "results" else value for key, value in run.items()}


# --------------------------------------------------------------------------- Markdown


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "**no**"
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        if abs(value) >= 100:
            return f"{value:,.0f}"
        return f"{value:.3g}" if abs(value) < 1 else f"{value:.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value).replace("|", "\\|")


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(cell) for cell in row) + " |" for row in rows]
    return lines


def results_table(results: list[dict[str, Any]]) -> list[str]:
    """One Markdown table for results of one script (columns from the keys present)."""
    present = {key for result in results for key in result}
    identity = [key for key in IDENTITY if key in present]
    throughput = [key for key in THROUGHPUT if key in present]
    latency = [key for pair in LATENCY if pair[0] in present for key in pair]
    extra = [key for key in EXTRA if key in present]
    columns = ["name", *identity, *throughput, *latency, *extra]
    rows = [[result.get(key) for key in columns] for result in results]
    return _table(columns, rows)


def ratio_table(ratios: list[dict[str, Any]]) -> list[str]:
    columns = ["workload", "setup", "versus", "concurrency", "metric", "ratio", "target", "met"]
    return _table(columns, [[ratio.get(key) for key in columns] for ratio in ratios])


def markdown(report: dict[str, Any]) -> str:
    """The whole ``results.md``."""
    lines = [
        "# Benchmark results",
        "",
        f"Date: {report['date']}" + (" (quick smoke run: not for comparison)" * report["quick"]),
        "",
        "Machine: " + ", ".join(f"{key} {value}" for key, value in report["machine"].items()),
        "",
    ]
    for script in report["scripts"]:
        mine = [r for r in report["results"] if r["script"] == script["script"]]
        results = [r for r in mine if r.get("name") not in RATIO_NAMES]
        lines += [f"## {script['script']}", ""]
        status = "ok" if script["returncode"] == 0 else f"**failed ({script['returncode']})**"
        lines += [f"{script['results']} results in {script['seconds']} s, {status}.", ""]
        if results:
            lines += [*results_table(results), ""]
        ratios = [r for r in mine if r.get("name") in RATIO_NAMES]
        if ratios:
            lines += ["### Ratios", "", *ratio_table(ratios), ""]
    versions: dict[str, str] = {}
    for result in report["results"]:
        versions.update(result.get("versions") or {})
    if versions:
        lines += [
            "## Versions",
            "",
            *_table(["package", "version"], [list(item) for item in sorted(versions.items())]),
            "",
        ]
    return "\n".join(lines)


# --------------------------------------------------------------------------- chart


def write_chart(results: list[dict[str, Any]], path: Path) -> str:
    """Bar chart of requests/s and p99 per HTTP setup; a message saying what happened."""
    http = [r for r in results if r.get("name") in ("http.send", "http.stream")]
    if not http:
        return "no HTTP results: no chart"
    try:
        # Imported by name: matplotlib is optional (the ``bench`` extra), typed or not.
        matplotlib: Any = importlib.import_module("matplotlib")
        matplotlib.use("Agg")
        plt: Any = importlib.import_module("matplotlib.pyplot")
    except ImportError:
        return "matplotlib is not installed: no chart (pip install matplotlib)"
    workloads = [w for w in ("send", "stream") if any(r["workload"] == w for r in http)]
    setups = list(dict.fromkeys(r["setup"] for r in http))
    levels = sorted({r["concurrency"] for r in http})
    figure, axes = plt.subplots(2, len(workloads), figsize=(6 * len(workloads), 8), squeeze=False)
    width = 0.8 / len(levels)
    for column, workload in enumerate(workloads):
        for row, (metric, label) in enumerate(
            (
                ("requests_per_s", "requests/s (higher is better)"),
                ("p99_ms", "p99 ms (lower is better)"),
            )
        ):
            ax = axes[row][column]
            for index, level in enumerate(levels):
                values = []
                for setup in setups:
                    found = [
                        r
                        for r in http
                        if r["workload"] == workload
                        and r["setup"] == setup
                        and r["concurrency"] == level
                    ]
                    values.append((found[0].get(metric) or 0.0) if found else 0.0)
                positions = [
                    i + (index - (len(levels) - 1) / 2) * width for i in range(len(setups))
                ]
                ax.bar(positions, values, width, label=f"{level} connections")
            ax.set_xticks(range(len(setups)))
            ax.set_xticklabels(setups, rotation=20, ha="right")
            ax.set_ylabel(label)
            ax.set_title(f"{'SendMessage' if workload == 'send' else 'SendStreamingMessage'}")
            ax.grid(axis="y", alpha=0.3)
            ax.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return f"chart: {path}"


# --------------------------------------------------------------------------- main


def _script_args(values: list[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for value in values:
        name, sep, args = value.partition("=")
        if not sep:
            raise SystemExit(f"--script-args wants SCRIPT=ARGS, got {value!r}")
        found.setdefault(name.removesuffix(".py"), []).extend(shlex.split(args))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="run all benchmarks; write a table and a chart")
    parser.add_argument("--quick", action="store_true", help="smoke-sized runs (CI)")
    parser.add_argument("--out", type=Path, default=HERE / "results", help="output directory")
    parser.add_argument(
        "--only", default=None, help=f"comma-separated scripts of {', '.join(SCRIPTS)}"
    )
    parser.add_argument(
        "--script-args",
        action="append",
        default=[],
        metavar="SCRIPT=ARGS",
        help="extra arguments for one script, e.g. 'bench_http=--rounds 3'",
    )
    parser.add_argument("--timeout", type=float, default=None, help="seconds per script")
    args = parser.parse_args(argv)
    chosen = [name.strip().removesuffix(".py") for name in (args.only or "").split(",") if name]
    unknown = [name for name in chosen if name not in SCRIPTS]
    if unknown:
        parser.error(f"unknown scripts: {unknown}")
    extra = _script_args(args.script_args)
    timeout = args.timeout or (600.0 if args.quick else 7200.0)

    runs = []
    for name in chosen or SCRIPTS:
        path = HERE / f"{name}.py"
        if not path.exists():
            print(f"{name}.py is not there: skipped", file=sys.stderr)
            continue
        runs.append(run_script(path, args.quick, extra.get(name, []), timeout))

    report = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "quick": args.quick,
        "machine": machine(),
        "scripts": [_summary(run) for run in runs],
        "results": [result for run in runs for result in run["results"]],
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(report, indent=1) + "\n")
    (args.out / "results.md").write_text(markdown(report))
    print(write_chart(report["results"], args.out / "chart.png"), file=sys.stderr)
    print(f"results: {args.out / 'results.md'}", file=sys.stderr)
    return 0 if all(run["returncode"] == 0 for run in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
