"""The ``a2a-actors`` command line: a registry of subcommands.

Each subcommand lives in its own module, listed in :data:`SUBCOMMANDS`, which exposes
``register(subparsers)``: it adds its parser and sets ``handler`` (a function of the parsed
arguments returning the exit status) as the parser's default. This module only builds the
parser and dispatches, so adding a command never touches another one.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

from ._version import __version__

__all__ = ("SUBCOMMANDS", "build_parser", "main")

#: Modules that each register one or more subcommands.
SUBCOMMANDS: tuple[str, ...] = (
    "a2a_actors.server.cli_serve",
    "a2a_actors.client.cli",
    "a2a_actors.loadtest.cli",
)

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    """The parser with every registered subcommand."""
    parser = argparse.ArgumentParser(
        prog="a2a-actors", description="A2A 1.0 agents as actors: serve and call agents."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in SUBCOMMANDS:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 on success)."""
    args = build_parser().parse_args(argv)
    handler: Handler = args.handler
    return handler(args)


if __name__ == "__main__":
    sys.exit(main())
