"""The owner's inbox: cancel and client input, addressed to the node that runs a task.

Theory of operation
-------------------
A task's actor runs on the node that created it (its owner). Another node that receives
CancelTask, or a message for a task waiting in INPUT_REQUIRED/AUTH_REQUIRED, sends it to
the owner as a *request* on the owner's inbox subject (core NATS request/reply,
:class:`~a2a_actors.cluster._names.ClusterNames`), exactly as the local runtime hands a
message to an actor's mailbox; the owner's :class:`InboxHandler` applies it and the reply
says what happened.

* :class:`CancelCommand`: the owner cancels the task (its handler is interrupted at its
  next await, wherever it is) and replies with the task once it is final — CANCELED, or
  the final state it reached first.
* :class:`InputCommand`: the owner delivers the message to the task's mailbox (the parked
  ``ctx.ask()`` receives it) and replies as soon as the task has taken it (WORKING again),
  not when the agent finishes: a request/reply carries the *delivery*; the requesting node
  waits for the outcome by following the task's events (:mod:`~a2a_actors.cluster._event_log`),
  so a long-running agent never holds a NATS request open.

Errors of the protocol hierarchy raised by the handler (TaskNotFoundError,
TaskNotCancelableError, ...) travel back by JSON-RPC code and are raised again, as the
same class, on the requesting node; anything else is logged by the owner and arrives as
InternalError. With nobody subscribed to the inbox (the owner is gone or cut from NATS)
the request fails at once with :class:`~a2a_actors.cluster._errors.OwnerUnreachableError`;
with an owner that does not answer in time, with ClusterUnavailableError.

Each request is served in its own task, so one slow command never delays another.

A command or reply larger than one NATS message (a client message with a large part, a
task with a large artifact returned by a cancel) has its large parts in the object store
and their references beside it (:mod:`~a2a_actors.cluster._offload`); the receiving side
restores them before anything else sees the message or task. Ordinary commands pay one
length comparison.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import anyio
import anyio.abc
import msgspec
import nats.errors
from nats.aio.msg import Msg

from a2a_actors.cluster._connection import ClusterConnection, close_subscription
from a2a_actors.cluster._errors import OwnerUnreachableError
from a2a_actors.cluster._object_refs import Refs, V
from a2a_actors.cluster._offload import Offloader
from a2a_actors.protocol._errors import A2AError, InternalError, error_for_code
from a2a_actors.protocol._models import Message, Task
from a2a_actors.protocol._requests import SendMessageRequest

__all__ = (
    "CancelCommand",
    "InboxHandler",
    "InboxReply",
    "InputCommand",
    "OwnerInbox",
    "RemoteError",
)

logger = logging.getLogger("a2a_actors.cluster")


class CancelCommand(msgspec.Struct, frozen=True, tag="cancel"):
    """CancelTask for a task the receiving node owns.

    Attributes:
        task_id: The task.
        caller: The principal asking (ownership is checked by the owner, as locally).
        metadata: Goes on the CANCELED status update.
    """

    task_id: str
    caller: str | None
    metadata: dict[str, Any] | None = None


class InputCommand(msgspec.Struct, frozen=True, tag="input"):
    """A client message for an interrupted task the receiving node owns.

    Attributes:
        request: The SendMessage request, whose message names the task.
        caller: The principal asking.
        extensions: The extensions the client activated.
        objects: Where the message's large parts are (unset: it has none).
    """

    request: SendMessageRequest
    caller: str | None
    extensions: tuple[str, ...] = ()
    objects: Refs | msgspec.UnsetType = msgspec.UNSET


class RemoteError(msgspec.Struct, frozen=True):
    """A protocol error raised by the owner, as it travels back."""

    code: int
    message: str
    metadata: dict[str, str] = {}


class InboxReply(msgspec.Struct, frozen=True, omit_defaults=True):
    """The owner's answer: the task (or the agent's Message), or an error; ``objects``:
    where the task's (or message's) large parts are (unset: it has none)."""

    task: Task | None = None
    message: Message | None = None
    error: RemoteError | None = None
    objects: Refs | msgspec.UnsetType = msgspec.UNSET


Command = CancelCommand | InputCommand


class InboxHandler(Protocol):
    """What the owner does with its inbox (the runtime's side of the seam)."""

    async def cancel(self, command: CancelCommand) -> Task:
        """Cancel the task; return it once it is final.

        Raises:
            A2AError: TaskNotFoundError, TaskNotCancelableError, ... as locally.
        """
        ...

    async def give_input(self, command: InputCommand) -> Task | Message:
        """Deliver the message to the task; return the task once it has taken it.

        Raises:
            A2AError: TaskNotFoundError, UnsupportedOperationError, ... as locally.
        """
        ...


_encoder = msgspec.json.Encoder()
_commands = msgspec.json.Decoder(Command)
_replies = msgspec.json.Decoder(InboxReply)


class OwnerInbox:
    """Sends commands to owners, and serves this node's own inbox (see the module docstring).

    Args:
        conn: The node's connection.
        request_timeout: Seconds a request waits for the owner's reply; the connection's
            ``timeout`` if None.
        objects: Where large parts go (the node's); None: nowhere, a command or reply
            larger than one NATS message is refused (PayloadTooLargeError).
    """

    def __init__(
        self,
        conn: ClusterConnection,
        *,
        request_timeout: float | None = None,
        objects: Offloader | None = None,
    ) -> None:
        self._conn = conn
        self._timeout = conn.timeout if request_timeout is None else request_timeout
        self._objects = objects

    async def cancel(self, node_id: str, command: CancelCommand) -> Task:
        """Ask owner ``node_id`` to cancel a task; the task once final.

        Raises:
            A2AError: The owner's error (TaskNotFoundError, TaskNotCancelableError, ...).
            OwnerUnreachableError: Nobody serves ``node_id``'s inbox.
            ClusterUnavailableError: No reply in time, or NATS is unreachable.
        """
        reply = await self._request(node_id, command)
        if reply.task is None:
            raise InternalError(f"node {node_id!r} answered a cancel without a task")
        return reply.task

    async def give_input(self, node_id: str, command: InputCommand) -> Task | Message:
        """Hand a message to a task owned by ``node_id``; the task once it has taken it.

        Raises:
            A2AError: The owner's error (TaskNotFoundError, UnsupportedOperationError, ...).
            OwnerUnreachableError: Nobody serves ``node_id``'s inbox.
            ClusterUnavailableError: No reply in time, or NATS is unreachable.
        """
        reply = await self._request(node_id, command)
        answer = reply.task if reply.task is not None else reply.message
        if answer is None:
            raise InternalError(f"node {node_id!r} answered an input without a task")
        return answer

    async def serve(
        self,
        node_id: str,
        handler: InboxHandler,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Serve ``node_id``'s inbox with ``handler`` until cancelled.

        Start it with ``await task_group.start(inbox.serve, node_id, handler)``: it
        reports started once the subscription is in place on the server. Requests in
        progress when it is cancelled are cancelled with it.

        Raises:
            ClusterUnavailableError: NATS did not answer in time at the start.
        """
        subject = self._conn.names.inbox_subject(node_id)
        async with anyio.create_task_group() as tg:
            serve_one = _server(tg, handler, _Large(self._objects))
            with self._conn.bounded(f"serve inbox {subject}"):
                sub = await self._conn.client.subscribe(subject, cb=serve_one)
                await self._conn.client.flush()  # the server has the subscription now
            try:
                task_status.started()
                await anyio.sleep_forever()
            finally:
                await close_subscription(self._conn.client, sub)
                tg.cancel_scope.cancel()

    async def _request(self, node_id: str, command: Command) -> InboxReply:
        subject = self._conn.names.inbox_subject(node_id)
        what = f"{type(command).__name__} to node {node_id}"
        large = _Large(self._objects)
        data = await large.encode_command(command)
        client = self._conn.client
        with self._conn.bounded(what, timeout=self._timeout):
            try:
                msg = await client.request(subject, data, timeout=self._timeout)
            except nats.errors.NoRespondersError:
                # The server may answer "no responders" from interest it cached for this
                # connection just before the owner subscribed; a round trip refreshes it.
                await client.flush()
                try:
                    msg = await client.request(subject, data, timeout=self._timeout)
                except nats.errors.NoRespondersError:
                    raise OwnerUnreachableError(node_id) from None
        try:
            reply = _replies.decode(msg.data)
        except msgspec.DecodeError as exc:
            raise InternalError(f"node {node_id!r} sent a reply that is not one") from exc
        if reply.error is not None:
            error = reply.error
            raise error_for_code(error.code)(error.message, metadata=error.metadata)
        return await large.restore_reply(reply)


def _server(
    tg: anyio.abc.TaskGroup, handler: InboxHandler, large: _Large
) -> Callable[[Msg], Awaitable[None]]:
    """The subscription's callback: each request is served in its own task."""

    async def answer(msg: Msg) -> None:
        task_id = ""
        try:
            command = await large.restore_command(_commands.decode(msg.data))
            if isinstance(command, CancelCommand):
                task_id = command.task_id
                reply = InboxReply(task=await handler.cancel(command))
            else:
                task_id = command.request.message.task_id
                result = await handler.give_input(command)
                reply = (
                    InboxReply(task=result)
                    if isinstance(result, Task)
                    else InboxReply(message=result)
                )
        except A2AError as exc:
            reply = InboxReply(error=RemoteError(exc.code, exc.message, exc.metadata))
        except msgspec.DecodeError as exc:
            logger.error("inbox: a request that is not a command: %s", exc)
            reply = InboxReply(error=RemoteError(InternalError.spec.code, "not a command"))
        except Exception:
            logger.exception("inbox: the handler failed")
            reply = InboxReply(error=RemoteError(InternalError.spec.code, "the owner failed"))
        try:
            data = await large.encode_reply(reply, task_id)
        except A2AError as exc:  # too large even so, or the object store refused
            data = _encoder.encode(InboxReply(error=RemoteError(exc.code, exc.message)))
        try:
            await msg.respond(data)
        except nats.errors.Error as exc:  # the requester's wait is bounded; it gives up
            logger.warning("inbox: could not reply: %r", exc)

    async def spawn(msg: Msg) -> None:
        tg.start_soon(answer, msg)

    return spawn


class _Large:
    """Commands and replies of any size: large parts to the object store and back (see
    the module docstring); without an offloader, everything is encoded as it is."""

    def __init__(self, objects: Offloader | None) -> None:
        self._objects = objects

    async def encode_command(self, command: Command) -> bytes:
        """``command`` encoded, an input's large parts in the object store.

        Raises:
            PayloadTooLargeError: It cannot be made small enough (or stored).
            ClusterUnavailableError: NATS did not answer in time.
        """
        data = _encoder.encode(command)
        objects = self._objects
        if objects is None or len(data) <= objects.threshold or isinstance(command, CancelCommand):
            return data
        message = command.request.message
        stripped, refs = await objects.strip(message.task_id, message, len(data))
        request = msgspec.structs.replace(command.request, message=stripped)
        data = _encoder.encode(msgspec.structs.replace(command, request=request, objects=refs))
        if len(data) > objects.threshold:
            raise objects.too_large(f"a message to task {message.task_id}", len(data))
        return data

    async def restore_command(self, command: Command) -> Command:
        """``command`` with its input's large parts restored."""
        if isinstance(command, CancelCommand) or isinstance(command.objects, msgspec.UnsetType):
            return command
        message = await self._restore(command.request.message, command.objects)
        request = msgspec.structs.replace(command.request, message=message)
        return msgspec.structs.replace(command, request=request, objects=msgspec.UNSET)

    async def encode_reply(self, reply: InboxReply, task_id: str) -> bytes:
        """``reply`` encoded, its task's (or message's) large parts in the object store.

        Raises:
            PayloadTooLargeError: It cannot be made small enough (or stored).
            ClusterUnavailableError: NATS did not answer in time.
        """
        data = _encoder.encode(reply)
        objects = self._objects
        if objects is None or len(data) <= objects.threshold:
            return data
        if reply.task is not None:
            task, refs = await objects.strip(reply.task.id, reply.task, len(data))
            reply = InboxReply(task=task, objects=refs)
        elif reply.message is not None:
            message, refs = await objects.strip(task_id, reply.message, len(data))
            reply = InboxReply(message=message, objects=refs)
        data = _encoder.encode(reply)
        if len(data) > objects.threshold:
            raise objects.too_large(f"the answer about task {task_id}", len(data))
        return data

    async def restore_reply(self, reply: InboxReply) -> InboxReply:
        """``reply`` with its task's (or message's) large parts restored."""
        refs = reply.objects
        if isinstance(refs, msgspec.UnsetType):
            return reply
        if reply.task is not None:
            return InboxReply(task=await self._restore(reply.task, refs))
        if reply.message is not None:
            return InboxReply(message=await self._restore(reply.message, refs))
        return reply

    async def _restore(self, value: V, refs: Refs) -> V:
        if self._objects is None:
            raise InternalError("a command with objects reached a node without an object store")
        try:
            return await self._objects.restore(value, refs)
        except KeyError as exc:
            raise InternalError(f"an object of the command is gone: {exc}") from None
