"""Admission control: the cap on live tasks and the FIFO queue for running slots.

Two limits, both counted here and nowhere else:

* **live tasks** (every non-terminal task, provisional ones included): :meth:`Admission.admit`
  either counts a new task or raises ``ServerBusyError`` before anything exists;
  :meth:`Admission.retire` uncounts it when it ends.
* **running handlers**: a task needs a slot while its handler runs, and gives it back while
  it waits for input (INPUT_REQUIRED / AUTH_REQUIRED) and when it ends. Tasks that find no
  free slot take a :class:`Ticket` in a FIFO queue; with ``max_queued``, a new task that
  would wait behind that many others is refused by :meth:`Admission.admit` instead.
  Queueing is synchronous (:meth:`Admission.try_run` / :meth:`Admission.enqueue`), so the
  order is the order of arrival however the event loop schedules tasks;
  :meth:`Admission.release` hands a freed slot straight to the oldest live ticket, so no
  newcomer can barge in. A cancelled waiter abandons its ticket (or passes on a slot it was
  just granted).
"""

from __future__ import annotations

import dataclasses
from collections import deque

import anyio

from a2a_actors.protocol._errors import ServerBusyError

__all__ = ("Admission", "AdmissionStatistics", "Ticket")


@dataclasses.dataclass(frozen=True, slots=True)
class AdmissionStatistics:
    """Counts at one instant: live tasks, handlers holding a slot, tickets waiting."""

    live: int
    running: int
    queued: int


class Ticket:
    """A place in the running-slot queue."""

    __slots__ = ("abandoned", "event", "granted")

    def __init__(self) -> None:
        self.event = anyio.Event()
        self.granted = False
        self.abandoned = False


class Admission:
    """The two capacity limits of one supervisor (see the module docstring).

    Args:
        max_live: Cap on live tasks; None for no cap.
        max_running: Cap on concurrently running handlers; None for no cap.
        max_queued: With ``max_running``, cap on tasks waiting for a running slot; None
            for no cap.

    Raises:
        ValueError: A cap is less than 1.
    """

    __slots__ = ("_queue", "live", "max_live", "max_queued", "max_running", "queued", "running")

    def __init__(
        self, *, max_live: int | None, max_running: int | None, max_queued: int | None = None
    ) -> None:
        caps = (
            ("max_live_tasks", max_live),
            ("max_running", max_running),
            ("max_queued", max_queued),
        )
        for name, cap in caps:
            if cap is not None and cap < 1:
                raise ValueError(f"{name} must be at least 1 (or None)")
        self.max_live = max_live
        self.max_running = max_running
        self.max_queued = max_queued
        self.live = 0
        self.running = 0
        self.queued = 0
        self._queue: deque[Ticket] = deque()

    def admit(self) -> None:
        """Count one more live task.

        Raises:
            ServerBusyError: The cap on live tasks is reached, or every running slot is
                taken and ``max_queued`` tasks wait for one; nothing was counted.
        """
        if self.max_live is not None and self.live >= self.max_live:
            raise ServerBusyError(
                f"too many live tasks (limit {self.max_live}); retry later",
                metadata={"limit": str(self.max_live)},
            )
        most = self.max_queued
        if most is not None and self.queued >= most and not self._free():
            raise ServerBusyError(
                f"all {self.max_running} running slots are taken and {self.queued} tasks "
                f"wait for one (limit {most}); retry later",
                metadata={"limit": str(most)},
            )
        self.live += 1

    def _free(self) -> bool:
        return self.max_running is None or self.running < self.max_running

    def retire(self) -> None:
        """Uncount a live task that ended (or was discarded)."""
        self.live -= 1

    def try_run(self) -> bool:
        """Take a running slot now if one is free and nobody queues; never blocks."""
        if self.max_running is None or (self.running < self.max_running and not self.queued):
            self.running += 1
            return True
        return False

    def enqueue(self) -> Ticket:
        """Join the FIFO queue for a running slot (after :meth:`try_run` failed)."""
        ticket = Ticket()
        self._queue.append(ticket)
        self.queued += 1
        return ticket

    async def wait(self, ticket: Ticket) -> None:
        """Wait until ``ticket`` is granted a slot (which the caller then holds).

        On cancellation the ticket is abandoned, or, if the slot was granted meanwhile,
        the slot is passed on; either way the caller holds nothing.
        """
        try:
            await ticket.event.wait()
        except BaseException:
            if ticket.granted:
                self.release()
            elif not ticket.abandoned:
                ticket.abandoned = True
                self.queued -= 1
            raise

    def abandon(self, ticket: Ticket) -> None:
        """Give up a ticket that will never be waited for (e.g. its task never ran)."""
        if ticket.granted:
            self.release()
        elif not ticket.abandoned:
            ticket.abandoned = True
            self.queued -= 1

    def release(self) -> None:
        """Give back one running slot: to the oldest waiting ticket, else to the pool."""
        queue = self._queue
        while queue:
            ticket = queue.popleft()
            if not ticket.abandoned:
                self.queued -= 1
                ticket.granted = True
                ticket.event.set()
                return
        self.running -= 1

    def statistics(self) -> AdmissionStatistics:
        """Live tasks, handlers holding a slot, and tickets waiting, right now."""
        return AdmissionStatistics(self.live, self.running, self.queued)
