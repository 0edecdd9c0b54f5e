"""``a2a-actors bench TARGET [TARGET ...]``: load-test A2A agents, side by side.

:func:`register` adds the ``bench`` subcommand (the hook :mod:`a2a_actors.cli` calls on each
module of its ``SUBCOMMANDS``); :func:`main` runs it alone. The flags, the output and the
method are documented in ``docs/bench.md``. Exit status: 0 when every operation succeeded,
1 when some failed validation (or the run could not be made), 2 for a bad command line;
errors are one line, ``a2a-actors bench: ...``, as every command's (:mod:`a2a_actors.cli`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

import anyio

from a2a_actors.loadtest._calibrate import calibrate
from a2a_actors.loadtest._engine import Load
from a2a_actors.loadtest._report import (
    ChartError,
    check_chart,
    table,
    to_json,
    warnings,
    write_chart,
)
from a2a_actors.loadtest._requests import load_message
from a2a_actors.loadtest._runner import Options, TerminalProgress, run_rounds
from a2a_actors.loadtest._target import (
    BINDINGS,
    BenchError,
    Credentials,
    Endpoint,
    TargetSpec,
    UsageError,
    resolve,
)
from a2a_actors.loadtest._workloads import WORKLOADS

__all__ = ("add_bench_command", "main", "register", "run")


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, not {text}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number greater than 0, not {text}")
    return value


def add_bench_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``bench`` to ``subparsers``; it sets ``handler(args) -> int``."""
    p = subparsers.add_parser(
        "bench",
        help="load-test A2A agents side by side",
        description="Load-test one or more A2A agents with validated answers (docs/bench.md).",
    )
    p.add_argument("targets", nargs="+", metavar="TARGET", help="an agent URL, or NAME=URL")
    p.add_argument("--binding", choices=tuple(BINDINGS), help="default: the card's choice")
    p.add_argument("--workload", choices=tuple(WORKLOADS), default="send")
    payload = p.add_mutually_exclusive_group()
    payload.add_argument("--text", default="hello", help="the message text (default: hello)")
    payload.add_argument("--message-file", help="a JSON file holding the A2A Message to send")
    p.add_argument(
        "--concurrency",
        type=_positive_int,
        default=16,
        help="closed loop: operations in flight (default 16)",
    )
    p.add_argument("--rate", type=_positive_float, help="open loop: operations per second")
    p.add_argument(
        "--duration",
        type=_positive_float,
        default=10.0,
        help="measured seconds per target and round (default 10)",
    )
    p.add_argument("--warmup", type=float, default=1.0, help="seconds not measured (default 1)")
    p.add_argument(
        "--connections", type=_positive_int, help="TCP connections (default: --concurrency)"
    )
    p.add_argument(
        "--rounds",
        type=_positive_int,
        default=1,
        help="measure every target this many times, interleaved (default 1)",
    )
    p.add_argument(
        "--processes",
        type=_positive_int,
        default=1,
        help="generator processes, about one per free core (default 1)",
    )
    p.add_argument(
        "--timeout",
        type=_positive_float,
        default=30.0,
        help="the longest one exchange may take, in seconds (default 30)",
    )
    p.add_argument(
        "--calibrate",
        action="store_true",
        help="also measure the generator's own ceiling against a trivial server",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object per target and round instead of the table",
    )
    p.add_argument("--chart", metavar="FILE.png", help="draw throughput and latency (matplotlib)")
    p.add_argument("--api-key", help="API key, placed as the card's apiKey scheme says")
    p.add_argument("--bearer-token", help="token sent as 'Authorization: Bearer …'")
    p.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="an extra request header (repeatable)",
    )
    p.set_defaults(handler=run)


#: The name ``a2a_actors.cli`` looks up in each module of its ``SUBCOMMANDS``.
register = add_bench_command


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``bench`` alone; returns the exit status."""
    parser = argparse.ArgumentParser(prog="a2a-actors")
    add_bench_command(parser.add_subparsers(dest="command", required=True))
    try:
        args = parser.parse_args(["bench", *(sys.argv[1:] if argv is None else argv)])
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    status: int = args.handler(args)
    return status


def _options(args: argparse.Namespace) -> Options:
    if args.warmup < 0:
        raise UsageError("--warmup must be 0 or more")
    concurrency = args.concurrency
    load = Load(
        connections=args.connections or concurrency,
        concurrency=concurrency,
        rate=args.rate,
        warmup=args.warmup,
        duration=args.duration,
        timeout=args.timeout,
    )
    message = load_message(args.text, args.message_file)
    return Options(args.workload, message, load, args.processes, args.rounds)


async def _endpoints(args: argparse.Namespace) -> list[Endpoint]:
    specs = [TargetSpec.parse(text) for text in args.targets]
    names = [spec.name for spec in specs]
    if len(set(names)) != len(names):
        raise UsageError("two targets have the same name; label them NAME=URL")
    credentials = Credentials(
        api_key=args.api_key,
        bearer_token=args.bearer_token,
        headers=tuple(Credentials.parse_header(h) for h in args.header),
    )
    endpoints = [await resolve(spec, args.binding, credentials) for spec in specs]
    for endpoint in endpoints:
        if args.workload == "stream" and endpoint.streaming is False:
            raise BenchError(f"{endpoint.name}: its card does not declare streaming")
    return endpoints


def run(args: argparse.Namespace) -> int:
    """The ``bench`` handler."""
    try:
        options = _options(args)
        if args.chart:
            check_chart(args.chart)  # before the run, not after minutes of it
        endpoints = anyio.run(_endpoints, args, backend="trio")
        progress = TerminalProgress.for_stream(sys.stderr)
        try:
            results = run_rounds(endpoints, options, progress)
            ceiling = None
            if args.calibrate:
                ceiling = calibrate(endpoints[0].binding, options, progress)
        finally:
            if progress is not None:
                progress.clear()
        if args.json:
            for measurement in results:
                print(json.dumps(to_json(measurement, options, ceiling)), flush=True)
        else:
            print(table(results, options))
            if ceiling is not None:
                print(f"generator ceiling against a trivial server: {ceiling:,.0f} ops/s")
        for line in warnings(results, options, ceiling):
            print(line, file=sys.stderr)
        if args.chart:
            write_chart(args.chart, results, options)
    except UsageError as exc:
        print(f"a2a-actors bench: {exc}", file=sys.stderr)
        return 2
    except (BenchError, ChartError) as exc:
        print(f"a2a-actors bench: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 1 if any(m.tally.failed for m in results) else 0


if __name__ == "__main__":
    sys.exit(main())
