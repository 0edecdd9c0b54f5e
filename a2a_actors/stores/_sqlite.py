"""The durable embedded store: tasks and push configs in one SQLite file.

Theory of operation
-------------------
:meth:`SQLiteTaskStore.open` opens the file (creating or migrating it, see
:mod:`~a2a_actors.stores._sqlite_schema`) in WAL mode and starts one **writer task** in a task
group the store owns. Every write (save, delete, push-config put/delete, recovery,
eviction) goes through that writer (:mod:`~a2a_actors.stores._sqlite_writer`), which commits
the writes queued at one time together, in one transaction on the single writer connection
(group commit). Each caller's write returns only after the transaction holding it
committed: **an acknowledged write is in the database file**. One bad write fails only its
own caller. The rows and the statements over them are in
:mod:`~a2a_actors.stores._sqlite_rows`.

Reads run on a small pool of read-only connections in worker threads; WAL lets them read
the last committed state while a batch commits. A write is visible to every read that
starts after the write returned.

Versions: a task row is replaced only by a record whose version is at least the stored one,
inside the ``INSERT ... ON CONFLICT DO UPDATE ... WHERE`` statement itself, so a stale
writer can never go back in time, whatever the interleaving (the TaskStore contract).

Push configs are also mirrored in memory (loaded at open, updated after each committed
write), so that :meth:`SQLitePushConfigStore.configs_for` answers without blocking
(:mod:`~a2a_actors.stores._sqlite_push`).

Shutdown: leaving ``open``'s context (normally, with an error, or cancelled) stops
retention, closes the queue, lets the writer commit everything already queued (shielded),
waits for in-flight reads, and closes the connections. A caller cancelled while awaiting
its write leaves the write queued: it is committed all the same.
"""

from __future__ import annotations

import builtins
import datetime as _dt
import logging
import os
import sqlite3
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import NoReturn, Self, TypeVar

import anyio

from a2a_actors.protocol._models import utc_now
from a2a_actors.protocol._requests import TaskPushNotificationConfig
from a2a_actors.stores import _sqlite_rows as rows, _sqlite_schema as schema
from a2a_actors.stores._base import (
    RecoveryReport as RecoveryReport,
    StoredTask,
    TaskPage,
    TaskQuery,
    decode_page_token,
    encode_page_token,
    sort_key,
)
from a2a_actors.stores._sqlite_push import SQLitePushConfigStore as SQLitePushConfigStore
from a2a_actors.stores._sqlite_schema import (
    SchemaTooNewError as SchemaTooNewError,
    StoreClosedError as StoreClosedError,
    StoreCorruptError as StoreCorruptError,
    StoreError as StoreError,
    Synchronous as Synchronous,
)
from a2a_actors.stores._sqlite_writer import (
    GroupCommitWriter,
    SQLiteStoreStatistics as SQLiteStoreStatistics,
)

__all__ = (
    "RESTART_TEXT",
    "RecoveryReport",
    "SQLitePushConfigStore",
    "SQLiteStoreStatistics",
    "SQLiteTaskStore",
    "SchemaTooNewError",
    "StoreClosedError",
    "StoreCorruptError",
    "StoreError",
    "Synchronous",
)

logger = logging.getLogger("a2a_actors.stores")

#: The status message :meth:`SQLiteTaskStore.recover` gives the tasks it fails.
RESTART_TEXT = "server restarted; the task was interrupted"

T = TypeVar("T")


class SQLiteTaskStore:
    """A durable :class:`~a2a_actors.stores._base.TaskStore` (see the module docstring).

    Create it with :meth:`open`; :attr:`push_configs` is the push-config store in the same
    file.
    """

    def __init__(
        self,
        path: str,
        writer: sqlite3.Connection,
        readers: builtins.list[sqlite3.Connection],
        configs: Sequence[TaskPushNotificationConfig],
        *,
        max_batch: int,
        max_pending: int,
    ) -> None:
        """Wrap open connections; use :meth:`open` instead, which also runs the writer."""
        self.path = path
        self._writer = GroupCommitWriter(path, writer, max_batch=max_batch, max_pending=max_pending)
        self._readers = readers
        self._pool_send, self._pool_receive = anyio.create_memory_object_stream[sqlite3.Connection](
            len(readers)
        )
        for conn in readers:
            self._pool_send.send_nowait(conn)
        self.push_configs = SQLitePushConfigStore(self._writer, configs)

    @classmethod
    @asynccontextmanager
    async def open(
        cls,
        path: str | os.PathLike[str],
        *,
        synchronous: Synchronous = "FULL",
        readers: int = 4,
        max_batch: int = 512,
        max_pending: int = 8192,
        busy_timeout: float = 5.0,
        retention_ttl: float | None = None,
        retention_max: int | None = None,
        retention_interval: float = 60.0,
    ) -> AsyncIterator[Self]:
        """Open (create or migrate) the store at ``path`` for the duration of the context.

        Args:
            path: The database file; created with mode 0600 if missing. Its ``-wal`` and
                ``-shm`` companions live beside it. One process at a time.
            synchronous: ``"FULL"`` (default): a commit is fsynced before it is
                acknowledged, so acknowledged writes survive a power loss. ``"NORMAL"``:
                they survive a crash or SIGKILL of the process, but an OS crash or power
                loss may lose the last commits (the file stays consistent).
            readers: Read-only connections (the most reads that run at once).
            max_batch: The most writes committed in one transaction.
            max_pending: Queued writes beyond which writers wait (backpressure).
            busy_timeout: Seconds to wait for a lock held by another connection.
            retention_ttl: With ``retention_max``: when either is set,
                :meth:`run_retention` runs in the background with them, every
                ``retention_interval`` seconds, on the wall clock.
            retention_max: See ``retention_ttl``.
            retention_interval: See ``retention_ttl``.

        On exit (normal, error or cancellation): retention stops, every write already
        queued is committed (shielded from cancellation), then the connections close.

        Raises:
            StoreCorruptError: The file is not a database of this store.
            SchemaTooNewError: The file has a newer schema than this code.
            StoreError: The file cannot be opened or used (permissions, no WAL, locked).
            ValueError: A bad argument (``":memory:"``, a size below 1).
        """
        name = os.fspath(path)
        if name in ("", ":memory:") or name.startswith("file:"):
            raise ValueError("SQLiteTaskStore needs a file path")
        if readers < 1 or max_batch < 1 or max_pending < 1:
            raise ValueError("readers, max_batch and max_pending must be at least 1")
        if synchronous not in ("FULL", "NORMAL"):
            raise ValueError(f"synchronous must be 'FULL' or 'NORMAL', not {synchronous!r}")
        retention = retention_ttl is not None or retention_max is not None
        if retention and (
            retention_interval <= 0 or min(retention_ttl or 0, retention_max or 0) < 0
        ):
            raise ValueError("retention needs a positive interval and non-negative limits")
        writer, conns, configs = await anyio.to_thread.run_sync(
            lambda: schema.open_database(
                name, synchronous=synchronous, busy_timeout=busy_timeout, readers=readers
            )
        )
        store = cls(name, writer, conns, configs, max_batch=max_batch, max_pending=max_pending)
        error: BaseException | None = None
        try:
            async with anyio.create_task_group() as tg:
                await tg.start(store._writer.run)
                if retention:
                    tg.start_soon(
                        lambda: store._retain_until_closed(
                            ttl=retention_ttl,
                            max_terminal=retention_max,
                            interval=retention_interval,
                        )
                    )
                try:
                    yield store
                except BaseException as exc:  # re-raised below, not wrapped in a group
                    error = exc
                finally:
                    store._writer.stop()  # refuse new writes; the shielded writer drains
                    tg.cancel_scope.cancel()  # retention
        finally:
            with anyio.CancelScope(shield=True):
                await store._close_connections()
        if error is not None:
            raise error

    # -- TaskStore ---------------------------------------------------------------------

    async def save(self, record: StoredTask) -> None:
        """Store ``record`` unless a record with a higher version is already stored.

        Returns once the transaction holding the write committed. If cancelled while
        waiting, the write is still committed (before the store closes at the latest).

        Raises:
            StoreError: The write failed; nothing of it was committed.
            StoreClosedError: The store is closed.
        """
        row = rows.task_row(record)
        await self._writer.write(lambda conn: rows.upsert_task(conn, row))

    async def get(self, task_id: str) -> StoredTask | None:
        """The stored record of ``task_id``, or None.

        Raises:
            StoreError: The database could not be read.
            StoreClosedError: The store is closed.
        """
        return await self._read(lambda conn: rows.get_task(conn, task_id))

    async def list(self, query: TaskQuery) -> TaskPage:
        """One page of matching records, newest first by status timestamp, then id.

        Raises:
            InvalidParamsError: ``query.page_token`` is not a token of this store.
            StoreError: The database could not be read.
            StoreClosedError: The store is closed.
        """
        cursor = None
        if query.page_token:
            when, after_id = decode_page_token(query.page_token)
            cursor = (rows.micros(when), after_id)
        page, more, total = await self._read(lambda conn: rows.list_tasks(conn, query, cursor))
        token = encode_page_token(sort_key(page[-1])) if more else ""
        return TaskPage(records=tuple(page), next_page_token=token, total_size=total)

    async def delete(self, task_id: str) -> None:
        """Remove ``task_id`` and its push configs; nothing happens when it is not stored.

        Raises:
            StoreError: The write failed; nothing was deleted.
            StoreClosedError: The store is closed.
        """
        ids = (task_id,)
        forget = self.push_configs._forget
        await self._writer.write(lambda conn: rows.delete_rows(conn, ids), forget)

    # -- restart recovery and retention ------------------------------------------------

    async def recover(self, *, now: _dt.datetime, message: str = RESTART_TEXT) -> RecoveryReport:
        """After a restart: fail every task left SUBMITTED or WORKING, report interrupted ones.

        Each SUBMITTED/WORKING task becomes FAILED with an agent-role status message
        ``message`` (also appended to its history), timestamp ``now`` and its version
        increased by one, all in one transaction. INPUT_REQUIRED and AUTH_REQUIRED tasks are
        left as they are and reported as resumable. Call it once at start-up, before the
        server accepts requests; calling it again finds nothing more to fail.

        Raises:
            StoreError: The transaction failed; nothing changed.
            StoreClosedError: The store is closed.
        """

        def apply(conn: sqlite3.Connection) -> RecoveryReport:
            failed, resumable = rows.fail_active(conn, now=now, text=message)
            return RecoveryReport(failed=tuple(failed), resumable=tuple(resumable))

        return await self._writer.write(apply)

    async def evict(
        self, *, now: _dt.datetime, ttl: float | None = None, max_terminal: int | None = None
    ) -> tuple[str, ...]:
        """One retention pass: delete terminal tasks (and their push configs), oldest first.

        A terminal task goes when its status timestamp is at or before ``now - ttl``; then,
        of the terminal tasks left, the oldest beyond ``max_terminal`` go. Oldest means by
        ``(status timestamp, id)``. Live tasks (SUBMITTED, WORKING, INPUT_REQUIRED,
        AUTH_REQUIRED) are never deleted. ``None`` disables a rule.

        Returns:
            The evicted task ids, oldest first.

        Raises:
            StoreError: The transaction failed; nothing was deleted.
            StoreClosedError: The store is closed.
            ValueError: ``ttl`` or ``max_terminal`` is negative.
        """
        if (ttl is not None and ttl < 0) or (max_terminal is not None and max_terminal < 0):
            raise ValueError("ttl and max_terminal must not be negative")
        cutoff = None
        if ttl is not None:
            try:
                cutoff = rows.micros(now - _dt.timedelta(seconds=ttl))
            except OverflowError:  # before year 1: nothing is that old
                cutoff = None

        def apply(conn: sqlite3.Connection) -> tuple[str, ...]:
            victims = rows.select_evictions(conn, cutoff_us=cutoff, max_terminal=max_terminal)
            rows.delete_rows(conn, victims)
            return tuple(victims)

        return await self._writer.write(apply, self.push_configs._forget)

    async def run_retention(
        self,
        *,
        ttl: float | None,
        max_terminal: int | None,
        interval: float,
        clock: Callable[[], _dt.datetime] = utc_now,
    ) -> NoReturn:
        """Run :meth:`evict` with ``now=clock()`` every ``interval`` seconds, forever.

        Run it in a task group you own and cancel it to stop (or pass ``retention_*`` to
        :meth:`open`). A failed pass is logged and retried at the next interval.

        Raises:
            ValueError: Both rules are None, or ``interval`` is not positive.
            StoreClosedError: The store closed.
        """
        if ttl is None and max_terminal is None:
            raise ValueError("retention needs a ttl, a max_terminal, or both")
        if interval <= 0:
            raise ValueError("interval must be positive")
        while True:
            try:
                await self.evict(now=clock(), ttl=ttl, max_terminal=max_terminal)
            except StoreClosedError:
                raise
            except StoreError:
                logger.exception("%s: retention pass failed", self.path)
            await anyio.sleep(interval)

    async def _retain_until_closed(
        self, *, ttl: float | None, max_terminal: int | None, interval: float
    ) -> None:
        # On asyncio, a task whose sleep has just finished is not cancelled until its
        # next await, so the pass it starts may find the store already closed: that is
        # the store shutting down, not an error.
        try:
            await self.run_retention(ttl=ttl, max_terminal=max_terminal, interval=interval)
        except StoreClosedError:
            return

    def statistics(self) -> SQLiteStoreStatistics:
        """A frozen record of the writer's counters (commits, writes, batch sizes)."""
        return self._writer.statistics()

    # -- internals ---------------------------------------------------------------------

    async def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        if self._writer.closed:
            raise StoreClosedError(f"{self.path}: the store is closed")
        try:
            conn = await self._pool_receive.receive()
        except (anyio.ClosedResourceError, anyio.EndOfStream):
            raise StoreClosedError(f"{self.path}: the store is closed") from None
        try:
            return await anyio.to_thread.run_sync(self._guarded, fn, conn)
        finally:
            self._pool_send.send_nowait(conn)

    def _guarded(self, fn: Callable[[sqlite3.Connection], T], conn: sqlite3.Connection) -> T:
        try:
            return fn(conn)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: read failed: {exc}") from exc

    async def _close_connections(self) -> None:
        self._writer.close()
        conns = [await self._pool_receive.receive() for _ in self._readers]  # reads done
        self._pool_send.close()
        self._pool_receive.close()
        writer = self._writer.connection

        def close() -> None:
            try:
                writer.execute("PRAGMA optimize")
            except sqlite3.Error:
                logger.warning("%s: PRAGMA optimize failed at close", self.path)
            for conn in [*conns, writer]:
                schema.close_quietly(conn)

        await anyio.to_thread.run_sync(close)
