"""Command-line access to any A2A agent: ``card``, ``send``, ``get``, ``list``, ``cancel``,
``subscribe``.

Each subcommand takes the agent's base URL (an ``http(s)://`` URL, checked before anything is sent),
or its name with ``--registry nats://HOST:PORT`` or ``--registry FILE`` (or the registry
``A2A_ACTORS_REGISTRY`` names; see :mod:`a2a_actors.client._registry.registry`), discovers its card
(see :mod:`a2a_actors.client._discovery`) and calls one method. ``--binding jsonrpc|rest|grpc``
speaks that binding only (by default the card's choice, see
:func:`~a2a_actors.client._discovery.auto_bindings`); a gRPC endpoint without a card is named
``grpc://HOST:PORT`` (``grpcs://`` for TLS) and spoken to directly (``card`` then has no card to
show). Output is human-readable by default (streams print text as it arrives and one line per status
change); ``--json`` prints the A2A wire JSON of each result or event, one per line, as
:func:`a2a_actors.protocol.codec.encode` writes it (``send`` prints a SendMessageResponse, streams
print StreamResponses). What is meant for the person rather than a script (a task's id while
waiting, how to answer a task waiting for input (its question too with ``--json``), how to follow a
task left running) goes to stderr: see :mod:`a2a_actors.client._cli.output` and
:mod:`a2a_actors.client._cli.send`.

Errors are one line on stderr, ``a2a-actors COMMAND: ...``, with hint lines indented below it (see
:mod:`a2a_actors.client._cli.errors`). Exit status: 0 ok; 1 the call failed (``a2a-actors get:
TaskNotFoundError (-32001): ...``; an authentication failure adds a hint about
``--api-key``/``--bearer-token``; a TLS handshake that failed is named as such); 2 bad input
(usage, a malformed URL, an unknown ``--status``, a ``--verify`` JWKS that cannot be read,
``--binding`` naming a binding the agent's card does not offer, a missing extra); 3 the card
is not signed by a key of ``--verify JWKS`` (a file or URL; every command takes it;
docs/trust.md); 124 no answer in time; 130 interrupted (Ctrl-C).

Time: ``--timeout SECONDS`` (every command) bounds the whole command, the registry lookup
and the card's discovery included. Without it, finding the agent (registry and card) and
the calls that do not wait on the agent's work (``card``, ``get``, ``list``) are bounded by
:data:`DEFAULT_BOUND` seconds; ``send``, ``subscribe`` and ``cancel`` wait as long as the
task takes (``send`` says on stderr what it waits for). Past a bound the command says what
it was waiting for, on stderr, and exits 124.

Retries: ``send`` carries an ``Idempotency-Key`` (``--idempotency-key KEY``, or a fresh one
per run) and repeats a send whose connection failed with that key, up to ``--retries N``
times (2 by default; :func:`~.middleware.retry_sends`): a server that honours the key, as
a2a-actors does, runs it once. Running the command again with the same key gets the task
the first run created.

:func:`add_client_commands` (alias :func:`register`, the hook ``a2a_actors.cli`` calls on each
module in its ``SUBCOMMANDS``) adds the subcommands to another parser; each sets ``handler``,
a callable ``(argparse.Namespace) -> int`` returning the exit status. :func:`main` is a parser
with just these subcommands.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager

import anyio

from a2a_actors.client._card_verify import CardSignatureError
from a2a_actors.client._cli.args import common_flags, count, idempotency_key, task_state_flag
from a2a_actors.client._cli.deadline import DEFAULT_BOUND, TIMED_OUT, Deadline, TimedOut
from a2a_actors.client._cli.errors import (
    GRPC_SCHEMES,
    check_binding,
    credentials_hint,
    describe,
    fail,
    grpc_extra,
    registry_extra,
)
from a2a_actors.client._cli.output import (
    emit,
    follow,
    print_card,
    print_reply,
    state_name,
    waiting_hint,
)
from a2a_actors.client._cli.send import send
from a2a_actors.client._client import A2AClient
from a2a_actors.client._registry.registry import REGISTRY_ENV, Registry, is_url, open_registry
from a2a_actors.client._transports.grpc_binding import GRPC_BINDING, GRPCUnavailableError
from a2a_actors.client.middleware import retry_sends
from a2a_actors.protocol._errors import A2AError, UnauthenticatedError, UnsupportedOperationError
from a2a_actors.protocol._models import StreamResponse
from a2a_actors.protocol._state import TERMINAL_STATES

__all__ = ("add_client_commands", "main", "opened_registry", "register")

#: A subcommand's coroutine, run with a connected client; returns the exit status.
_Command = Callable[[A2AClient, argparse.Namespace], Awaitable[int | None]]
#: What a subparser's ``handler`` default is: parsed arguments in, exit status out.
_Handler = Callable[[argparse.Namespace], int]


def add_client_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the client subcommands to ``subparsers``; each sets ``handler(args) -> int``."""
    common = common_flags()
    card = subparsers.add_parser("card", parents=[common], help="show the agent's card")
    card.set_defaults(handler=_runner(_card))

    send_ = subparsers.add_parser("send", parents=[common], help="send a text message")
    send_.add_argument("text", help="the message text")
    send_.add_argument("--stream", action="store_true", help="stream the reply as it comes")
    send_.add_argument("--task-id", default="", help="continue this (interrupted) task")
    send_.add_argument("--context-id", default="", help="send within this context")
    send_.add_argument(
        "--return-immediately", action="store_true", help="do not wait for the task to finish"
    )
    send_.add_argument(
        "--idempotency-key",
        type=idempotency_key,
        default=None,
        metavar="KEY",
        help="the send's Idempotency-Key (default: a fresh one): running the command again "
        "with the same key gets the task the first run created",
    )
    send_.add_argument(
        "--retries",
        type=count,
        default=2,
        metavar="N",
        help="repeat a send whose connection failed, with the same key, up to N times (default 2)",
    )
    send_.set_defaults(handler=_runner(send))

    get = subparsers.add_parser("get", parents=[common], help="show a task")
    get.add_argument("task_id")
    get.add_argument("--history-length", type=int, default=None)
    get.set_defaults(handler=_runner(_get))

    list_ = subparsers.add_parser("list", parents=[common], help="list tasks")
    list_.add_argument("--context-id", default=None)
    list_.add_argument(
        "--status", type=task_state_flag, default=None, help="e.g. working, TASK_STATE_COMPLETED"
    )
    list_.add_argument("--page-size", type=int, default=None)
    list_.add_argument("--page-token", default=None)
    list_.set_defaults(handler=_runner(_list))

    cancel = subparsers.add_parser("cancel", parents=[common], help="cancel a task")
    cancel.add_argument("task_id")
    cancel.set_defaults(handler=_runner(_cancel))

    subscribe = subparsers.add_parser("subscribe", parents=[common], help="follow a task")
    subscribe.add_argument("task_id")
    subscribe.set_defaults(handler=_runner(_subscribe))


#: The name ``a2a_actors.cli`` looks up in each module of its ``SUBCOMMANDS``.
register = add_client_commands


def main(argv: Sequence[str] | None = None) -> int:
    """Run one client subcommand; returns the exit status (0 ok, 1 call failed, 2 usage)."""
    parser = argparse.ArgumentParser(prog="a2a-actors", description="Call an A2A agent.")
    add_client_commands(parser.add_subparsers(dest="command", required=True))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    status: int = args.handler(args)
    return status


# -- running -------------------------------------------------------------------------------


def _runner(command: _Command) -> _Handler:
    def run(args: argparse.Namespace) -> int:
        # nats-py (a NATS registry) runs on asyncio only; everything else on trio.
        backend = "asyncio" if _registry_spec(args).startswith(("nats://", "tls://")) else "trio"
        try:
            return anyio.run(_call, command, args, backend=backend)
        except UnauthenticatedError as exc:
            fail(args, describe(exc), credentials_hint(args))
            return 1
        except CardSignatureError as exc:  # before A2AError: its own status
            fail(args, describe(exc))
            return 3
        except A2AError as exc:
            fail(args, describe(exc))
            return 1
        except TimedOut as exc:
            fail(args, str(exc))
            return TIMED_OUT
        except GRPCUnavailableError:  # before ValueError, which it is
            fail(args, grpc_extra(args))
            return 2
        except ValueError as exc:  # an argument the client refuses
            fail(args, str(exc))
            return 2
        except KeyboardInterrupt:
            return 130

    return run


def _registry_spec(args: argparse.Namespace) -> str:
    spec: str = getattr(args, "registry", None) or os.environ.get(REGISTRY_ENV, "")
    return spec


async def _call(command: _Command, args: argparse.Namespace) -> int:
    args.deadline = Deadline(args.timeout)
    with args.deadline.bound(f"finding the agent {args.url}", default=DEFAULT_BOUND):
        if not is_url(args.url) and not args.url.startswith(GRPC_SCHEMES):
            spec = _registry_spec(args)
            if not spec:
                raise ValueError(
                    f"{args.url!r} is not an http(s) URL; to find an agent by name, pass "
                    f"--registry nats://HOST:PORT or --registry FILE (or set {REGISTRY_ENV})"
                )
            async with opened_registry(spec) as registry:
                entry = await registry.resolve(args.url)
            args.url = entry.url  # what the hints printed later name
        client = await _connect(args)
    async with client:
        if command in _QUICK:
            with args.deadline.bound(f"the answer of {args.url}", default=DEFAULT_BOUND):
                status = await command(client, args)
        elif command is send:  # it reports its own timeout, with the task it left running
            status = await command(client, args)
        else:
            with args.deadline.bound(f"the answer of {args.url}"):
                status = await command(client, args)
    return status or 0


async def _connect(args: argparse.Namespace) -> A2AClient:
    credentials = {"api_key": args.api_key, "bearer_token": args.bearer_token}
    retries = getattr(args, "retries", None)  # send's own
    middleware = [] if retries is None else [retry_sends(retries + 1)]
    if not args.url.startswith(GRPC_SCHEMES):
        bindings = (args.binding,) if args.binding else None
        client = await A2AClient.connect(
            args.url,
            bindings=bindings,
            verify_card=args.verify,
            middleware=middleware,
            **credentials,
        )
        try:
            check_binding(client, args.binding)
        except ValueError:
            await client.aclose()
            raise
        return client
    if args.verify is not None:
        raise ValueError(f"{args.url} has no card to verify: --verify needs the agent's URL")
    if args.binding not in (None, GRPC_BINDING):
        raise ValueError(f"{args.url} is a gRPC endpoint: --binding {args.binding} cannot reach it")
    return A2AClient(args.url, binding=GRPC_BINDING, middleware=middleware, **credentials)


@asynccontextmanager
async def opened_registry(spec: str) -> AsyncIterator[Registry]:
    """:func:`~.._registry.registry.open_registry` for a command: a file that cannot be read and a
    missing nats-py are usage errors (``ValueError``: exit status 2)."""
    try:
        opening = open_registry(spec)
    except OSError as exc:
        raise ValueError(f"cannot read the registry file {spec!r}: {exc.strerror or exc}") from None
    except RuntimeError:  # ClusterExtraMissingError
        raise ValueError(registry_extra()) from None
    async with opening as registry:
        yield registry


# -- commands ------------------------------------------------------------------------------


async def _card(client: A2AClient, args: argparse.Namespace) -> None:
    card = client.card
    if card is None:  # a grpc:// endpoint: no well-known card to fetch
        raise ValueError(f"{args.url} has no card to fetch; give the agent's http(s) base URL")
    if args.json:
        emit(card)
        return
    print_card(card, client)


async def _get(client: A2AClient, args: argparse.Namespace) -> None:
    task = await client.get_task(args.task_id, history_length=args.history_length)
    if args.json:
        emit(task)
    else:
        print_reply(task)
    waiting_hint(task, args.url, as_json=args.json)


async def _list(client: A2AClient, args: argparse.Namespace) -> None:
    page = await client.list_tasks(
        context_id=args.context_id,
        status=args.status,
        page_size=args.page_size,
        page_token=args.page_token,
    )
    if args.json:
        emit(page)
        return
    for task in page.tasks:
        print(f"{task.id}  {state_name(task.status.state):<15} context {task.context_id}")
    print(f"({len(page.tasks)} of {page.total_size})")
    if page.next_page_token:
        print(f"next page: --page-token {page.next_page_token}")


async def _cancel(client: A2AClient, args: argparse.Namespace) -> None:
    task = await client.cancel_task(args.task_id)
    if args.json:
        emit(task)
    else:
        print_reply(task)


#: The commands that do not wait on an agent's work: bounded by default.
_QUICK: tuple[_Command, ...] = (_card, _get, _list)


async def _subscribe(client: A2AClient, args: argparse.Namespace) -> None:
    stream = client.subscribe(args.task_id)
    try:
        await follow(stream, as_json=args.json)
    except UnsupportedOperationError:
        # Refused because the task already ended (-32004)? Then show how it ended.
        task = await client.get_task(args.task_id)
        if task.status.state not in TERMINAL_STATES:
            raise
        if args.json:
            emit(StreamResponse(task=task))
        else:
            print_reply(task)
        return
    waiting_hint(stream.task, args.url, as_json=args.json)
