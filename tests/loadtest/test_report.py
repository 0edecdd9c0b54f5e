"""The report's parts: the bottleneck warnings, the progress bar, several processes."""

from __future__ import annotations

import io
import os

import trio

from a2a_actors.loadtest._engine import Load
from a2a_actors.loadtest._report import warnings
from a2a_actors.loadtest._requests import load_message
from a2a_actors.loadtest._runner import Measurement, Options, TerminalProgress, split
from a2a_actors.loadtest._tally import Tally
from a2a_actors.loadtest._target import Endpoint
from examples.echo import agent as echo

from .helpers import TIMEOUT, bench, served

ENDPOINT = Endpoint("t", "http://127.0.0.1:1/", "jsonrpc", "127.0.0.1", 1, "/")


def _measured(ok: int, cpu_share: float, *, backlog: int = 0) -> Measurement:
    tally = Tally()
    tally.ok, tally.window_s, tally.max_cpu_share, tally.backlog = ok, 1.0, cpu_share, backlog
    return Measurement(ENDPOINT, 1, tally)


def _options(rate: float | None = None) -> Options:
    return Options("send", load_message("hi", None), Load(4, 4, rate, 0.0, 1.0, 5.0))


def test_a_busy_generator_is_a_warning() -> None:
    assert warnings([_measured(1000, 0.5)], _options()) == []
    (busy,) = warnings([_measured(1000, 0.95)], _options())
    assert busy.startswith("warning: t: a generator process was busy 95% of its window")


def test_a_rate_close_to_the_calibrated_ceiling_is_a_warning() -> None:
    assert warnings([_measured(1000, 0.5)], _options(), ceiling=10_000.0) == []
    (close,) = warnings([_measured(8000, 0.5)], _options(), ceiling=10_000.0)
    assert "8,000 ops/s is 80% of the generator's own ceiling (10,000 ops/s" in close


def test_an_open_loop_backlog_is_a_warning() -> None:
    (behind,) = warnings([_measured(100, 0.1, backlog=7)], _options(rate=200.0))
    assert "could not keep up with --rate 200: 7 operations were due but never started" in behind


def test_the_progress_bar_draws_only_on_a_terminal() -> None:
    assert TerminalProgress.for_stream(io.StringIO()) is None
    line = "ours (round 1/2) [" + "#" * 15 + "-" * 15 + "]  50%"
    expected = f"\r{line}\r{' ' * len(line)}\r"  # drawn, then cleared
    leader, follower = os.openpty()
    try:
        with open(follower, "w", closefd=False) as terminal:
            bar = TerminalProgress.for_stream(terminal)
            assert bar is not None
            bar("ours (round 1/2)", 0.5)
            bar.clear()
        drawn = b""
        while len(drawn) < len(expected):  # a pty may hand the bytes over in pieces
            drawn += os.read(leader, 4096)
    finally:
        os.close(leader)
        os.close(follower)
    assert drawn.decode() == expected


async def test_several_generator_processes_share_the_load() -> None:
    with trio.fail_after(TIMEOUT):
        async with served(echo) as url:
            run = await bench(
                url,
                "--processes",
                "2",
                "--concurrency",
                "5",
                "--json",
                "--duration",
                "0.6",
                "--warmup",
                "0.2",
            )
    assert run.status == 0, run
    result = run.only()
    assert result["processes"] == 2
    assert result["connections"] == 5
    assert result["errors"] == 0
    assert result["ops"] > 0


def test_the_load_is_split_over_the_processes() -> None:
    closed = split(Load(5, 7, None, 1.0, 2.0, 3.0), 2)
    assert [(p.connections, p.concurrency, p.rate) for p in closed] == [(3, 4, None), (2, 3, None)]
    opened = split(Load(4, 4, 200.0, 1.0, 2.0, 3.0), 2)
    assert [(p.rate, p.phase) for p in opened] == [(100.0, 0.0), (100.0, 0.005)]  # in turns
    assert len(split(Load(2, 2, None, 1.0, 2.0, 3.0), 8)) == 2  # a connection per process
