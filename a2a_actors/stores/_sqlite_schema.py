"""The SQLite store's file format and how a file is opened: errors, schema, migrations.

Everything here is plain, synchronous :mod:`sqlite3` code. The async shell
(:mod:`a2a_actors.stores._sqlite`) runs it in worker threads and decides which connection
runs what; nothing here starts a thread, takes a lock or knows about anyio. The statements
that read and write rows live in :mod:`~a2a_actors.stores._sqlite_rows` (re-exported here).

File format (schema version 2)
------------------------------
``PRAGMA application_id`` is :data:`APPLICATION_ID` and ``PRAGMA user_version`` is the
schema version. Two tables:

* ``tasks``: one row per task. ``body`` is the Task as compact A2A JSON (status, history,
  artifacts, metadata — correlation data travels in the metadata); ``private`` what its agent keeps
  with it unseen by clients (JSON, or NULL; added by version 2); ``owner``, ``version`` and copies
  of the filterable fields sit beside it, each indexed together with the listing order ``(status_us,
  id)``. ``status_us`` is the status timestamp in integer microseconds since the Unix epoch (0 when
  the status has no timestamp, as :func:`~a2a_actors.stores._base.sort_key` reads it), so ordering
  and cursors are exact.
* ``push_configs``: one row per (task, config), ``body`` is the full config JSON,
  **credentials included** (delivery needs them); ``rowid`` keeps creation order.

Migrations: :data:`MIGRATIONS` ``[n]`` takes a file from version ``n`` to ``n + 1``; they
run in one ``BEGIN IMMEDIATE`` transaction at open, so a crash mid-migration leaves the
old version intact. A file with a newer version than :data:`SCHEMA_VERSION` is refused
(:class:`SchemaTooNewError`) rather than guessed at.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from typing import Literal

import msgspec

from a2a_actors.protocol._requests import TaskPushNotificationConfig
from a2a_actors.stores._sqlite_rows import (
    TaskRow as TaskRow,
    delete_push_config as delete_push_config,
    delete_rows as delete_rows,
    fail_active as fail_active,
    get_task as get_task,
    list_tasks as list_tasks,
    live_records as live_records,
    load_push_configs as load_push_configs,
    micros as micros,
    put_push_config as put_push_config,
    record_from_row as record_from_row,
    select_evictions as select_evictions,
    task_row as task_row,
    upsert_task as upsert_task,
)

__all__ = (
    "APPLICATION_ID",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "SchemaTooNewError",
    "StoreClosedError",
    "StoreCorruptError",
    "StoreError",
    "Synchronous",
    "TaskRow",
    "close_quietly",
    "connect",
    "delete_push_config",
    "delete_rows",
    "fail_active",
    "get_task",
    "is_database_failure",
    "list_tasks",
    "live_records",
    "load_push_configs",
    "micros",
    "open_database",
    "put_push_config",
    "record_from_row",
    "select_evictions",
    "task_row",
    "upsert_task",
)

#: ``PRAGMA application_id`` of our files: ASCII "A2AA".
APPLICATION_ID = 0x41324141
#: The schema version this code writes; older files are migrated at open.
SCHEMA_VERSION = 2

#: ``PRAGMA synchronous`` levels the store accepts (both with WAL; see docs/durability.md).
Synchronous = Literal["FULL", "NORMAL"]

_SQLITE_CORRUPT = 11
_SQLITE_NOTADB = 26
# Primary result codes that mean the database, not one statement, failed: BUSY, LOCKED,
# NOMEM, READONLY, IOERR, CORRUPT, FULL, CANTOPEN, NOTADB.
_DATABASE_FAILURES = frozenset({5, 6, 7, 8, 10, 11, 13, 14, 26})


class StoreError(Exception):
    """A durable store could not do what was asked (I/O error, full disk, locked file...).

    When a write raises it, nothing of that write was committed.
    """


class StoreCorruptError(StoreError):
    """The file is not an SQLite database of this store (garbage, damaged, or another
    application's database); raised by ``open`` before anything is written to it."""


class SchemaTooNewError(StoreError):
    """The file was written by a newer a2a-actors whose schema this version cannot read.

    Attributes:
        found: The schema version in the file.
        supported: The newest schema version this code knows.
    """

    def __init__(self, path: str, found: int, supported: int) -> None:
        super().__init__(
            f"{path}: store schema version {found} is newer than this a2a-actors supports "
            f"({supported}); upgrade a2a-actors or point it at another file"
        )
        self.found = found
        self.supported = supported


class StoreClosedError(StoreError):
    """The store was used after it was closed (you closed it yourself)."""


MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (  # 0 -> 1: the initial schema
        """CREATE TABLE tasks (
            id TEXT PRIMARY KEY,
            context_id TEXT NOT NULL,
            state TEXT NOT NULL,
            terminal INTEGER NOT NULL,
            owner TEXT,
            status_us INTEGER NOT NULL,
            version INTEGER NOT NULL,
            body BLOB NOT NULL
        )""",
        "CREATE INDEX tasks_by_time ON tasks (status_us, id)",
        "CREATE INDEX tasks_by_owner ON tasks (owner, status_us, id)",
        "CREATE INDEX tasks_by_context ON tasks (context_id, status_us, id)",
        "CREATE INDEX tasks_by_state ON tasks (state, status_us, id)",
        "CREATE INDEX tasks_by_terminal ON tasks (terminal, status_us, id)",
        """CREATE TABLE push_configs (
            task_id TEXT NOT NULL,
            config_id TEXT NOT NULL,
            body BLOB NOT NULL,
            UNIQUE (task_id, config_id)
        )""",
    ),
    (  # 1 -> 2: what an agent keeps with its task unseen by clients (ctx.private)
        "ALTER TABLE tasks ADD COLUMN private BLOB",
    ),
)
assert len(MIGRATIONS) == SCHEMA_VERSION


def connect(
    path: str, *, synchronous: Synchronous, busy_timeout: float, query_only: bool
) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), usable from any thread
    (the caller guarantees one thread at a time)."""
    conn = sqlite3.connect(
        path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
    )
    try:
        conn.execute(f"PRAGMA synchronous = {synchronous}")
        conn.execute("PRAGMA temp_store = MEMORY")
        if query_only:
            conn.execute("PRAGMA query_only = ON")
    except BaseException:
        conn.close()
        raise
    return conn


def is_database_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is a failure of the database as a whole rather than of one write."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(exc, sqlite3.Error) and code is not None and code & 0xFF in _DATABASE_FAILURES


def close_quietly(conn: sqlite3.Connection) -> None:
    """Close ``conn``, ignoring errors (used on paths that already report one)."""
    with contextlib.suppress(sqlite3.Error):
        conn.close()


def open_database(
    path: str, *, synchronous: Synchronous, busy_timeout: float, readers: int
) -> tuple[sqlite3.Connection, list[sqlite3.Connection], list[TaskPushNotificationConfig]]:
    """Open (creating or migrating) the store at ``path``.

    A new file is created with mode 0600: it holds push-notification credentials.

    Returns:
        The writer connection, ``readers`` read-only connections, and every stored push
        config in creation order.

    Raises:
        StoreCorruptError: Not an SQLite database, damaged, or another application's.
        SchemaTooNewError: Written by a newer schema.
        StoreError: Anything else (cannot create the file, no WAL support, locked...).
    """
    opened: list[sqlite3.Connection] = []
    try:
        if not os.path.exists(path):
            os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))
        writer = connect(path, synchronous=synchronous, busy_timeout=busy_timeout, query_only=False)
        opened.append(writer)
        _check_owner(writer, path)
        (mode,) = writer.execute("PRAGMA journal_mode = WAL").fetchone()
        if str(mode).lower() != "wal":
            raise StoreError(f"{path}: cannot use write-ahead logging (journal mode {mode})")
        _migrate(writer, path)
        configs = load_push_configs(writer)
        for _ in range(readers):
            opened.append(
                connect(path, synchronous=synchronous, busy_timeout=busy_timeout, query_only=True)
            )
    except sqlite3.Error as exc:
        for conn in opened:
            close_quietly(conn)
        code = getattr(exc, "sqlite_errorcode", None)
        if code is not None and code & 0xFF in (_SQLITE_NOTADB, _SQLITE_CORRUPT):
            raise StoreCorruptError(
                f"{path}: not a usable SQLite database ({exc}); it may be damaged, "
                "encrypted or another kind of file"
            ) from exc
        raise StoreError(f"{path}: cannot open the task store: {exc}") from exc
    except (OSError, msgspec.DecodeError, StoreError) as exc:
        for conn in opened:
            close_quietly(conn)
        if isinstance(exc, StoreError):
            raise
        if isinstance(exc, msgspec.DecodeError):
            raise StoreCorruptError(f"{path}: a stored push config is damaged: {exc}") from exc
        raise StoreError(f"{path}: cannot open the task store: {exc}") from exc
    return writer, opened[1:], configs


def _check_owner(conn: sqlite3.Connection, path: str) -> None:
    (app_id,) = conn.execute("PRAGMA application_id").fetchone()
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    if app_id == APPLICATION_ID:
        if version > SCHEMA_VERSION:
            raise SchemaTooNewError(path, version, SCHEMA_VERSION)
        return
    (tables,) = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    if app_id != 0 or version != 0 or tables:
        raise StoreCorruptError(
            f"{path}: an SQLite database of another application (application_id={app_id}, "
            f"user_version={version}); refusing to use it as a task store"
        )


def _migrate(conn: sqlite3.Connection, path: str) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        (version,) = conn.execute("PRAGMA user_version").fetchone()  # re-read under the lock
        if version > SCHEMA_VERSION:
            raise SchemaTooNewError(path, version, SCHEMA_VERSION)
        for step in MIGRATIONS[version:]:
            for statement in step:
                conn.execute(statement)
        if version != SCHEMA_VERSION:
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise
