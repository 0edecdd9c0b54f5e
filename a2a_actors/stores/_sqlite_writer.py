"""The SQLite store's single writer: every write of the store, committed in groups.

Theory of operation
-------------------
A :class:`GroupCommitWriter` owns the store's one writer connection and a bounded queue.
:meth:`~GroupCommitWriter.write` turns a write (save, delete, push-config put/delete,
recovery, eviction) into an operation on the queue; :meth:`~GroupCommitWriter.run`, the
**writer task**, takes the first waiting operation plus every other one already queued (up
to ``max_batch``) and runs them, in queue order, in **one** ``BEGIN IMMEDIATE ... COMMIT``
transaction on the writer connection, in a worker thread. Each caller awaits its own
operation, which completes only after that commit returned: **an acknowledged write is in
the database file**. While one batch commits, new writes queue up and form the next batch,
so under concurrency the cost of a commit (and of its fsync with ``synchronous="FULL"``) is
shared by the whole batch (group commit). If a batch fails, it is rolled back and its
operations are retried one per transaction, so one bad write fails only its own caller.

An operation may carry an ``after`` callback, run on the event loop once the operation
committed, to update an in-memory mirror (the push configs).

Shutdown: :meth:`~GroupCommitWriter.stop` refuses new writes and closes the queue; the
writer task, shielded from cancellation, commits everything already queued and returns. A
caller cancelled while awaiting its write leaves the write queued: it is committed all the
same. If the writer task itself dies (not a database error), every queued write fails and
the writer counts as closed.
"""

from __future__ import annotations

import dataclasses
import logging
import sqlite3
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import anyio
import anyio.abc

from a2a_actors.stores._sqlite_schema import StoreClosedError, StoreError, is_database_failure

__all__ = ("GroupCommitWriter", "SQLiteStoreStatistics")

logger = logging.getLogger("a2a_actors.stores")

T = TypeVar("T")


@dataclasses.dataclass(frozen=True, slots=True)
class SQLiteStoreStatistics:
    """The store's writer at one instant.

    Attributes:
        commits: Write transactions committed since open.
        writes: Write operations committed since open (a batch counts each of them).
        failed_writes: Write operations that raised :class:`StoreError` to their caller.
        max_batch: The most write operations one transaction carried.
        pending: Write operations queued or being committed now.
    """

    commits: int
    writes: int
    failed_writes: int
    max_batch: int
    pending: int


class _Op(Generic[T]):
    """One queued write: ``apply`` runs in the writer's transaction, ``after`` on the event
    loop once it committed (to update in-memory mirrors)."""

    __slots__ = ("after", "apply", "done", "error", "value")

    def __init__(
        self, apply: Callable[[sqlite3.Connection], T], after: Callable[[T], None] | None
    ) -> None:
        self.apply = apply
        self.after = after
        self.done = anyio.Event()
        self.error: Exception | None = None
        self.value: T | None = None


class GroupCommitWriter:
    """The writer connection of the store at ``path`` and its queue (see the module docstring).

    Attributes:
        path: The database file (for error messages).
        connection: The writer connection; the caller closes it after :meth:`run` returned.
        closed: Whether writes are refused (after :meth:`stop`, or once the writer died).
    """

    def __init__(
        self, path: str, connection: sqlite3.Connection, *, max_batch: int, max_pending: int
    ) -> None:
        """Queue at most ``max_pending`` writes; commit at most ``max_batch`` at once."""
        self.path = path
        self.connection = connection
        self.closed = False
        self._max_batch = max_batch
        self._send, self._receive = anyio.create_memory_object_stream[_Op[Any]](max_pending)
        self._commits = self._writes = self._failed = self._max_seen = self._pending = 0

    async def write(
        self,
        apply: Callable[[sqlite3.Connection], T],
        after: Callable[[T], None] | None = None,
    ) -> T:
        """Run ``apply`` in a write transaction; return its value once that committed.

        ``after(value)`` runs on the event loop once the transaction committed (an error
        it raises is logged: the write itself is in the file). If cancelled while waiting,
        the write is still committed (before :meth:`run` returns at the latest).

        Raises:
            StoreError: The write failed; nothing of it was committed.
            StoreClosedError: The writer is closed.
        """
        if self.closed:
            raise StoreClosedError(f"{self.path}: the store is closed")
        op = _Op(apply, after)
        try:
            await self._send.send(op)  # raises only if the write was not queued
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise StoreClosedError(f"{self.path}: the store is closed") from None
        self._pending += 1  # no checkpoint since it was queued: the writer has not seen it
        await op.done.wait()  # cancelled here, the write is still committed
        if op.error is not None:
            raise StoreError(f"{self.path}: write failed: {op.error}") from op.error
        return op.value  # type: ignore[return-value]  # set by a successful apply

    async def run(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        """The writer task: commit queued writes in batches until :meth:`stop` and drained.

        Shielded from cancellation: it ends only when the queue is closed and empty.
        """
        with anyio.CancelScope(shield=True):
            task_status.started()
            async with self._receive:
                async for first in self._receive:
                    batch: list[_Op[Any]] = [first]
                    while len(batch) < self._max_batch:
                        try:
                            batch.append(self._receive.receive_nowait())
                        except (anyio.WouldBlock, anyio.EndOfStream):
                            break
                    try:
                        commits = await anyio.to_thread.run_sync(self._commit, batch)
                    except BaseException as exc:  # not a database error: the writer is lost
                        self._abandon(batch, exc)
                        raise
                    self._finish(batch, commits)

    def stop(self) -> None:
        """Refuse new writes; :meth:`run` commits the writes already queued, then returns."""
        self.closed = True
        self._send.close()

    def close(self) -> None:
        """Refuse new writes and close the queue's receiving end (after :meth:`run`)."""
        self.stop()
        self._receive.close()

    def statistics(self) -> SQLiteStoreStatistics:
        """A frozen record of the writer's counters (commits, writes, batch sizes)."""
        return SQLiteStoreStatistics(
            commits=self._commits,
            writes=self._writes,
            failed_writes=self._failed,
            max_batch=self._max_seen,
            pending=self._pending,
        )

    # -- internals ---------------------------------------------------------------------

    def _commit(self, batch: list[_Op[Any]]) -> int:
        """Run ``batch`` in one transaction (worker thread); the number of commits (0 or 1).

        A write that fails on its own (a constraint, a bad value) is left out with its error
        and the rest is run again; a failure of the database itself (I/O, full disk, lock
        timeout, or at BEGIN/COMMIT) fails every write still in the batch.
        """
        conn = self.connection
        todo = batch
        while todo:
            culprit: _Op[Any] | None = None
            try:
                conn.execute("BEGIN IMMEDIATE")
                for op in todo:
                    culprit = op
                    op.value = op.apply(conn)
                culprit = None
                conn.execute("COMMIT")
                return 1
            except Exception as exc:
                if conn.in_transaction:
                    try:
                        conn.execute("ROLLBACK")
                    except sqlite3.Error:
                        logger.exception("%s: rollback failed", self.path)
                if culprit is None or is_database_failure(exc):
                    for op in todo:
                        op.error = exc
                    return 0
                culprit.error = exc
                todo = [op for op in todo if op is not culprit]
        return 0

    def _finish(self, batch: list[_Op[Any]], commits: int) -> None:
        self._commits += commits
        self._max_seen = max(self._max_seen, len(batch))
        for op in batch:
            if op.error is None and op.after is not None:
                try:
                    op.after(op.value)
                except Exception:  # a bug in a mirror update; the write itself committed
                    logger.exception("%s: updating the in-memory mirror failed", self.path)
            if op.error is None:
                self._writes += 1
            else:
                self._failed += 1
            self._pending -= 1
            op.done.set()

    def _abandon(self, batch: list[_Op[Any]], exc: BaseException) -> None:
        """Fail ``batch`` and every queued write, and close the store (writer crashed)."""
        self.closed = True
        lost = StoreError(f"{self.path}: the writer stopped: {exc!r}")
        while True:
            try:
                batch.append(self._receive.receive_nowait())
            except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
                break
        for op in batch:
            op.error = lost
        self._finish(batch, 0)
