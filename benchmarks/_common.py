"""Shared helpers of the benchmark scripts: command line, result output, environment.

Every script builds its parser with :func:`make_parser` (which adds ``--json`` and
``--quick``), measures, and hands each result dict to :func:`emit`. With ``--json`` a result
is one JSON object per line, ready for ``jq`` or a CI artefact; without it, one readable line.
Each result should carry ``versions()`` so numbers are never separated from what produced
them.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
from collections.abc import Sequence
from importlib import metadata
from typing import Any

__all__ = ("emit", "make_parser", "percentile", "versions")


def make_parser(description: str) -> argparse.ArgumentParser:
    """An argument parser with the options every benchmark script shares.

    ``--json``: one JSON object per result line. ``--quick``: a smoke-sized run (CI).
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--json", action="store_true", help="print one JSON object per result line")
    parser.add_argument("--quick", action="store_true", help="a short smoke run (fewer iterations)")
    return parser


def versions(*extra: str) -> dict[str, str]:
    """Python, msgspec and a2a-actors versions, plus those of the ``extra`` distributions.

    A distribution that is not installed is reported as ``"absent"``.
    """
    found = {"python": platform.python_version()}
    for dist in ("msgspec", "a2a-actors", *extra):
        try:
            found[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            found[dist] = "absent"
    return found


def percentile(samples: Sequence[float], q: float) -> float:
    """The ``q``-quantile (0 ≤ q ≤ 1) of ``samples`` by nearest rank, in their own unit.

    Returns NaN for no samples.

    Raises:
        ValueError: ``q`` is outside 0..1.
    """
    if not 0 <= q <= 1:
        raise ValueError(f"q must be within 0..1, got {q}")
    if not samples:
        return math.nan
    ordered = sorted(samples)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[rank - 1]


def emit(result: dict[str, Any], json_mode: bool) -> None:
    """Print one result: a JSON line with ``json_mode``, otherwise a readable line.

    The readable line shows ``name`` and the numeric fields, leaving out ``versions``.
    """
    if json_mode:
        print(json.dumps(result, sort_keys=False), flush=True)
        return
    fields = []
    for key, value in result.items():
        if key in ("name", "versions"):
            continue
        if isinstance(value, float):
            fields.append(f"{key}={value:,.2f}")
        else:
            fields.append(f"{key}={value}")
    print(f"{result.get('name', '?'):<48} " + "  ".join(fields), flush=True)
