"""``a2a-actors serve ... --grpc-port PORT``: the gRPC binding beside HTTP (docs/grpc.md).

``--grpc-port`` (0 picks a free port) serves ``lf.a2a.v1.A2AService`` on ``--grpc-host``
(default: ``--host``); once serving, the command prints the gRPC endpoint as a URL the
client commands take (``grpc://host:port``; the card's ``GRPC`` interface writes it
``host:port``) on its own line, after the HTTP URL.
``--grpc-advertise HOST:PORT`` is the address the card gives instead (a proxy's).

With ``--workers N`` every worker serves the one gRPC port (``SO_REUSEPORT``: the parent
picks and holds it, as it does the HTTP port, and prints it) and the kernel spreads gRPC
connections over the workers as it does HTTP ones.

Refused before anything starts, with one line on stderr and exit status 2: ``--backend
trio`` (grpcio's server runs on asyncio), a missing ``grpc`` extra, and the other
``--grpc-*`` flags without ``--grpc-port``.
"""

from __future__ import annotations

import argparse
from typing import Any

from a2a_actors.server._cli import values as cli_values
from a2a_actors.server._config.config import ServerConfig
from a2a_actors.server._config.grpc import GrpcExtraMissingError, GrpcOptions, require_grpc

__all__ = ("add_arguments", "apply")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--grpc-port``, ``--grpc-host`` and ``--grpc-advertise`` to ``serve``."""
    parser.add_argument(
        "--grpc-port",
        type=cli_values.port,
        metavar="PORT",
        help="also serve the gRPC binding on this port (0 picks a free one; asyncio)",
    )
    parser.add_argument(
        "--grpc-host", metavar="HOST", help="interface of the gRPC port (default: --host)"
    )
    parser.add_argument(
        "--grpc-advertise",
        metavar="HOST:PORT",
        help="the gRPC address the card gives (default: the card's host, the bound port)",
    )
    parser.set_defaults(grpc_shared=False)  # a worker's, set by its parent


def apply(config: ServerConfig, args: argparse.Namespace) -> ServerConfig:
    """``config`` with the gRPC flags applied.

    Raises:
        ValueError: A combination that cannot be served (the message is the one line).
    """
    if args.grpc_port is None:
        if args.grpc_host or args.grpc_advertise:
            raise ValueError("--grpc-host and --grpc-advertise need --grpc-port")
        return config
    if args.backend != "asyncio":
        raise ValueError("--grpc-port needs --backend asyncio (grpcio's server runs on asyncio)")
    try:
        require_grpc()
    except GrpcExtraMissingError as exc:
        raise ValueError(str(exc)) from None
    # A worker of ``serve --workers`` shares the port its parent holds (workers.py).
    options: dict[str, Any] = {"port": args.grpc_port, "shared": args.grpc_shared}
    if args.grpc_host:
        options["host"] = args.grpc_host
    if args.grpc_advertise:
        options["advertised"] = args.grpc_advertise
    return config.replace(grpc=GrpcOptions(**options))
