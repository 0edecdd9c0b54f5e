"""The results: JSON objects, the table, and the warnings about the measurement itself.

:func:`to_json` gives one object per target and round (the schema is in ``docs/bench.md``).
:func:`table` gives one row per target, over all its rounds (tallies merged, so the
percentiles are of every operation measured); with several rounds the ops/s column also
shows the lowest and highest round. :func:`warnings` says when the numbers may describe the
generator rather than the target: a generator process busy for most of its window, a
calibration ceiling close to the measured rate, or an open loop that fell behind.

:func:`write_chart` (``--chart FILE.png``) draws each target's operations per second (the
bar over all rounds, one dot per round) beside its latency percentiles (p50, p90, p99, max
on a log scale whose ticks read as plain milliseconds, 1, 2, 5, 10, 20, ..., never as powers
of ten; a cancel's own latency for ``cancel``). It needs matplotlib, the ``bench`` extra;
without it :class:`ChartError` says so in one line (``--chart needs the bench extra: pip
install 'a2a-actors[bench]'``).
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from a2a_actors.loadtest._histogram import Histogram
from a2a_actors.loadtest._runner import Measurement, Options
from a2a_actors.loadtest._tally import Tally

__all__ = (
    "BUSY_CPU_SHARE",
    "CEILING_SHARE",
    "ChartError",
    "check_chart",
    "draw_chart",
    "merged",
    "table",
    "to_json",
    "warnings",
    "write_chart",
)

#: A generator process busier than this share of its window was probably the bottleneck.
BUSY_CPU_SHARE = 0.9
#: A measured rate above this share of the generator's calibrated ceiling is suspect.
CEILING_SHARE = 0.7
_SECONDARY_NAMES = {"stream": "first_event", "cancel": "cancel"}


def _ms(value_us: float) -> float:
    return round(value_us / 1000, 3)


def _percentiles(histogram: Histogram) -> dict[str, float]:
    return {
        "p50": _ms(histogram.percentile(50)),
        "p90": _ms(histogram.percentile(90)),
        "p99": _ms(histogram.percentile(99)),
        "p999": _ms(histogram.percentile(99.9)),
        "min": _ms(histogram.min_us),
        "max": _ms(histogram.max_us),
        "mean": _ms(histogram.mean_us),
    }


def _rate(count: int, tally: Tally) -> float:
    return round(count / tally.window_s, 2) if tally.window_s else 0.0


def to_json(
    measurement: Measurement, options: Options, ceiling: float | None = None
) -> dict[str, Any]:
    """One target in one round, as JSON (with the calibrated ``ceiling``, when measured)."""
    tally, endpoint, load = measurement.tally, measurement.endpoint, options.load
    obj: dict[str, Any] = {
        "target": endpoint.name,
        "url": endpoint.url,
        "binding": endpoint.binding,
        "round": measurement.round,
        "workload": options.workload,
        "model": "closed" if load.rate is None else "open",
        "concurrency": load.concurrency,
        "rate": load.rate,
        "connections": load.connections,
        "processes": tally.processes,
        "warmup_s": load.warmup,
        "duration_s": tally.window_s,
        "ops": tally.ok,
        "ops_per_s": _rate(tally.ok, tally),
        "requests": tally.requests,
        "requests_per_s": _rate(tally.requests, tally),
        "errors": tally.failed,
        "errors_by_kind": dict(sorted(tally.errors.items())),
        "error_samples": dict(sorted(tally.samples.items())),
        "latency_ms": _percentiles(tally.latency),
        "histogram": tally.latency.to_json(),
        "generator_cpu_pct": round(100 * tally.cpu_s / tally.window_s, 1)
        if tally.window_s
        else 0.0,
        "generator_busiest_process_cpu_pct": round(100 * tally.max_cpu_share, 1),
        "backlog": tally.backlog,
        "in_flight_at_end": tally.in_flight,
        "reconnects": tally.reconnects,
    }
    if ceiling is not None:
        obj["generator_ceiling_ops_per_s"] = round(ceiling, 2)
    secondary = _SECONDARY_NAMES.get(options.workload)
    if secondary is not None:
        obj[f"{secondary}_ms"] = _percentiles(tally.secondary)
        obj[f"{secondary}_histogram"] = tally.secondary.to_json()
    return obj


def merged(measurements: list[Measurement]) -> dict[str, tuple[Tally, list[float]]]:
    """Per target name (in first-seen order): the merged tally and each round's ops/s."""
    out: dict[str, tuple[Tally, list[float]]] = {}
    for m in measurements:
        tally, rates = out.setdefault(m.endpoint.name, (Tally(), []))
        windows = tally.window_s
        tally.merge(m.tally)
        tally.window_s = windows + m.tally.window_s  # rounds add up; processes share one
        rates.append(_rate(m.tally.ok, m.tally))
    return out


def _fmt_ms(value_us: int) -> str:
    ms = value_us / 1000
    return f"{ms:.2f}" if ms < 10 else f"{ms:.1f}" if ms < 100 else f"{ms:,.0f}"


def table(measurements: list[Measurement], options: Options) -> str:
    """The human-readable table, with error samples below it."""
    headline_secondary = options.workload == "cancel"
    header = ["target", "ops/s", "p50 ms", "p90 ms", "p99 ms", "max ms"]
    if options.workload == "stream":
        header += ["1st event p50", "p99"]
    header += ["errors", "gen CPU"]
    rows = [header]
    notes = []
    for name, (tally, rates) in merged(measurements).items():
        h = tally.secondary if headline_secondary else tally.latency
        ops = f"{tally.ok / tally.window_s:,.0f}" if tally.window_s else "0"
        if len(rates) > 1:
            ops += f" ({min(rates):,.0f}-{max(rates):,.0f})"
        row = [name, ops, *(_fmt_ms(h.percentile(p)) for p in (50, 90, 99)), _fmt_ms(h.max_us)]
        if options.workload == "stream":
            row += [
                _fmt_ms(tally.secondary.percentile(50)),
                _fmt_ms(tally.secondary.percentile(99)),
            ]
        errors = str(tally.failed)
        if tally.errors:
            errors += " (" + ", ".join(f"{k} {n}" for k, n in sorted(tally.errors.items())) + ")"
        row += [errors, f"{100 * tally.max_cpu_share:.0f}%"]
        rows.append(row)
        for kind, samples in sorted(tally.samples.items()):
            notes += [f"  {name} {kind}: {sample}" for sample in samples]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]
    what = "cancel latency" if headline_secondary else "latency"
    model = (
        f"rate {options.load.rate:g}/s"
        if options.load.rate
        else (f"concurrency {options.load.concurrency}")
    )
    title = (
        f"{options.workload}, {model}, {options.load.connections} connections, "
        f"{options.load.duration:g} s x {options.rounds} round(s); percentiles of {what}"
    )
    out = [title, *lines]
    if notes:
        out += ["error samples:", *notes]
    return "\n".join(out)


def warnings(
    measurements: list[Measurement], options: Options, ceiling: float | None = None
) -> list[str]:
    """What may make the numbers describe the generator rather than the target."""
    out = []
    for name, (tally, _) in merged(measurements).items():
        rate = tally.ok / tally.window_s if tally.window_s else 0.0
        if tally.max_cpu_share >= BUSY_CPU_SHARE:
            out.append(
                f"warning: {name}: a generator process was busy {100 * tally.max_cpu_share:.0f}% "
                "of its window, so the generator may be the bottleneck (try --processes N)"
            )
        if ceiling and rate >= CEILING_SHARE * ceiling:
            out.append(
                f"warning: {name}: {rate:,.0f} ops/s is {100 * rate / ceiling:.0f}% of the "
                f"generator's own ceiling ({ceiling:,.0f} ops/s against a trivial server), so "
                "the generator may be the bottleneck (try --processes N)"
            )
        if options.load.rate and tally.backlog:
            out.append(
                f"warning: {name}: could not keep up with --rate {options.load.rate:g}: "
                f"{tally.backlog} operations were due but never started, and their latency "
                "is not in the percentiles"
            )
    return out


class ChartError(Exception):
    """The chart cannot be drawn (matplotlib missing, or the file cannot be written)."""


def _pyplot() -> Any:
    try:
        matplotlib = importlib.import_module("matplotlib")
    except ImportError:
        raise ChartError("--chart needs the bench extra: pip install 'a2a-actors[bench]'") from None
    matplotlib.use("Agg")  # files only, never a window
    return importlib.import_module("matplotlib.pyplot")


def check_chart(path: str) -> None:
    """Refuse a chart that cannot be drawn before anything is measured.

    Raises:
        ChartError: matplotlib is not installed, or ``path``'s folder does not exist.
    """
    _pyplot()
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        raise ChartError(f"--chart {path}: [Errno 2] No such file or directory: {folder!r}")


def write_chart(path: str, measurements: list[Measurement], options: Options) -> None:
    """Draw the chart of ``measurements`` into the PNG file ``path``.

    Raises:
        ChartError: matplotlib is not installed, or ``path`` cannot be written.
    """
    plt = _pyplot()
    fig = draw_chart(measurements, options)
    try:
        fig.savefig(path, dpi=110)
    except OSError as exc:
        raise ChartError(f"--chart {path}: {exc}") from None
    finally:
        plt.close(fig)


def draw_chart(measurements: list[Measurement], options: Options) -> Any:
    """The chart's figure (a matplotlib ``Figure``, the caller's to save and close): the
    throughput on the left, the latency percentiles on the right (see the module docstring).

    Raises:
        ChartError: matplotlib is not installed.
    """
    plt = _pyplot()
    ticker = importlib.import_module("matplotlib.ticker")
    per_target = merged(measurements)
    names = list(per_target)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    xs = range(len(names))
    totals = [t.ok / t.window_s if t.window_s else 0.0 for t, _ in per_target.values()]
    left.bar(xs, totals, color="#4c72b0")
    for x, (_, rates) in zip(xs, per_target.values(), strict=True):
        left.plot([x] * len(rates), rates, "o", color="black", markersize=4)
    left.set_xticks(list(xs), names, rotation=15)
    left.set_ylabel("operations / s")
    left.set_title(f"throughput ({options.workload})")
    cancel = options.workload == "cancel"
    percentiles = (("p50", 50.0), ("p90", 90.0), ("p99", 99.0), ("max", 100.0))
    width = 0.8 / len(percentiles)
    for i, (label, p) in enumerate(percentiles):
        values = []
        for tally, _ in per_target.values():
            h = tally.secondary if cancel else tally.latency
            us = h.max_us if p == 100.0 else h.percentile(p)
            values.append(max(us, 1) / 1000)  # a log scale has no 0
        right.bar([x + (i - 1.5) * width for x in xs], values, width, label=label)
    right.set_yscale("log")
    # Plain milliseconds at 1-2-5 steps, not matplotlib's 10^n labels.
    right.yaxis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    right.yaxis.set_major_formatter(ticker.FuncFormatter(_plain_ms))
    right.yaxis.set_minor_formatter(ticker.NullFormatter())
    right.set_xticks(list(xs), names, rotation=15)
    right.set_ylabel("ms (log scale)")
    right.set_title("cancel latency" if cancel else "latency")
    right.legend()
    fig.tight_layout()
    return fig


def _plain_ms(value: float, _position: object = None) -> str:
    """A latency tick as a plain number: ``0.5``, ``2``, ``2.5``, ``10``, ``1,000``."""
    if value >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"
