"""The ``serve`` command's flags, in one parser: what the command parses, and what
:func:`~a2a_actors.server.serve_workers` parses for each worker it starts."""

from __future__ import annotations

import argparse
from typing import Any

from a2a_actors.server._cli import (
    grpc as cli_grpc,
    metrics as cli_metrics,
    trust as cli_trust,
    values as cli_values,
)
from a2a_actors.server._observability.inspector import cli as inspector_cli

__all__ = ("add_serve_parser",)


def add_serve_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``serve`` subcommand's parser (every flag, no handler) and return it."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "serve", help="serve an agent over A2A (JSON-RPC, HTTP+JSON, SSE)"
    )
    parser.add_argument("target", metavar="MODULE:ATTR", help="the agent to serve")
    cli_values.add_arguments(parser)  # --host, --port, caps, store, cluster...
    cli_trust.add_arguments(parser)  # --jwks..., --sign-card... (docs/trust.md)
    cli_values.add_worker_arguments(parser)  # --workers (docs/cluster.md)
    cli_metrics.add_arguments(parser)  # --metrics, --metrics-public (docs/observability.md)
    inspector_cli.add_arguments(parser)  # --inspect, --inspect-peer (docs/observability.md)
    cli_grpc.add_arguments(parser)  # --grpc-port, --grpc-host, --grpc-advertise (docs/grpc.md)
    return parser
