"""Command-line access to any A2A agent: ``card``, ``send``, ``get``, ``list``, ``cancel``,
``subscribe``.

Each subcommand takes the agent's base URL, discovers its card (see :mod:`.discovery`) and
calls one method. Output is human-readable by default (streams print text as it arrives and
one line per status change); ``--json`` prints the A2A wire JSON of each result or event, one
per line, as :func:`a2a_actors.protocol.codec.encode` writes it (``send`` prints a
SendMessageResponse, streams print StreamResponses). A failed call prints
``error: <ErrorClass> (<code>): <message>`` on stderr and exits with status 1.

:func:`add_client_commands` (alias :func:`register`, the hook ``a2a_actors.cli`` calls on each
module in its ``SUBCOMMANDS``) adds the subcommands to another parser; each sets ``handler``,
a callable ``(argparse.Namespace) -> int`` returning the exit status. :func:`main` is a parser
with just these subcommands.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable, Sequence

import anyio

from a2a_actors.protocol import codec
from a2a_actors.protocol.card import AgentCard
from a2a_actors.protocol.errors import A2AError
from a2a_actors.protocol.models import Message, StreamResponse, Task, TaskState
from a2a_actors.protocol.requests import SendMessageResponse

from .client import A2AClient
from .discovery import DEFAULT_BINDINGS
from .remote_agent import CallResult
from .stream import EventStream

__all__ = ("add_client_commands", "main", "register")

#: A subcommand's coroutine, run with a connected client.
_Command = Callable[[A2AClient, argparse.Namespace], Awaitable[None]]
#: What a subparser's ``handler`` default is: parsed arguments in, exit status out.
_Handler = Callable[[argparse.Namespace], int]


def _common() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("url", help="the agent's base URL (its card is discovered)")
    common.add_argument("--api-key", help="API key, placed as the card's apiKey scheme says")
    common.add_argument("--bearer-token", help="token sent as 'Authorization: Bearer …'")
    common.add_argument(
        "--binding",
        choices=DEFAULT_BINDINGS,
        help="speak this binding only (default: the card's best of JSONRPC, HTTP+JSON)",
    )
    common.add_argument("--json", action="store_true", help="print wire JSON, one per line")
    return common


def add_client_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the client subcommands to ``subparsers``; each sets ``handler(args) -> int``."""
    common = _common()
    card = subparsers.add_parser("card", parents=[common], help="show the agent's card")
    card.set_defaults(handler=_runner(_card))

    send = subparsers.add_parser("send", parents=[common], help="send a text message")
    send.add_argument("text", help="the message text")
    send.add_argument("--stream", action="store_true", help="stream the reply as it comes")
    send.add_argument("--task-id", default="", help="continue this (interrupted) task")
    send.add_argument("--context-id", default="", help="send within this context")
    send.add_argument(
        "--return-immediately", action="store_true", help="do not wait for the task to finish"
    )
    send.set_defaults(handler=_runner(_send))

    get = subparsers.add_parser("get", parents=[common], help="show a task")
    get.add_argument("task_id")
    get.add_argument("--history-length", type=int, default=None)
    get.set_defaults(handler=_runner(_get))

    list_ = subparsers.add_parser("list", parents=[common], help="list tasks")
    list_.add_argument("--context-id", default=None)
    list_.add_argument("--status", default=None, help="e.g. working, TASK_STATE_COMPLETED")
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
        try:
            return anyio.run(_call, command, args, backend="trio")
        except A2AError as exc:
            print(_describe(exc), file=sys.stderr)
            return 1
        except ValueError as exc:  # an argument the client refuses (e.g. an unknown state)
            print(f"error: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            return 130

    return run


async def _call(command: _Command, args: argparse.Namespace) -> int:
    bindings = (args.binding,) if args.binding else DEFAULT_BINDINGS
    client = await A2AClient.connect(
        args.url, bindings=bindings, api_key=args.api_key, bearer_token=args.bearer_token
    )
    async with client:
        await command(client, args)
    return 0


def _describe(exc: A2AError) -> str:
    name = type(exc).__name__
    if exc.remote:
        return f"error: {name} ({exc.code}): {exc.message}"
    return f"error: {name}: {exc.message}"


def _emit(obj: object) -> None:
    print(codec.encode(obj).decode(), flush=True)


def _state(state: TaskState) -> str:
    return state.name.lower().replace("_", "-")


# -- commands ------------------------------------------------------------------------------


async def _card(client: A2AClient, args: argparse.Namespace) -> None:
    card = client.card
    assert card is not None
    if args.json:
        _emit(card)
        return
    _print_card(card, client)


def _print_card(card: AgentCard, client: A2AClient) -> None:
    print(f"{card.name} (version {card.version})")
    if card.description:
        print(f"  {card.description}")
    print("interfaces:")
    for iface in card.supported_interfaces:
        chosen = " (selected)" if iface == client.interface else ""
        tenant = f" tenant={iface.tenant}" if iface.tenant else ""
        print(f"  {iface.protocol_binding} {iface.protocol_version} {iface.url}{tenant}{chosen}")
    caps = card.capabilities
    flags = [
        name
        for name, on in (
            ("streaming", caps.streaming),
            ("push-notifications", caps.push_notifications),
            ("extended-card", caps.extended_agent_card),
        )
        if on
    ]
    print(f"capabilities: {', '.join(flags) or 'none'}")
    if card.security_schemes:
        print(f"security: {', '.join(card.security_schemes)}")
    print("skills:")
    for skill in card.skills:
        print(f"  {skill.id}: {skill.name} - {skill.description}")


async def _send(client: A2AClient, args: argparse.Namespace) -> None:
    if args.stream:
        stream = client.stream_message(args.text, task_id=args.task_id, context_id=args.context_id)
        await _follow(stream, as_json=args.json)
        return
    reply = await client.send_message(
        args.text,
        task_id=args.task_id,
        context_id=args.context_id,
        return_immediately=args.return_immediately,
    )
    if args.json:
        if isinstance(reply, Task):
            _emit(SendMessageResponse(task=reply))
        else:
            _emit(SendMessageResponse(message=reply))
    else:
        _print_reply(reply)


def _print_reply(reply: Task | Message) -> None:
    result = CallResult.of(reply)
    if isinstance(reply, Task):
        print(f"task {reply.id} (context {reply.context_id}): {_state(reply.status.state)}")
    if result.text:
        print(result.text)


async def _get(client: A2AClient, args: argparse.Namespace) -> None:
    task = await client.get_task(args.task_id, history_length=args.history_length)
    if args.json:
        _emit(task)
    else:
        _print_reply(task)


async def _list(client: A2AClient, args: argparse.Namespace) -> None:
    page = await client.list_tasks(
        context_id=args.context_id,
        status=args.status,
        page_size=args.page_size,
        page_token=args.page_token,
    )
    if args.json:
        _emit(page)
        return
    for task in page.tasks:
        print(f"{task.id}  {_state(task.status.state):<15} context {task.context_id}")
    print(f"({len(page.tasks)} of {page.total_size})")
    if page.next_page_token:
        print(f"next page: --page-token {page.next_page_token}")


async def _cancel(client: A2AClient, args: argparse.Namespace) -> None:
    task = await client.cancel_task(args.task_id)
    if args.json:
        _emit(task)
    else:
        _print_reply(task)


async def _subscribe(client: A2AClient, args: argparse.Namespace) -> None:
    await _follow(client.subscribe(args.task_id), as_json=args.json)


async def _follow(stream: EventStream, *, as_json: bool) -> None:
    """Print each event as it arrives: text deltas inline, one line per status change.

    Stops at the first final event (a Message, a terminal or an interrupted state).
    """
    midline = False
    async with stream:
        async for event in stream:
            if as_json:
                _emit(event)
            else:
                midline = _print_event(event, midline)
            if stream.done:  # terminal, or waiting for input: nothing more to follow
                break
    if midline:
        print(flush=True)


def _print_event(event: StreamResponse, midline: bool) -> bool:
    def line(text: str) -> None:
        print(("\n" if midline else "") + text, flush=True)

    if event.artifact_update is not None:
        text = "".join(p.text or "" for p in event.artifact_update.artifact.parts)
        print(text, end="", flush=True)
        return midline or bool(text)
    if event.message is not None:
        line(event.message.text)
    elif event.task is not None:
        task = event.task
        line(f"task {task.id} (context {task.context_id}): {_state(task.status.state)}")
    elif event.status_update is not None:
        status = event.status_update.status
        note = f": {status.message.text}" if status.message is not None else ""
        line(f"[{_state(status.state)}{note}]")
    return False
