"""``a2a-actors send``: one message, its answer, and never an opaque wait.

A blocking send (neither ``--stream`` nor ``--return-immediately``) to an agent that
streams prints exactly what a blocking SendMessage answers, but is made of calls that name
the task as soon as it exists: SendStreamingMessage, whose first Task is announced on
stderr (``task ID (context CTX): waiting for the task``) and which is followed until the
task is terminal or interrupted (a cut stream is resumed with SubscribeToTask), then GetTask
of the task as it settled; an agent answering with a Message gets that Message printed. An
agent that does not stream gets a plain blocking SendMessage (its task id is then known only
with the answer: stderr says ``waiting for the task (the agent does not stream; ...)``).

``--timeout SECONDS`` bounds the whole command (finding the agent included, see
:mod:`a2a_actors.client._cli.deadline`); Ctrl-C (SIGINT) stops waiting. Either way
the task is left running on the agent and the command exits non-zero (124 after the
timeout, 130 after Ctrl-C) with, on stderr, the task's id, its last state seen, and the
commands that follow (``a2a-actors subscribe``) or cancel (``a2a-actors cancel``) it.

After an INPUT_REQUIRED or AUTH_REQUIRED answer, stdout shows the question once (with the
task) and stderr the command that answers it (``answer with: a2a-actors send URL "<text>"
--task-id ID``); with ``--json`` stderr gets the question too.
"""

from __future__ import annotations

import argparse
import math
import shlex
import signal
import threading
from collections.abc import Awaitable, Callable

import anyio

from a2a_actors.client._cli.deadline import INTERRUPTED, TIMED_OUT
from a2a_actors.client._cli.output import emit, follow, note, print_reply, state_name, waiting_hint
from a2a_actors.client._client import A2AClient
from a2a_actors.client._stream import EventStream
from a2a_actors.client._transports.transport import request_headers
from a2a_actors.protocol._headers import IDEMPOTENCY_HEADER
from a2a_actors.protocol._models import Message, Task, TaskState
from a2a_actors.protocol._requests import SendMessageResponse
from a2a_actors.protocol._state import TERMINAL_STATES

__all__ = ("send",)


class _Seen:
    """The task as far as this command has seen it (for the message if it stops early)."""

    def __init__(self) -> None:
        self.task_id = ""
        self.context_id = ""
        self.state: TaskState | None = None

    def task(self, task: Task) -> None:
        self.task_id, self.context_id, self.state = task.id, task.context_id, task.status.state

    def stream(self, stream: EventStream) -> None:
        if stream.task is not None:
            self.task(stream.task)


async def send(client: A2AClient, args: argparse.Namespace) -> int:
    """Run ``send``; the exit status."""
    seen = _Seen()
    stopped = await _bounded(lambda: _send(client, args, seen), args.deadline.remaining())
    if stopped is None:
        return 0
    url = shlex.quote(args.url)
    why = f"no answer within {args.timeout:g} s" if stopped == TIMED_OUT else "interrupted"
    if not seen.task_id:
        note(f"a2a-actors send: {why}, before the agent named a task")
        card = client.card
        if card is not None and not card.capabilities.streaming:
            note(f"  (it does not stream: a2a-actors list {url} shows its tasks)")
        return stopped
    state = state_name(seen.state) if seen.state is not None else "unknown"
    if seen.state in TERMINAL_STATES:  # stopped while reading the result
        note(f"a2a-actors send: {why}; task {seen.task_id} ended ({state})")
        note(f"  show it: a2a-actors get {url} {seen.task_id}")
        return stopped
    note(f"a2a-actors send: {why}; task {seen.task_id} is left running (last state: {state})")
    note(f"  follow it: a2a-actors subscribe {url} {seen.task_id}")
    note(f"  cancel it: a2a-actors cancel {url} {seen.task_id}")
    return stopped


async def _bounded(run: Callable[[], Awaitable[None]], timeout: float | None) -> int | None:
    """Run ``run()`` until it returns (None), ``timeout`` passes or SIGINT arrives (the exit
    status of either)."""
    outcome: list[int] = []
    failure: list[Exception] = []
    async with anyio.create_task_group() as tg:
        if threading.current_thread() is threading.main_thread():  # signals reach only it
            tg.start_soon(_on_sigint, tg.cancel_scope, outcome)
        with anyio.move_on_after(math.inf if timeout is None else timeout) as timer:
            try:
                await run()
            except Exception as exc:  # raised as itself below, not in a group
                failure.append(exc)
        if timer.cancelled_caught:
            outcome.append(TIMED_OUT)
        tg.cancel_scope.cancel()
    if failure:
        raise failure[0]
    return outcome[0] if outcome else None


async def _on_sigint(scope: anyio.CancelScope, outcome: list[int]) -> None:
    with anyio.open_signal_receiver(signal.SIGINT) as signals:
        async for _ in signals:
            outcome.append(INTERRUPTED)
            scope.cancel()
            return


async def _send(client: A2AClient, args: argparse.Namespace, seen: _Seen) -> None:
    key = getattr(args, "idempotency_key", None)
    with request_headers({IDEMPOTENCY_HEADER: key} if key else {}):
        await _sent(client, args, seen)


async def _sent(client: A2AClient, args: argparse.Namespace, seen: _Seen) -> None:
    if args.stream:
        stream = client.stream_message(args.text, task_id=args.task_id, context_id=args.context_id)
        try:
            await follow(stream, as_json=args.json)
        finally:
            seen.stream(stream)
        waiting_hint(stream.task, args.url, as_json=args.json)
        return
    card = client.card
    if args.return_immediately or card is None or not card.capabilities.streaming:
        if card is not None and not args.return_immediately:  # named only with the answer
            note("waiting for the task (the agent does not stream; --timeout bounds the wait)")
        reply = await client.send_message(
            args.text,
            task_id=args.task_id,
            context_id=args.context_id,
            return_immediately=args.return_immediately,
        )
    else:
        reply = await _streamed(client, args, seen)
    if isinstance(reply, Task):
        seen.task(reply)
    _print(reply, as_json=args.json)
    if isinstance(reply, Task):
        waiting_hint(reply, args.url, as_json=args.json)


async def _streamed(client: A2AClient, args: argparse.Namespace, seen: _Seen) -> Task | Message:
    """A blocking send made of a stream (the task is named as soon as it exists) and a
    GetTask of the task as it settled: what a blocking SendMessage answers."""
    stream = client.stream_message(
        args.text, task_id=args.task_id, context_id=args.context_id, resubscribe=True
    )
    announced = False
    async with stream:
        async for _ in stream:
            seen.stream(stream)
            if stream.done:
                break
            if not announced and stream.task is not None:
                task = stream.task
                note(f"task {task.id} (context {task.context_id}): waiting for the task")
                announced = True
    if stream.task is None and stream.message is not None:
        return stream.message  # the agent answered with a Message: no task
    return await client.get_task(stream.task_id)


def _print(reply: Task | Message, *, as_json: bool) -> None:
    if not as_json:
        print_reply(reply)
    elif isinstance(reply, Task):
        emit(SendMessageResponse(task=reply))
    else:
        emit(SendMessageResponse(message=reply))
