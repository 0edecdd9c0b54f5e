"""Task storage: the :class:`TaskStore` protocol, the in-memory store and the SQLite store."""

from __future__ import annotations

from a2a_actors.stores._base import (
    RecoverableStore as RecoverableStore,
    RecoveryReport as RecoveryReport,
    StoredTask as StoredTask,
    TaskPage as TaskPage,
    TaskQuery as TaskQuery,
    TaskStore as TaskStore,
)
from a2a_actors.stores._memory import MemoryTaskStore as MemoryTaskStore
from a2a_actors.stores._sqlite import (
    SQLitePushConfigStore as SQLitePushConfigStore,
    SQLiteStoreStatistics as SQLiteStoreStatistics,
    SQLiteTaskStore as SQLiteTaskStore,
)
from a2a_actors.stores._sqlite_schema import (
    SchemaTooNewError as SchemaTooNewError,
    StoreClosedError as StoreClosedError,
    StoreCorruptError as StoreCorruptError,
    StoreError as StoreError,
)

__all__ = (
    "MemoryTaskStore",
    "RecoverableStore",
    "RecoveryReport",
    "SQLitePushConfigStore",
    "SQLiteStoreStatistics",
    "SQLiteTaskStore",
    "SchemaTooNewError",
    "StoreClosedError",
    "StoreCorruptError",
    "StoreError",
    "StoredTask",
    "TaskPage",
    "TaskQuery",
    "TaskStore",
)
