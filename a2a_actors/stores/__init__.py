"""Task storage: the :class:`TaskStore` protocol, the in-memory store and the SQLite store."""

from __future__ import annotations

from a2a_actors.stores.base import (
    DEFAULT_PAGE_SIZE as DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE as MAX_PAGE_SIZE,
    RecoverableStore as RecoverableStore,
    RecoveryReport as RecoveryReport,
    StoredTask as StoredTask,
    TaskPage as TaskPage,
    TaskQuery as TaskQuery,
    TaskStore as TaskStore,
    decode_page_token as decode_page_token,
    encode_page_token as encode_page_token,
    sort_key as sort_key,
)
from a2a_actors.stores.memory import MemoryTaskStore as MemoryTaskStore
from a2a_actors.stores.sqlite import (
    SQLitePushConfigStore as SQLitePushConfigStore,
    SQLiteStoreStatistics as SQLiteStoreStatistics,
    SQLiteTaskStore as SQLiteTaskStore,
)
from a2a_actors.stores.sqlite_schema import (
    SchemaTooNewError as SchemaTooNewError,
    StoreClosedError as StoreClosedError,
    StoreCorruptError as StoreCorruptError,
    StoreError as StoreError,
)

__all__ = (
    "DEFAULT_PAGE_SIZE",
    "MAX_PAGE_SIZE",
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
    "decode_page_token",
    "encode_page_token",
    "sort_key",
)
