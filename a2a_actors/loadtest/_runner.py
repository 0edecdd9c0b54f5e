"""Running measurements: generator processes per measurement, targets in interleaved rounds.

:func:`measure` measures one endpoint once: it splits the load over ``processes`` worker processes
(:mod:`a2a_actors.loadtest._worker`; connections, in-flight operations and rate divided as evenly as
they go), waits until every one has its connections open, gives them one shared start time, and
merges their tallies. :func:`run_rounds` measures every target once per round, rotating the order
from round to round, so that all targets share the machine's noise (a background job, thermal state)
instead of one target getting the quiet minutes. :class:`TerminalProgress` shows how far along they
are, on a terminal only (a pipe, a file or a CI log never gets carriage-return noise).
"""

from __future__ import annotations

import json
import secrets
import select
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import IO, TextIO

from a2a_actors.loadtest._engine import Load
from a2a_actors.loadtest._tally import Tally
from a2a_actors.loadtest._target import BenchError, Endpoint
from a2a_actors.loadtest._worker import plan
from a2a_actors.protocol._models import Message

__all__ = (
    "Measurement",
    "Options",
    "Progress",
    "TerminalProgress",
    "measure",
    "run_rounds",
    "split",
)

#: ``progress(label, fraction)``: what is being measured, and how far along it is (0..1).
Progress = Callable[[str, float], None]
_READY_TIMEOUT = 60.0
_BAR_WIDTH = 30


@dataclass(frozen=True, slots=True)
class Options:
    """How every target is measured."""

    workload: str
    message: Message
    load: Load  #: the total load, over all processes
    processes: int = 1
    rounds: int = 1


@dataclass(frozen=True, slots=True)
class Measurement:
    """One target measured in one round."""

    endpoint: Endpoint
    round: int  #: 1-based
    tally: Tally


def split(load: Load, processes: int) -> list[Load]:
    """``load`` divided over at most ``processes`` processes (each with a connection)."""
    count = max(1, min(processes, load.connections))

    def share(total: int, index: int) -> int:
        return total // count + (index < total % count)

    return [
        replace(
            load,
            connections=share(load.connections, i),
            concurrency=max(1, share(load.concurrency, i)),
            rate=None if load.rate is None else load.rate / count,
            phase=0.0 if load.rate is None else i / load.rate,  # the processes take turns
        )
        for i in range(count)
    ]


def _read_line(process: subprocess.Popen[str], timeout: float) -> dict[str, object]:
    stdout = process.stdout
    assert stdout is not None
    ready, _, _ = select.select([stdout], [], [], timeout)
    line = stdout.readline() if ready else ""
    if not line:
        raise BenchError(f"a generator process did not answer: {_stderr(process)}")
    obj: dict[str, object] = json.loads(line)
    if "fatal" in obj:
        raise BenchError(str(obj["fatal"]))
    return obj


def _stderr(process: subprocess.Popen[str]) -> str:
    process.kill()
    _, err = process.communicate()
    return err.strip()[-2000:] or f"exit status {process.returncode}"


def _send(stdin: IO[str] | None, obj: object) -> None:
    assert stdin is not None
    stdin.write(json.dumps(obj) + "\n")
    stdin.flush()


def measure(
    endpoint: Endpoint, options: Options, label: str, progress: Progress | None = None
) -> Tally:
    """Measure ``endpoint`` once (see the module docstring).

    Raises:
        BenchError: A generator process failed (e.g. it could not connect).
    """
    loads = split(options.load, options.processes)
    run_id = secrets.token_hex(4)
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "a2a_actors.loadtest._worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in loads
    ]
    try:
        for index, (process, load) in enumerate(zip(processes, loads, strict=True)):
            prefix = f"{run_id}{index:04x}"
            _send(process.stdin, plan(endpoint, options.message, options.workload, load, prefix))
        for process in processes:
            _read_line(process, _READY_TIMEOUT)
        begin_at = time.time() + 0.05
        for process in processes:
            _send(process.stdin, {"begin_at": begin_at})
        total = options.load.warmup + options.load.duration
        while progress is not None and (left := begin_at + total - time.time()) > 0:
            progress(label, 1.0 - left / total if total else 1.0)
            time.sleep(min(0.2, left))
        tally = Tally()
        for process in processes:
            tally.merge(Tally.from_json(_read_line(process, total + options.load.timeout + 30)))
        return tally
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
            process.communicate()


def run_rounds(
    endpoints: list[Endpoint], options: Options, progress: Progress | None = None
) -> list[Measurement]:
    """Measure every endpoint once per round, rotating the order each round."""
    results = []
    count = len(endpoints)
    for round_ in range(options.rounds):
        order = endpoints[round_ % count :] + endpoints[: round_ % count]
        for endpoint in order:
            label = f"{endpoint.name} (round {round_ + 1}/{options.rounds})"
            tally = measure(endpoint, options, label, progress)
            results.append(Measurement(endpoint, round_ + 1, tally))
    return results


class TerminalProgress:
    """Redraws ``label [#####-----] 50%`` in place; a callable ``(label, fraction)``."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._drawn = 0

    @classmethod
    def for_stream(cls, stream: TextIO) -> TerminalProgress | None:
        """A progress bar on ``stream``, or None when it is not a terminal."""
        isatty = getattr(stream, "isatty", None)
        return cls(stream) if isatty is not None and isatty() else None

    def __call__(self, label: str, fraction: float) -> None:
        """Draw ``label`` at ``fraction`` (0..1) done."""
        fraction = min(1.0, max(0.0, fraction))
        filled = round(fraction * _BAR_WIDTH)
        line = f"{label} [{'#' * filled}{'-' * (_BAR_WIDTH - filled)}] {100 * fraction:3.0f}%"
        self._stream.write("\r" + line.ljust(self._drawn))
        self._stream.flush()
        self._drawn = len(line)

    def clear(self) -> None:
        """Erase the bar (before the results are printed)."""
        if self._drawn:
            self._stream.write("\r" + " " * self._drawn + "\r")
            self._stream.flush()
            self._drawn = 0
