"""``a2a-actors serve --metrics [--metrics-public]``: the flags and their config.

Traces need no flag: the standard ``OTEL_*`` variables turn them on
(:mod:`a2a_actors.runtime._tracing`, docs/observability.md).
"""

from __future__ import annotations

import argparse
from typing import Any

from a2a_actors.server._config.config import ServerConfig
from a2a_actors.server._config.metrics import MetricsOptions

__all__ = ("add_arguments", "apply")


def add_arguments(parser: Any) -> None:
    """Add ``--metrics`` and ``--metrics-public`` to the ``serve`` parser."""
    group = parser.add_argument_group("observability (docs/observability.md)")
    group.add_argument(
        "--metrics",
        action="store_true",
        help="serve Prometheus metrics at /metrics (behind the server's credentials)",
    )
    group.add_argument(
        "--metrics-public",
        action="store_true",
        help="serve /metrics without credentials (implies --metrics)",
    )


def apply(config: ServerConfig, args: argparse.Namespace) -> ServerConfig:
    """``config`` with the metrics the flags ask for (unchanged without them)."""
    if not (args.metrics or args.metrics_public):
        return config
    return config.replace(metrics=MetricsOptions(public=args.metrics_public))
