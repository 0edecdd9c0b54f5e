"""A task actor's inbox: a small bounded queue with one receiver.

Not an anyio memory object stream, which costs a parked task about 3 KB more than an
``anyio.Event`` (see benchmarks/README.md, "Why the mailbox is not a memory stream"): a
list, made at the first item, plus an Event that exists only while the receiver waits.
The vocabulary is anyio's:

* :meth:`Mailbox.send_nowait` never blocks: it raises :class:`anyio.WouldBlock` when the
  mailbox is full (the supervisor answers that with ``ServerBusyError``) and
  :class:`anyio.ClosedResourceError` after :meth:`Mailbox.close`. There is no blocking
  ``send``, because nothing in the runtime may wait on an actor.
* :meth:`Mailbox.receive` waits for an item; it raises :class:`anyio.EndOfStream` once the
  mailbox is closed and empty, and :class:`anyio.BusyResourceError` if a second task tries
  to receive at the same time.
"""

from __future__ import annotations

import dataclasses
from typing import Generic, TypeVar

import anyio
import anyio.lowlevel

__all__ = ("Mailbox", "MailboxStatistics")

T = TypeVar("T")


@dataclasses.dataclass(frozen=True, slots=True)
class MailboxStatistics:
    """A mailbox at one instant: items waiting, capacity, whether its receiver waits."""

    depth: int
    capacity: int
    receiver_waiting: bool


class Mailbox(Generic[T]):
    """A bounded FIFO of items for a single receiving task (see the module docstring).

    Args:
        capacity: How many items may wait; at least 1.

    Raises:
        ValueError: ``capacity`` is less than 1.
    """

    __slots__ = ("_capacity", "_closed", "_items", "_waiter")

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("mailbox capacity must be at least 1")
        self._capacity = capacity
        self._items: list[T] | None = (
            None  # made at the first item: a parked task may never get one
        )
        self._waiter: anyio.Event | None = None
        self._closed = False

    def __len__(self) -> int:
        items = self._items
        return len(items) if items is not None else 0

    def send_nowait(self, item: T) -> None:
        """Append ``item`` and wake the receiver.

        Raises:
            anyio.WouldBlock: The mailbox is full; nothing was added.
            anyio.ClosedResourceError: The mailbox is closed; nothing was added.
        """
        if self._closed:
            raise anyio.ClosedResourceError
        items = self._items
        if items is None:
            items = self._items = []
        elif len(items) >= self._capacity:
            raise anyio.WouldBlock
        items.append(item)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            waiter.set()

    async def receive(self) -> T:
        """Take the oldest item, waiting for one if needed. Always checkpoints.

        On cancellation nothing is taken.

        Raises:
            anyio.EndOfStream: The mailbox is closed and empty.
            anyio.BusyResourceError: Another task is already waiting in ``receive``.
        """
        if not self._items:
            while not self._items:
                if self._closed:
                    raise anyio.EndOfStream
                if self._waiter is not None:
                    raise anyio.BusyResourceError("receiving from")
                waiter = self._waiter = anyio.Event()
                try:
                    await waiter.wait()
                finally:
                    if self._waiter is waiter:
                        self._waiter = None
        else:
            await anyio.lowlevel.checkpoint()
            if not self._items:  # pragma: no cover - single receiver, cannot happen
                return await self.receive()
        assert self._items is not None
        return self._items.pop(0)

    def receive_nowait(self) -> T:
        """Take the oldest item without waiting.

        Raises:
            anyio.WouldBlock: The mailbox is empty (and open).
            anyio.EndOfStream: The mailbox is closed and empty.
        """
        items = self._items
        if items:
            return items.pop(0)
        if self._closed:
            raise anyio.EndOfStream
        raise anyio.WouldBlock

    def wait_readable_event(self) -> anyio.Event:
        """An Event that is set once an item is available or the mailbox closes.

        For a receiver that waits in its own frame (``await event.wait()``) and then calls
        :meth:`receive_nowait`; already set when an item is waiting or the mailbox is
        closed. The mailbox has a single receiver: calling this again before the Event
        is set returns the same Event.
        """
        waiter = self._waiter
        if waiter is not None:
            return waiter
        waiter = anyio.Event()
        if self._items or self._closed:
            waiter.set()
        else:
            self._waiter = waiter
        return waiter

    def close(self) -> None:
        """Refuse further items; the receiver drains what is left, then gets EndOfStream."""
        self._closed = True
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            waiter.set()

    def statistics(self) -> MailboxStatistics:
        """The mailbox's depth, capacity and whether its receiver is waiting."""
        return MailboxStatistics(len(self), self._capacity, self._waiter is not None)
