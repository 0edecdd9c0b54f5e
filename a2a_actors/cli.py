"""The ``a2a-actors`` command line: a registry of subcommands.

Each subcommand lives in its own module, listed in :data:`SUBCOMMANDS`, which exposes
``register(subparsers)``: it adds its parser and sets ``handler`` (a function of the parsed
arguments returning the exit status) as the parser's default. This module only builds the
parser and dispatches, so adding a command never touches another one.

What goes wrong is one line on stderr, never a traceback, and every command writes it the
same way: ``a2a-actors COMMAND: <what happened>`` (``a2a-actors: ...`` only when there is no
command to name), with hint lines, if any, indented below it. Exit status 2 is for bad input,
1 for a failed call or start, 124 for a timeout, 130 for Ctrl-C:

* usage mistakes, found by the parser before anything runs: ``a2a-actors serve: unknown
  option --prot (did you mean --port?)``, ``a2a-actors: unknown command 'sevre' (did you
  mean serve?)``, ``a2a-actors list: --status: unknown task state 'bogus'; ...`` (exit 2;
  ``--help`` prints the usage);
* each command's own errors, printed by the command (``a2a-actors serve: cannot import
  'mymodule': ...``, ``a2a-actors get: TaskNotFoundError (-32001): ...``);
* anything else escaping a command: ``a2a-actors COMMAND: <Error>: <text> (--debug shows
  the traceback)``, exit 1. ``--debug``, before or after the command name, raises it instead
  (and a served module's import traceback is printed).

A reader that stops early (``a2a-actors list URL | head``) ends the command quietly: no
message, exit status 141 (128 + SIGPIPE, what the shell reports for a process killed by it).
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from a2a_actors._version import __version__

__all__ = ("BROKEN_PIPE", "SUBCOMMANDS", "build_parser", "main")

#: Modules that each register one or more subcommands.
SUBCOMMANDS: tuple[str, ...] = (
    "a2a_actors.server._cli.serve",
    "a2a_actors.client._cli.commands",
    "a2a_actors.client._cli.agents",
    "a2a_actors.loadtest._cli",
)

#: The exit status when stdout's reader went away (128 + SIGPIPE).
BROKEN_PIPE = 141

Handler = Callable[[argparse.Namespace], int]

_DEBUG_HELP = "print tracebacks of unexpected errors (and of a served module's import)"
_TOP_FLAGS = frozenset({"--debug"})  # top-level flags that take no value
_HELP_FLAGS = frozenset({"-h", "--help", "--version"})


class _Parser(argparse.ArgumentParser):
    """A parser whose usage errors are one line: ``PROG: MESSAGE``, exit status 2."""

    def error(self, message: str) -> NoReturn:
        message = message.removeprefix("argument ")
        if message.startswith("the following arguments are required"):
            message += f" (see {self.prog} --help)"
        self.exit(2, f"{self.prog}: {message}\n")


class _TopParser(_Parser):
    """The ``a2a-actors`` parser: an unknown command or option is named with its closest
    match, by the command it was given to."""

    commands: dict[str, argparse.ArgumentParser]

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        argv = list(sys.argv[1:] if args is None else args)
        self._check_command(argv)
        parsed, extras = self.parse_known_args(argv, namespace)
        if extras:
            command = self.commands[parsed.command]
            command.error(_unknown(extras, command))
        return parsed

    def _check_command(self, argv: list[str]) -> None:
        """Refuse a missing or unknown command before argparse's generic message."""
        for word in argv:
            if word in _HELP_FLAGS:
                return  # argparse prints the help or the version
            if word in _TOP_FLAGS:
                continue
            if word.startswith("-"):
                return  # an unknown top-level option: argparse reports it
            if word in self.commands:
                return
            known = list(self.commands)
            also = f" (one of: {', '.join(known)})"
            self.error(f"unknown command {word!r}{_suggestion(word, known, fallback=also)}")
        self.error(f"no command given; one of: {', '.join(self.commands)} (see a2a-actors --help)")


def _suggestion(word: str, choices: list[str], *, fallback: str = "") -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else fallback


def _unknown(extras: list[str], command: argparse.ArgumentParser) -> str:
    """What is wrong with the words ``command`` did not take: the first unknown option (with
    the closest one it has), else the first extra argument."""
    for word in extras:
        if word.startswith("-") and len(word) > 1:
            name = word.partition("=")[0]
            options = [o for a in command._actions for o in a.option_strings if o.startswith("--")]
            hint = f" (see {command.prog} --help)"
            return f"unknown option {name}{_suggestion(name, options, fallback=hint)}"
    return f"unexpected argument {extras[0]!r} (see {command.prog} --help)"


def build_parser() -> argparse.ArgumentParser:
    """The parser with every registered subcommand; its usage errors are one line."""
    parser = _TopParser(
        prog="a2a-actors", description="A2A 1.0 agents as actors: serve and call agents."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--debug", action="store_true", help=_DEBUG_HELP)
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=_Parser
    )
    for name in SUBCOMMANDS:
        importlib.import_module(name).register(subparsers)
    for command in subparsers.choices.values():  # also accepted after the command name
        command.add_argument(
            "--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP
        )
    parser.commands = dict(subparsers.choices)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 on success).

    Raises:
        SystemExit: A usage error (status 2, its line printed) or ``--help``/``--version``
            (status 0).
    """
    args = build_parser().parse_args(argv)
    handler: Handler = args.handler
    try:
        status = handler(args)
        sys.stdout.flush()  # a reader gone away is found here, not at exit
        return status
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        cause = _innermost(exc)
        if isinstance(cause, BrokenPipeError):
            _silence_stdout()
            return BROKEN_PIPE
        if args.debug:
            raise
        print(
            f"a2a-actors {args.command}: {type(cause).__name__}: {cause} "
            "(--debug shows the traceback)",
            file=sys.stderr,
        )
        return 1


def _innermost(exc: BaseException) -> BaseException:
    """The one error inside nested single-error groups (task groups wrap what they raise)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush at exit does not
    fail again on the closed pipe (and print "Exception ignored")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real stdout (an in-process test): nothing to flush
        pass


if __name__ == "__main__":
    sys.exit(main())
