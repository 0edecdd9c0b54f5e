"""Task storage: the :class:`TaskStore` protocol and its in-memory implementation."""

from __future__ import annotations

from .base import (
    DEFAULT_PAGE_SIZE as DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE as MAX_PAGE_SIZE,
    StoredTask as StoredTask,
    TaskPage as TaskPage,
    TaskQuery as TaskQuery,
    TaskStore as TaskStore,
    decode_page_token as decode_page_token,
    encode_page_token as encode_page_token,
    sort_key as sort_key,
)
from .memory import MemoryTaskStore as MemoryTaskStore

__all__ = (
    "DEFAULT_PAGE_SIZE",
    "MAX_PAGE_SIZE",
    "MemoryTaskStore",
    "StoredTask",
    "TaskPage",
    "TaskQuery",
    "TaskStore",
    "decode_page_token",
    "encode_page_token",
    "sort_key",
)
