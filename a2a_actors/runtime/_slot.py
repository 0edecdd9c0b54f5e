"""RunSlot: one actor's hold on a running slot of its supervisor (a part of its actor).

A handler runs only while its actor holds a running slot of the supervisor's
:class:`~a2a_actors.runtime._admission.Admission`. The slot is given back while the handler
waits without working: for client input (``ctx.ask``), and around ``ctx.waiting()``
(:meth:`RunSlot.pause`). A slot that is not free is waited for in the FIFO queue:
:meth:`RunSlot.claim` takes a ticket synchronously, so the order is the order of arrival,
and :meth:`RunSlot.wait` waits for it.

Invariant: the actor holds at most one of a slot or a ticket. Cancelled while waiting, it
holds neither (the admission passes on a slot granted meanwhile); :meth:`RunSlot.release`
gives back whatever it holds when the task ends.
"""

from __future__ import annotations

from a2a_actors.runtime._admission import Admission, Ticket

__all__ = ("RunSlot",)


class RunSlot:
    """The running slot (or queue ticket) of one actor.

    Args:
        admission: The supervisor's capacity limits.
    """

    __slots__ = ("admission", "paused", "running", "ticket")

    def __init__(self, admission: Admission) -> None:
        self.admission = admission
        self.ticket: Ticket | None = None
        self.running = False
        self.paused = False

    @property
    def queued(self) -> bool:
        """Whether the actor waits in line for a slot."""
        return self.ticket is not None

    def claim(self) -> bool:
        """Take a slot now if one is free, else join the FIFO queue (never waits).

        Returns:
            True when the slot is held; False when a ticket is held instead.
        """
        if self.running or self.ticket is not None:
            return self.running
        admission = self.admission
        if admission.try_run():
            self.running = True
        else:
            self.ticket = admission.enqueue()
        return self.running

    async def wait(self) -> None:
        """Wait in line with the ticket :meth:`claim` took, then hold the slot.

        On cancellation the ticket is given up and nothing is held.
        """
        ticket = self.ticket
        assert ticket is not None, "wait() without a ticket from claim()"
        try:
            await self.admission.wait(ticket)
        finally:
            self.ticket = None
        self.running = True

    def give_back(self) -> None:
        """Give the slot back, if held (the ticket, if any, is kept)."""
        if self.running:
            self.running = False
            self.admission.release()

    def release(self) -> None:
        """Give back the slot or the ticket held, if any."""
        if self.ticket is not None:
            self.admission.abandon(self.ticket)
            self.ticket = None
        self.give_back()

    def pause(self) -> bool:
        """Give the slot back while the handler waits on something else (``ctx.waiting``).

        Returns:
            False when already paused (nested waits): the outer one resumes.
        """
        if self.paused:
            return False
        self.paused = True
        self.give_back()
        return True

    def end_pause(self) -> None:
        """End a :meth:`pause`; the caller takes a slot again if the handler goes on."""
        self.paused = False
