"""The bench chart's latency axis reads as plain milliseconds, never as powers of ten."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from a2a_actors.loadtest._engine import Load
from a2a_actors.loadtest._report import draw_chart, write_chart
from a2a_actors.loadtest._requests import load_message
from a2a_actors.loadtest._runner import Measurement, Options
from a2a_actors.loadtest._tally import Tally
from a2a_actors.loadtest._target import Endpoint

plt = pytest.importorskip("matplotlib.pyplot")

OPTIONS = Options("send", load_message("hi", None), Load(4, 4, None, 0.0, 1.0, 5.0))
#: Only digits, a decimal point and thousands separators: what a plain number is made of.
PLAIN = re.compile(r"^\d{1,3}(,\d{3})*(\.\d+)?$")


def measured(name: str, latencies_us: list[int]) -> Measurement:
    tally = Tally()
    tally.ok, tally.window_s = len(latencies_us), 1.0
    for us in latencies_us:
        tally.latency.record(us)
    endpoint = Endpoint(name, "http://127.0.0.1:1/", "jsonrpc", "127.0.0.1", 1, "/")
    return Measurement(endpoint, 1, tally)


def latency_labels(measurements: list[Measurement]) -> list[str]:
    fig = draw_chart(measurements, OPTIONS)
    try:
        fig.canvas.draw()  # tick labels are made when drawn
        axis = fig.axes[1].yaxis
        texts = [t.get_text() for t in axis.get_ticklabels() + axis.get_ticklabels(minor=True)]
        return [t for t in texts if t]
    finally:
        plt.close(fig)


@pytest.mark.parametrize(
    "latencies_us",
    [
        [800, 1_200, 3_000, 45_000],  # 0.8 ms to 45 ms: two decades
        [2_100, 2_400, 2_900, 3_300],  # within one decade: where matplotlib labels minor ticks
        [150, 90_000, 2_000_000],  # 0.15 ms to 2 s
    ],
)
def test_latency_ticks_are_plain_numbers(latencies_us: list[int]) -> None:
    labels = latency_labels([measured("ours", latencies_us), measured("theirs", [5_000])])
    assert labels, "the latency axis has labelled ticks"
    for label in labels:
        assert PLAIN.match(label), f"not a plain number: {label!r} (all: {labels})"
    assert len(set(labels)) == len(labels), f"two ticks read the same: {labels}"


def test_the_chart_file_is_a_png(tmp_path: Path) -> None:
    chart = tmp_path / "chart.png"
    write_chart(str(chart), [measured("ours", [1_000, 2_000, 30_000])], OPTIONS)
    assert chart.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
