"""The in-memory task store: the default store and the fake every test uses.

A dict from task id to :class:`~a2a_actors.stores._base.StoredTask`, and the ids of each
context's tasks (a task's context never changes). Saving and reading never checkpoint
(nothing here awaits), so a save cannot be interrupted half-way. Listing sorts the matching
records on every call (O(n log n) of the candidates: a context's tasks when the query names
one, else every task), which is fine for an embedded store; a durable store answers the
same query from an index.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable

from a2a_actors.stores._base import (
    StoredTask,
    TaskPage,
    TaskQuery,
    decode_page_token,
    encode_page_token,
    sort_key,
)

__all__ = ("MemoryTaskStore",)


class MemoryTaskStore:
    """A :class:`~a2a_actors.stores._base.TaskStore` that keeps records in a dict."""

    __slots__ = ("_by_context", "_records")

    def __init__(self) -> None:
        self._records: dict[str, StoredTask] = {}
        # A context's one task id, or the list of its ids once it has several: most
        # contexts hold one task, and a string costs no more than the dict's slot.
        self._by_context: dict[str, str | list[str]] = {}

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._records

    async def save(self, record: StoredTask) -> None:
        """Store ``record`` unless a record with a higher version is already stored."""
        task_id = record.task.id
        old = self._records.get(task_id)
        if old is None:
            self._index(record.task.context_id, task_id)
        elif old.version > record.version:
            return
        elif old.task.context_id != record.task.context_id:  # never from the runtime
            self._unindex(old.task.context_id, task_id)
            self._index(record.task.context_id, task_id)
        self._records[task_id] = record

    async def get(self, task_id: str) -> StoredTask | None:
        """The stored record of ``task_id``, or None."""
        return self._records.get(task_id)

    async def list(self, query: TaskQuery) -> TaskPage:
        """One page of matching records, newest first by status timestamp, then id.

        Raises:
            InvalidParamsError: ``query.page_token`` is not a token of this store.
        """
        records = self._records
        candidates: Iterable[StoredTask] = records.values()
        if query.context_id is not None:
            ids = self._by_context.get(query.context_id, ())
            candidates = [records[ids]] if isinstance(ids, str) else [records[i] for i in ids]
        matches = [r for r in candidates if query.matches(r)]
        matches.sort(key=sort_key, reverse=True)
        start = 0
        if query.page_token:
            cursor = decode_page_token(query.page_token)
            start = len(matches)
            for index, record in enumerate(matches):
                if sort_key(record) < cursor:
                    start = index
                    break
        page = matches[start : start + query.page_size]
        more = start + len(page) < len(matches)
        token = encode_page_token(sort_key(page[-1])) if more and page else ""
        return TaskPage(records=tuple(page), next_page_token=token, total_size=len(matches))

    async def delete(self, task_id: str) -> None:
        """Remove ``task_id``; nothing happens when it is not stored."""
        record = self._records.pop(task_id, None)
        if record is not None:
            self._unindex(record.task.context_id, task_id)

    def _index(self, context_id: str, task_id: str) -> None:
        ids = self._by_context.get(context_id)
        if ids is None:
            self._by_context[context_id] = task_id
        elif isinstance(ids, str):
            self._by_context[context_id] = [ids, task_id]
        else:
            ids.append(task_id)

    def _unindex(self, context_id: str, task_id: str) -> None:
        ids = self._by_context[context_id]
        if isinstance(ids, str):
            del self._by_context[context_id]
            return
        ids.remove(task_id)
        if len(ids) == 1:
            self._by_context[context_id] = ids[0]

    def records(self) -> builtins.list[StoredTask]:
        """Every stored record, in no particular order (for tests and debugging)."""
        return list(self._records.values())
