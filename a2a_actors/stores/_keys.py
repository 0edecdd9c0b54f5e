"""Where the idempotency keys of sends live: the :class:`KeyStore` seam, and the memory one.

What a key means (claim, record, release, replay) is the server's
(:mod:`a2a_actors.server._idempotency`); a store only keeps, per key name (a principal and
the client's key), what the first request with it created. :class:`MemoryKeys` keeps them
in one process; a cluster keeps them in NATS (:mod:`a2a_actors.cluster._idempotency`).
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable
from typing import Protocol

import anyio
import msgspec

from a2a_actors.protocol._models import Message

__all__ = ("DEFAULT_TTL", "KeyStore", "MemoryKeys", "Sent")

#: Seconds a key is remembered, unless told otherwise.
DEFAULT_TTL = 24 * 3600.0


class Sent(msgspec.Struct, frozen=True, omit_defaults=True):
    """What the first request with a key created, and that request's fingerprint."""

    fingerprint: str
    task_id: str = ""
    message: Message | None = None


class KeyStore(Protocol):
    """Where keys live (one process, or a cluster)."""

    async def claim(self, name: str, fingerprint: str) -> Sent | None:
        """Take ``name`` for a new send: None when it was free (the caller then sends and
        calls :meth:`record`, or :meth:`release` if nothing was created), else what the
        first request recorded (waiting while that request is still sending)."""
        ...

    async def record(self, name: str, sent: Sent) -> None:
        """What the request that claimed ``name`` created."""
        ...

    async def release(self, name: str) -> None:
        """Give ``name`` up: its request created nothing."""
        ...


class _Entry:
    __slots__ = ("expires", "ready", "sent")

    def __init__(self, expires: float) -> None:
        self.expires = expires
        self.sent: Sent | None = None
        self.ready = anyio.Event()


class MemoryKeys:
    """The keys of one process: each kept ``ttl`` seconds, at most ``max_keys`` of them
    (the oldest dropped first). Waits on the first request's record, never polls."""

    def __init__(
        self,
        *,
        ttl: float = DEFAULT_TTL,
        max_keys: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ttl = ttl
        self._max = max_keys
        self._clock = clock
        self._entries: collections.OrderedDict[str, _Entry] = collections.OrderedDict()

    async def claim(self, name: str, fingerprint: str) -> Sent | None:
        while True:
            now = self._clock()
            self._prune(now, self._max)
            entry = self._entries.get(name)
            if entry is None:
                self._prune(now, self._max - 1)  # room for it
                self._entries[name] = _Entry(now + self._ttl)
                return None
            if entry.sent is not None:
                return entry.sent
            await entry.ready.wait()  # recorded, or released: look again

    async def record(self, name: str, sent: Sent) -> None:
        entry = self._entries.get(name)
        if entry is not None:
            entry.sent = sent
            entry.ready.set()

    async def release(self, name: str) -> None:
        entry = self._entries.pop(name, None)
        if entry is not None:
            entry.ready.set()

    def _prune(self, now: float, keep: int) -> None:
        """Drop expired keys, and the oldest past ``keep``."""
        entries = self._entries
        while entries:
            name, oldest = next(iter(entries.items()))
            if oldest.expires > now and len(entries) <= keep:
                return
            del entries[name]
            oldest.ready.set()
