"""The SQLite store's rows: how records become rows and back, and the statements over them.

Everything here is plain, synchronous :mod:`sqlite3` code over an open connection of the
file format :mod:`~a2a_actors.stores._sqlite_schema` describes (the ``tasks`` and
``push_configs`` tables). The async shell (:mod:`a2a_actors.stores._sqlite`) runs these
functions in worker threads: reads on a reader connection, writes inside the writer's
transaction (:mod:`~a2a_actors.stores._sqlite_writer`). None of them begins or commits a
transaction, except :func:`list_tasks`, which reads its count and page in one snapshot.

Times are stored as integer microseconds since the Unix epoch (:func:`micros`), so ordering
and page cursors are exact.
"""

from __future__ import annotations

import datetime as _dt
import sqlite3
from collections.abc import Sequence
from typing import Any

import msgspec

from a2a_actors.protocol import codec
from a2a_actors.protocol._models import Task
from a2a_actors.protocol._requests import TaskPushNotificationConfig
from a2a_actors.protocol._settling import settle_orphan
from a2a_actors.protocol._state import TERMINAL_STATES
from a2a_actors.stores._base import StoredTask, TaskQuery

__all__ = (
    "TaskRow",
    "delete_push_config",
    "delete_rows",
    "fail_active",
    "get_task",
    "list_tasks",
    "live_records",
    "load_push_configs",
    "micros",
    "put_push_config",
    "record_from_row",
    "select_evictions",
    "task_row",
    "upsert_task",
)

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_MICROSECOND = _dt.timedelta(microseconds=1)

#: A ``tasks`` row in column order (id, context_id, state, terminal, owner, status_us,
#: version, body, private).
TaskRow = tuple[str, str, str, int, str | None, int, int, bytes, bytes | None]

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
        None if record.private is None else codec.encode(record.private),
    )


def record_from_row(
    body: bytes, owner: str | None, version: int, private: bytes | None = None
) -> StoredTask:
    """The record stored in a ``tasks`` row."""
    extra = None if private is None else codec.decode(private, dict[str, Any])
    return StoredTask(codec.decode(body, Task), owner, version, extra)


_UPSERT = """
INSERT INTO tasks (id, context_id, state, terminal, owner, status_us, version, body, private)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
    context_id = excluded.context_id, state = excluded.state, terminal = excluded.terminal,
    owner = excluded.owner, status_us = excluded.status_us, version = excluded.version,
    body = excluded.body, private = excluded.private
WHERE excluded.version >= tasks.version
"""


def upsert_task(conn: sqlite3.Connection, row: TaskRow) -> None:
    """Write ``row`` unless the stored row has a higher version (ties: the newer write)."""
    conn.execute(_UPSERT, row)


def get_task(conn: sqlite3.Connection, task_id: str) -> StoredTask | None:
    """The stored record of ``task_id``, or None."""
    row = conn.execute(
        "SELECT body, owner, version, private FROM tasks WHERE id = ?", (task_id,)
    ).fetchone()
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
            f"SELECT body, owner, version, private FROM tasks{page_where}"
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


def delete_rows(conn: sqlite3.Connection, task_ids: Sequence[str]) -> Sequence[str]:
    """Delete the tasks ``task_ids`` and their push configs; return ``task_ids``."""
    params = [(task_id,) for task_id in task_ids]
    conn.executemany("DELETE FROM tasks WHERE id = ?", params)
    conn.executemany("DELETE FROM push_configs WHERE task_id = ?", params)
    return task_ids


def live_records(conn: sqlite3.Connection) -> list[StoredTask]:
    """Every non-terminal record, oldest status first."""
    rows = conn.execute(
        "SELECT body, owner, version, private FROM tasks WHERE terminal = 0 ORDER BY status_us, id"
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
    """Settle every live task by the orphan rule (:mod:`~..protocol.settling`: FAILED with
    agent message ``text`` at ``now``, or kept while it waits for its client).

    Returns:
        The new FAILED records, and the ids of the tasks kept (INPUT_REQUIRED,
        AUTH_REQUIRED), both oldest status first.
    """
    failed: list[StoredTask] = []
    interrupted: list[str] = []
    for record in live_records(conn):
        settled = settle_orphan(record.task, record.version, now=now, reason=text)
        if settled is None:
            interrupted.append(record.task.id)
            continue
        new = StoredTask(settled.task, record.owner, settled.version, record.private)
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
