"""The ``a2a-actors`` command line: a registry of subcommands.

Each subcommand lives in its own module, listed in :data:`SUBCOMMANDS`, which exposes
``register(subparsers)``: it adds its parser and sets ``handler`` (a function of the parsed
arguments returning the exit status) as the parser's default. This module only builds the
parser and dispatches, so adding a command never touches another one.

User errors are one line on stderr, never a traceback: each command reports its own
(``a2a-actors serve: ...``, ``error: ...``) with exit status 2 for bad input and 1 for a
failed call; anything else escaping a command is printed as ``a2a-actors: <Error>: <text>``
(exit status 1). ``--debug``, before or after the command name, prints the traceback
instead (and a served module's import traceback).
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
    "a2a_actors.client.cli_agents",
    "a2a_actors.loadtest.cli",
)

Handler = Callable[[argparse.Namespace], int]

_DEBUG_HELP = "print tracebacks of unexpected errors (and of a served module's import)"


def build_parser() -> argparse.ArgumentParser:
    """The parser with every registered subcommand."""
    parser = argparse.ArgumentParser(
        prog="a2a-actors", description="A2A 1.0 agents as actors: serve and call agents."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--debug", action="store_true", help=_DEBUG_HELP)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in SUBCOMMANDS:
        importlib.import_module(name).register(subparsers)
    for command in subparsers.choices.values():  # also accepted after the command name
        command.add_argument(
            "--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP
        )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 on success)."""
    args = build_parser().parse_args(argv)
    handler: Handler = args.handler
    try:
        return handler(args)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if args.debug:
            raise
        cause = _innermost(exc)
        print(
            f"a2a-actors: {type(cause).__name__}: {cause} (--debug shows the traceback)",
            file=sys.stderr,
        )
        return 1


def _innermost(exc: BaseException) -> BaseException:
    """The one error inside nested single-error groups (task groups wrap what they raise)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


if __name__ == "__main__":
    sys.exit(main())
