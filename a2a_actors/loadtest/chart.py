"""``--chart FILE.png``: throughput and latency of every target, side by side.

Left, each target's operations per second (the bar is over all rounds; one dot per
round). Right, its latency percentiles (p50, p90, p99, max) on a log scale, of the workload's
headline metric (a cancel's own latency for ``cancel``). Needs matplotlib, the ``bench``
extra (``pip install 'a2a-actors[bench]'``); without it :func:`write_chart` raises
:class:`ChartError` with that one-line hint.
"""

from __future__ import annotations

import importlib
from typing import Any

from .report import merged
from .runner import Measurement, Options

__all__ = ("ChartError", "write_chart")


class ChartError(Exception):
    """The chart cannot be drawn (matplotlib missing, or the file cannot be written)."""


def _pyplot() -> Any:
    try:
        matplotlib = importlib.import_module("matplotlib")
    except ImportError:
        raise ChartError("--chart needs matplotlib: pip install 'a2a-actors[bench]'") from None
    matplotlib.use("Agg")  # files only, never a window
    return importlib.import_module("matplotlib.pyplot")


def write_chart(path: str, measurements: list[Measurement], options: Options) -> None:
    """Draw the chart of ``measurements`` into the PNG file ``path``.

    Raises:
        ChartError: matplotlib is not installed, or ``path`` cannot be written.
    """
    plt = _pyplot()
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
    right.set_xticks(list(xs), names, rotation=15)
    right.set_ylabel("ms (log scale)")
    right.set_title("cancel latency" if cancel else "latency")
    right.legend()
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=110)
    except OSError as exc:
        raise ChartError(f"--chart {path}: {exc}") from None
    finally:
        plt.close(fig)
