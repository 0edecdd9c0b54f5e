"""When a task's handler runs, and how it waits (a layer of every TaskActor).

Theory of operation
-------------------
A handler runs only while its actor holds a *running slot* of the supervisor's
:class:`~a2a_actors.runtime.admission.Admission`. :class:`Scheduling` adds to
:class:`~a2a_actors.runtime.actions.TaskActions` the taking and giving back of that slot,
and the waits during which the actor holds none:

* **queued**: a new task that finds no free slot takes a ticket in the FIFO queue
  (:meth:`Scheduling.claim_slot`, synchronous, so the order is the order of arrival) and
  is committed before it waits, so that it can be seen, and cancelled, meanwhile;
* **waiting for input**: :meth:`Scheduling.interrupt` (``ctx.ask``, ``ctx.require_auth``)
  publishes INPUT_REQUIRED or AUTH_REQUIRED, gives the slot back, and parks on the
  actor's :class:`~a2a_actors.runtime.mailbox.Mailbox` until a :class:`ClientInput`
  arrives; a task restored from the store starts there (``_resume``);
* **waiting on something else**: :meth:`Scheduling.pause_running` and
  :meth:`Scheduling.resume_running` (``ctx.waiting()``) give the slot back around a wait
  of the handler's own choosing, and take it again (in line) afterwards.

A cancel interrupts any of these waits: it cancels the scope around the whole handler.
Only the actor's own task waits here; :meth:`Scheduling.claim_slot` and
:meth:`Scheduling.release_slot` are also called by the supervisor, around the actor's
creation and end. :class:`~a2a_actors.runtime.actor.TaskActor` initialises the slots
declared here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from ..protocol.models import Message, TaskState
from .actions import TaskActions
from .mailbox import Mailbox

if TYPE_CHECKING:
    from .admission import Ticket

__all__ = ("ClientInput", "Scheduling")

_S = TaskState


class ClientInput(NamedTuple):
    """A client message waiting in an actor's mailbox, with what came with it."""

    message: Message
    extensions: frozenset[str]
    request_metadata: dict[str, Any] | None
    tenant: str


class Scheduling(TaskActions):
    """Running slot and waits of one actor (see the module docstring); a base of
    :class:`TaskActor`."""

    __slots__ = (
        "_mailbox",
        "_paused",
        "_running",
        "extensions",
        "message",
        "request_metadata",
        "resumed",
        "tenant",
        "ticket",
    )

    message: Message
    extensions: frozenset[str]
    request_metadata: dict[str, Any] | None
    tenant: str
    resumed: bool
    ticket: Ticket | None
    _mailbox: Mailbox[ClientInput] | None
    _running: bool
    _paused: bool

    # -- the running slot --------------------------------------------------------------

    def claim_slot(self) -> bool:
        """Take a running slot now if one is free, else join the FIFO queue (never waits).

        Returns:
            True when the slot is held; False when the actor holds a ticket instead.
        """
        if self._running or self.ticket is not None:
            return self._running
        if self._sup._admission.try_run():
            self._running = True
        else:
            self.ticket = self._sup._admission.enqueue()
        return self._running

    async def _take_slot(self) -> None:
        if self.claim_slot():
            return
        ticket = self.ticket
        assert ticket is not None
        await self.commit()  # so that it can be seen, and cancelled, while it waits
        try:
            await self._sup._admission.wait(ticket)
        finally:
            self.ticket = None
        self._running = True

    def release_slot(self) -> None:
        """Give back the running slot or the queue ticket this actor holds, if any."""
        if self.ticket is not None:
            self._sup._admission.abandon(self.ticket)
            self.ticket = None
        self._give_slot()

    def _give_slot(self) -> None:
        if self._running:
            self._running = False
            self._sup._admission.release()

    # -- waits without a slot ----------------------------------------------------------

    async def interrupt(self, state: TaskState, message: Message) -> Message:
        """Wait for client input in ``state`` (INPUT_REQUIRED or AUTH_REQUIRED).

        The running slot is given back while waiting. Returns the client's message (bound
        to the task, already in the history) once the task is WORKING again and holds a
        running slot.

        Raises:
            IllegalTransitionError: The machine refused ``state``; nothing changed.
        """
        await self.emit_status(state, message=message, checkpoint=False)
        self._give_slot()
        mailbox = self._mailbox
        if mailbox is None:
            mailbox = self._mailbox = Mailbox(self._sup._mailbox_size)
        while not mailbox:  # inlined Mailbox.receive: one frame less while parked
            await mailbox.wait_readable_event().wait()
        item = mailbox.receive_nowait()
        self.request_metadata = item.request_metadata
        self.tenant = item.tenant
        self.extensions = item.extensions
        self.message = self.machine.add_user_message(item.message)
        await self.emit_status(_S.WORKING, checkpoint=False)
        if not self._paused:  # inside ctx.waiting(), the slot is taken back at its end
            await self._take_slot()
        return self.message

    def pause_running(self) -> bool:
        """Give the running slot back while the handler waits on something else.

        Returns:
            False when already paused (nested waits); the outer one resumes.
        """
        if self._paused:
            return False
        self._paused = True
        self._give_slot()
        return True

    def end_pause(self) -> None:
        """End a :meth:`pause_running` without taking a slot (the handler is ending)."""
        self._paused = False

    async def resume_running(self) -> None:
        """Take a running slot again after :meth:`pause_running` (waits in line if needed)."""
        self._paused = False
        await self._take_slot()

    async def _resume(self) -> None:
        """Take the client's message that resumes a restored task, and go WORKING.

        Its handler then starts from the beginning, with the whole history
        (``ctx.resumed`` is true)."""
        self.resumed = True
        mailbox = self._mailbox
        if mailbox is None:
            mailbox = self._mailbox = Mailbox(self._sup._mailbox_size)
        item = await mailbox.receive()
        self.request_metadata = item.request_metadata
        self.tenant = item.tenant
        self.extensions = item.extensions
        self.message = self.machine.add_user_message(item.message)
        await self.emit_status(_S.WORKING, checkpoint=False)
