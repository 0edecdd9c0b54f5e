"""``serve --inspect``: the flags of the inspector page and their translation into config.

``--inspect`` serves the page at ``/inspect`` (docs/observability.md, "Inspector").
``--inspect-peer URL`` (repeatable) limits the servers whose child tasks the hop tree may
read to those base URLs; without it, any ``http(s)`` URL a parent recorded is read.
"""

from __future__ import annotations

import argparse
from typing import Any

from a2a_actors.server._config.config import ServerConfig
from a2a_actors.server._config.inspector import InspectorOptions

__all__ = ("add_arguments", "apply")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--inspect`` and ``--inspect-peer`` to the ``serve`` parser."""
    parser.add_argument(
        "--inspect",
        action="store_true",
        help="serve a live page of the tasks at /inspect (same auth as the A2A endpoints)",
    )
    parser.add_argument(
        "--inspect-peer",
        action="append",
        default=[],
        metavar="URL",
        help="a server whose child tasks the hop tree may read (repeatable; default: any "
        "URL a parent recorded)",
    )


def apply(config: ServerConfig, args: argparse.Namespace) -> ServerConfig:
    """``config`` with the inspector the flags ask for.

    Raises:
        ValueError: ``--inspect-peer`` without ``--inspect``, or not an http(s) URL.
    """
    peers: list[str] = args.inspect_peer
    if not args.inspect:
        if peers:
            raise ValueError("--inspect-peer needs --inspect")
        return config
    base = config.inspect or InspectorOptions()
    changes: dict[str, Any] = {}
    if peers:
        changes["peers"] = (*(base.peers or ()), *peers)
    options = InspectorOptions(**{**_fields(base), **changes})
    return config.replace(inspect=options)


def _fields(options: InspectorOptions) -> dict[str, Any]:
    return {name: getattr(options, name) for name in options.__dataclass_fields__}
