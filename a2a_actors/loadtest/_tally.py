"""What one measurement counted: operations, errors by kind with samples, histograms.

A :class:`Tally` is filled by one generator process during its window, sent to the parent
as JSON (:meth:`Tally.to_json`), and the tallies of a measurement's processes are merged
into one (:meth:`Tally.merge`). Only operations that *ended* inside the window count;
those still in flight at its end are abandoned, and in an open loop the operations that
were due but never started are counted as ``backlog``.
"""

from __future__ import annotations

from typing import Any

from a2a_actors.loadtest._histogram import Histogram

__all__ = ("SAMPLES_PER_KIND", "Tally")

#: How many sample answers are kept for each kind of error.
SAMPLES_PER_KIND = 3


class Tally:
    """The counts of one measurement (see the module docstring).

    ``latency`` holds successful operations only, from their (intended) start to their end;
    ``secondary`` the workload's second metric (time to first event, a cancel's latency).
    """

    def __init__(self) -> None:
        self.ok = 0
        self.requests = 0  #: HTTP exchanges completed in the window
        self.errors: dict[str, int] = {}
        self.samples: dict[str, list[str]] = {}
        self.latency = Histogram()
        self.secondary = Histogram()
        self.cpu_s = 0.0  #: generator CPU time (user + system) in the window, all processes
        self.window_s = 0.0
        self.processes = 0
        self.max_cpu_share = 0.0  #: the busiest process's CPU time / window
        self.reconnects = 0
        self.backlog = 0
        self.in_flight = 0  #: operations abandoned at the end of the window

    @property
    def failed(self) -> int:
        """How many operations failed."""
        return sum(self.errors.values())

    def error(self, kind: str, detail: str) -> None:
        """Count one failed operation of ``kind`` (keeping its detail as a sample)."""
        self.errors[kind] = self.errors.get(kind, 0) + 1
        samples = self.samples.setdefault(kind, [])
        if len(samples) < SAMPLES_PER_KIND:
            samples.append(detail)

    def merge(self, other: Tally) -> None:
        """Add ``other`` (another process's tally of the same window) to this one."""
        self.ok += other.ok
        self.requests += other.requests
        for kind, n in other.errors.items():
            self.errors[kind] = self.errors.get(kind, 0) + n
        for kind, samples in other.samples.items():
            mine = self.samples.setdefault(kind, [])
            mine.extend(samples[: SAMPLES_PER_KIND - len(mine)])
        self.latency.merge(other.latency)
        self.secondary.merge(other.secondary)
        self.cpu_s += other.cpu_s
        self.window_s = max(self.window_s, other.window_s)
        self.processes += other.processes
        self.max_cpu_share = max(self.max_cpu_share, other.max_cpu_share)
        self.reconnects += other.reconnects
        self.backlog += other.backlog
        self.in_flight += other.in_flight

    def to_json(self) -> dict[str, Any]:
        """The tally as JSON."""
        return {
            "ok": self.ok,
            "requests": self.requests,
            "errors": dict(sorted(self.errors.items())),
            "samples": dict(sorted(self.samples.items())),
            "latency": self.latency.to_json(),
            "secondary": self.secondary.to_json(),
            "cpu_s": round(self.cpu_s, 4),
            "window_s": self.window_s,
            "processes": self.processes,
            "max_cpu_share": round(self.max_cpu_share, 4),
            "reconnects": self.reconnects,
            "backlog": self.backlog,
            "in_flight": self.in_flight,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Tally:
        """Read back what :meth:`to_json` wrote."""
        tally = cls()
        tally.ok = int(data["ok"])
        tally.requests = int(data["requests"])
        tally.errors = {str(k): int(v) for k, v in data["errors"].items()}
        tally.samples = {str(k): [str(s) for s in v] for k, v in data["samples"].items()}
        tally.latency = Histogram.from_json(data["latency"])
        tally.secondary = Histogram.from_json(data["secondary"])
        tally.cpu_s = float(data["cpu_s"])
        tally.window_s = float(data["window_s"])
        tally.processes = int(data["processes"])
        tally.max_cpu_share = float(data["max_cpu_share"])
        tally.reconnects = int(data["reconnects"])
        tally.backlog = int(data["backlog"])
        tally.in_flight = int(data["in_flight"])
        return tally
