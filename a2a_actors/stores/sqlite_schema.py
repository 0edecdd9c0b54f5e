"""The SQLite store's file format and its blocking half: errors, schema, migrations, rows.

Everything here is plain, synchronous :mod:`sqlite3` code. The async shell
(:mod:`a2a_actors.stores.sqlite`) runs it in worker threads and decides which connection
runs what; nothing here starts a thread, takes a lock or knows about anyio.

File format (schema version 1)
------------------------------
``PRAGMA application_id`` is :data:`APPLICATION_ID` and ``PRAGMA user_version`` is the
schema version. Two tables:

* ``tasks``: one row per task. ``body`` is the Task as compact A2A JSON (status, history,
  artifacts, metadata — correlation data travels in the metadata); ``owner``, ``version``
  and copies of the filterable fields sit beside it, each indexed together with the listing
  order ``(status_us, id)``. ``status_us`` is the status timestamp in integer microseconds
  since the Unix epoch (0 when the status has no timestamp, as :func:`~.base.sort_key`
  reads it), so ordering and cursors are exact.
* ``push_configs``: one row per (task, config), ``body`` is the full config JSON,
  **credentials included** (delivery needs them); ``rowid`` keeps creation order.

Migrations: :data:`MIGRATIONS` ``[n]`` takes a file from version ``n`` to ``n + 1``; they
run in one ``BEGIN IMMEDIATE`` transaction at open, so a crash mid-migration leaves the
old version intact. A file with a newer version than :data:`SCHEMA_VERSION` is refused
(:class:`SchemaTooNewError`) rather than guessed at.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import sqlite3
from collections.abc import Sequence
from typing import Literal
from uuid import uuid4

import msgspec

from ..protocol import codec
from ..protocol.models import Message, Part, Role, Task, TaskState
from ..protocol.requests import TaskPushNotificationConfig
from ..protocol.state import INTERRUPTED_STATES, TERMINAL_STATES, TaskMachine
from .base import StoredTask, TaskQuery

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
SCHEMA_VERSION = 1

#: ``PRAGMA synchronous`` levels the store accepts (both with WAL; see docs/durability.md).
Synchronous = Literal["FULL", "NORMAL"]

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_MICROSECOND = _dt.timedelta(microseconds=1)
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
)
assert len(MIGRATIONS) == SCHEMA_VERSION

#: A ``tasks`` row in column order (id, context_id, state, terminal, owner, status_us,
#: version, body).
TaskRow = tuple[str, str, str, int, str | None, int, int, bytes]

_TERMINAL_VALUES = frozenset(state.value for state in TERMINAL_STATES)


def micros(when: _dt.datetime | None) -> int:
    """``when`` as integer microseconds since the Unix epoch (None reads as the epoch)."""
    return 0 if when is None else (when - _EPOCH) // _MICROSECOND


def task_row(record: StoredTask) -> TaskRow:
    """The ``tasks`` row of ``record`` (encodes the Task; call it outside the writer)."""
    task = record.task
    state = task.status.state.value
    return (
        task.id,
        task.context_id,
        state,
        int(state in _TERMINAL_VALUES),
        record.owner,
        micros(task.status.timestamp),
        record.version,
        codec.encode(task),
    )


def record_from_row(body: bytes, owner: str | None, version: int) -> StoredTask:
    """The record stored in a ``tasks`` row."""
    return StoredTask(codec.decode(body, Task), owner, version)


_UPSERT = """
INSERT INTO tasks (id, context_id, state, terminal, owner, status_us, version, body)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
    context_id = excluded.context_id, state = excluded.state, terminal = excluded.terminal,
    owner = excluded.owner, status_us = excluded.status_us, version = excluded.version,
    body = excluded.body
WHERE excluded.version >= tasks.version
"""


def upsert_task(conn: sqlite3.Connection, row: TaskRow) -> None:
    """Write ``row`` unless the stored row has a higher version (ties: the newer write)."""
    conn.execute(_UPSERT, row)


def get_task(conn: sqlite3.Connection, task_id: str) -> StoredTask | None:
    """The stored record of ``task_id``, or None."""
    row = conn.execute("SELECT body, owner, version FROM tasks WHERE id = ?", (task_id,)).fetchone()
    return None if row is None else record_from_row(*row)


def list_tasks(
    conn: sqlite3.Connection, query: TaskQuery, cursor: tuple[int, str] | None
) -> tuple[list[StoredTask], bool, int]:
    """Up to ``query.page_size`` matching records after ``cursor``, newest first, whether
    more follow, and the number of all matches (cursor aside), all from one snapshot."""
    clauses: list[str] = []
    params: list[object] = []
    if query.context_id is not None:
        clauses.append("context_id = ?")
        params.append(query.context_id)
    if query.state is not None:
        clauses.append("state = ?")
        params.append(query.state.value)
    if query.owner is None:
        clauses.append("owner IS NULL")
    elif query.owner is not msgspec.UNSET:
        clauses.append("owner = ?")
        params.append(query.owner)
    if query.status_timestamp_after is not None:
        clauses.append("status_us >= ?")
        params.append(micros(query.status_timestamp_after))
    where = " WHERE " + " AND ".join(clauses) if clauses else ""
    page_clauses = [*clauses, "(status_us, id) < (?, ?)"] if cursor else clauses
    page_where = " WHERE " + " AND ".join(page_clauses) if page_clauses else ""
    page_params = [*params, *cursor] if cursor else params
    conn.execute("BEGIN")  # one read snapshot for the count and the page
    try:
        (total,) = conn.execute(f"SELECT count(*) FROM tasks{where}", params).fetchone()
        rows = conn.execute(
            f"SELECT body, owner, version FROM tasks{page_where}"
            " ORDER BY status_us DESC, id DESC LIMIT ?",
            [*page_params, query.page_size + 1],
        ).fetchall()
    finally:
        conn.execute("COMMIT")
    page = [record_from_row(*row) for row in rows[: query.page_size]]
    return page, len(rows) > query.page_size, total


def load_push_configs(conn: sqlite3.Connection) -> list[TaskPushNotificationConfig]:
    """Every stored push config, in creation order."""
    rows = conn.execute("SELECT body FROM push_configs ORDER BY rowid").fetchall()
    return [codec.decode(body, TaskPushNotificationConfig) for (body,) in rows]


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


def delete_rows(conn: sqlite3.Connection, task_ids: Sequence[str]) -> Sequence[str]:
    """Delete the tasks ``task_ids`` and their push configs; return ``task_ids``."""
    params = [(task_id,) for task_id in task_ids]
    conn.executemany("DELETE FROM tasks WHERE id = ?", params)
    conn.executemany("DELETE FROM push_configs WHERE task_id = ?", params)
    return task_ids


def live_records(conn: sqlite3.Connection) -> list[StoredTask]:
    """Every non-terminal record, oldest status first."""
    rows = conn.execute(
        "SELECT body, owner, version FROM tasks WHERE terminal = 0 ORDER BY status_us, id"
    ).fetchall()
    return [record_from_row(*row) for row in rows]


def select_evictions(
    conn: sqlite3.Connection, *, cutoff_us: int | None, max_terminal: int | None
) -> list[str]:
    """Ids of the terminal tasks retention removes, oldest first: those whose status
    timestamp is at or before ``cutoff_us``, then the oldest beyond ``max_terminal``."""
    victims: list[str] = []
    if cutoff_us is not None:
        victims += [
            task_id
            for (task_id,) in conn.execute(
                "SELECT id FROM tasks WHERE terminal = 1 AND status_us <= ? ORDER BY status_us, id",
                (cutoff_us,),
            )
        ]
    if max_terminal is not None:
        (count,) = conn.execute("SELECT count(*) FROM tasks WHERE terminal = 1").fetchone()
        excess = count - len(victims) - max_terminal
        if excess > 0:
            victims += [
                task_id
                for (task_id,) in conn.execute(
                    "SELECT id FROM tasks WHERE terminal = 1 ORDER BY status_us, id"
                    " LIMIT ? OFFSET ?",
                    (excess, len(victims)),
                )
            ]
    return victims


def fail_active(
    conn: sqlite3.Connection, *, now: _dt.datetime, text: str
) -> tuple[list[StoredTask], list[str]]:
    """Fail every SUBMITTED/WORKING task (agent message ``text`` at ``now``, version + 1).

    Returns:
        The new FAILED records, and the ids of the INPUT_REQUIRED/AUTH_REQUIRED tasks
        (left unchanged), both oldest status first.
    """
    failed: list[StoredTask] = []
    interrupted: list[str] = []
    for record in live_records(conn):
        task = record.task
        if task.status.state in INTERRUPTED_STATES:
            interrupted.append(task.id)
            continue
        machine = TaskMachine.restore(task, version=record.version)
        note = Message(message_id=str(uuid4()), role=Role.AGENT, parts=(Part(text=text),))
        machine.set_status(TaskState.FAILED, timestamp=now, message=note)
        new = StoredTask(machine.snapshot(), record.owner, machine.version)
        upsert_task(conn, task_row(new))
        failed.append(new)
    return failed, interrupted


def put_push_config(
    conn: sqlite3.Connection, task_id: str, config_id: str, body: bytes, *, limit: int
) -> bool:
    """Insert or replace a push config; False (nothing written) when a new one would exceed
    ``limit`` configs for the task. A replaced config keeps its place in creation order."""
    known = conn.execute(
        "SELECT 1 FROM push_configs WHERE task_id = ? AND config_id = ?", (task_id, config_id)
    ).fetchone()
    if known is None:
        (count,) = conn.execute(
            "SELECT count(*) FROM push_configs WHERE task_id = ?", (task_id,)
        ).fetchone()
        if count >= limit:
            return False
    conn.execute(
        "INSERT INTO push_configs (task_id, config_id, body) VALUES (?, ?, ?)"
        " ON CONFLICT (task_id, config_id) DO UPDATE SET body = excluded.body",
        (task_id, config_id, body),
    )
    return True


def delete_push_config(conn: sqlite3.Connection, task_id: str, config_id: str) -> None:
    """Delete one push config if it exists."""
    conn.execute(
        "DELETE FROM push_configs WHERE task_id = ? AND config_id = ?", (task_id, config_id)
    )
