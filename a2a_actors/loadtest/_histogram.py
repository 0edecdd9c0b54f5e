"""An HDR-style latency histogram: log-linear buckets, three significant digits.

Values are whole microseconds. Below 2048 µs every value has its own bucket; above, each
power-of-two range is split into 1024 equal buckets, so a bucket is never wider than 1/1024
of its values (a relative error under 0.1%, as HdrHistogram with three significant digits).
Buckets are kept sparse (a dict of counts), which makes recording one dict update and
merging a sum. The exact minimum and maximum are kept besides.

:meth:`Histogram.to_json` writes the non-empty buckets as ``[low_us, high_us, count]``
triples; :meth:`Histogram.from_json` reads them back, so histograms from several generator
processes (or a saved ``--json`` run) merge without loss.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ("Histogram",)

_SUB_BITS = 11  # 2048 sub-buckets: three significant digits
_HALF = 1 << (_SUB_BITS - 1)


def _index(value: int) -> int:
    shift = value.bit_length() - _SUB_BITS
    if shift <= 0:
        return value
    return shift * _HALF + (value >> shift)


def _bounds(index: int) -> tuple[int, int]:
    """The lowest and highest value that fall in bucket ``index``."""
    if index < 2 * _HALF:
        return index, index
    shift = index // _HALF - 1
    sub = index - shift * _HALF
    return sub << shift, ((sub + 1) << shift) - 1


class Histogram:
    """Counts of latencies in microseconds; see the module docstring."""

    __slots__ = ("_counts", "_max", "_min", "_sum", "count")

    def __init__(self) -> None:
        self._counts: dict[int, int] = {}
        self.count = 0
        self._sum = 0
        self._min = 0
        self._max = 0

    def record(self, value_us: int) -> None:
        """Count one value (negative values count as 0)."""
        value = max(0, value_us)
        index = _index(value)
        counts = self._counts
        counts[index] = counts.get(index, 0) + 1
        if self.count == 0 or value < self._min:
            self._min = value
        if value > self._max:
            self._max = value
        self.count += 1
        self._sum += value

    def merge(self, other: Histogram) -> None:
        """Add every count of ``other`` to this histogram."""
        if other.count == 0:
            return
        counts = self._counts
        for index, n in other._counts.items():
            counts[index] = counts.get(index, 0) + n
        self._min = other._min if self.count == 0 else min(self._min, other._min)
        self._max = max(self._max, other._max)
        self.count += other.count
        self._sum += other._sum

    @property
    def min_us(self) -> int:
        """The smallest value recorded (0 when empty)."""
        return self._min

    @property
    def max_us(self) -> int:
        """The largest value recorded (0 when empty)."""
        return self._max

    @property
    def mean_us(self) -> float:
        """The mean of the values (0.0 when empty)."""
        return self._sum / self.count if self.count else 0.0

    def percentile(self, percent: float) -> int:
        """The value at or below which ``percent`` % of the values fall (0 when empty).

        As in HdrHistogram, the answer is the highest value of the bucket it falls in,
        capped by the exact maximum, so it never understates a latency.
        """
        if self.count == 0:
            return 0
        rank = max(1, min(self.count, math.ceil(percent * self.count / 100 - 1e-9)))
        seen = 0
        for index in sorted(self._counts):
            seen += self._counts[index]
            if seen >= rank:
                return min(_bounds(index)[1], self._max)
        return self._max  # pragma: no cover - the ranks add up to count

    def to_json(self) -> dict[str, Any]:
        """The histogram as JSON: counts, exact min/max/mean, and the sparse buckets."""
        return {
            "unit": "us",
            "significant_digits": 3,
            "count": self.count,
            "min": self._min,
            "max": self._max,
            "mean": round(self.mean_us, 1),
            "sum": self._sum,
            "buckets": [[*_bounds(i), self._counts[i]] for i in sorted(self._counts)],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Histogram:
        """Read back what :meth:`to_json` wrote."""
        histogram = cls()
        for low, _high, n in data["buckets"]:
            index = _index(int(low))
            histogram._counts[index] = histogram._counts.get(index, 0) + int(n)
        histogram.count = int(data["count"])
        histogram._min = int(data["min"])
        histogram._max = int(data["max"])
        histogram._sum = int(data["sum"])
        return histogram
