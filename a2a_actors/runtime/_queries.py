"""TaskQueries: the reading requests of a supervisor (GetTask, ListTasks, the access check).

None of them waits for an actor or changes anything. A live task is read from its
actor's last *published* snapshot, anything else from the store; since an actor
publishes only what it already stored (:mod:`~a2a_actors.runtime._publication`), both
agree. Provisional tasks and other callers' tasks read as unknown (ownership: see
:mod:`~a2a_actors.runtime._roster`). ``historyLength`` is applied to every Task returned.
A ListTasks page is bounded in bytes as well as in count: it ends before the task that
would take its JSON past ``max_page_bytes`` (one task at least, however large), and its
``nextPageToken`` goes on from there. The supervisor holds a :class:`TaskQueries` as a
field and documents the requests.
"""

from __future__ import annotations

import msgspec

from a2a_actors.protocol import codec
from a2a_actors.protocol._models import Task, TaskState
from a2a_actors.protocol._requests import ListTasksRequest, ListTasksResponse
from a2a_actors.protocol._state import apply_history_length
from a2a_actors.runtime._roster import TaskRoster
from a2a_actors.stores._base import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    StoredTask,
    TaskQuery,
    encode_page_token,
    sort_key,
)

__all__ = ("DEFAULT_MAX_PAGE_BYTES", "TaskQueries")

#: The most JSON a ListTasks page holds (its tasks', encoded), unless told otherwise.
DEFAULT_MAX_PAGE_BYTES = 4 << 20


class TaskQueries:
    """GetTask, ListTasks and :meth:`check_access` over a roster."""

    __slots__ = ("max_page_bytes", "roster")

    def __init__(self, roster: TaskRoster, *, max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES):
        if max_page_bytes < 1:
            raise ValueError("max_page_bytes must be at least 1")
        self.roster = roster
        self.max_page_bytes = max_page_bytes

    async def get_task(
        self, task_id: str, *, history_length: int | None = None, caller: str | None = None
    ) -> Task:
        """GetTask (see :meth:`Supervisor.get_task`)."""
        return apply_history_length(await self.check_access(task_id, caller=caller), history_length)

    async def check_access(self, task_id: str, *, caller: str | None = None) -> Task:
        """The task, if ``caller`` may see it (see :meth:`Supervisor.check_access`)."""
        roster = self.roster
        actor = roster.visible(task_id, caller)
        if actor is not None:
            published = actor.publication.published
            assert published is not None
            return published
        return (await roster.stored(task_id, caller)).task

    async def list_tasks(
        self, request: ListTasksRequest, *, caller: str | None = None
    ) -> ListTasksResponse:
        """ListTasks (see :meth:`Supervisor.list_tasks`)."""
        page_size = request.page_size or DEFAULT_PAGE_SIZE
        status = request.status
        query = TaskQuery(
            context_id=request.context_id or None,
            state=None if status is None or status is TaskState.UNSPECIFIED else status,
            owner=caller,
            status_timestamp_after=request.status_timestamp_after,
            page_size=page_size,
            page_token=request.page_token,
        )
        page = await self.roster.env.store.list(query)
        include = bool(request.include_artifacts)
        tasks: list[Task] = []
        size = 0
        token = page.next_page_token
        for index, record in enumerate(page.records):
            task = apply_history_length(
                record.task
                if include or not record.task.artifacts
                else msgspec.structs.replace(record.task, artifacts=()),
                request.history_length,
            )
            size += len(codec.encode(task))
            if size > self.max_page_bytes and tasks:  # the rest on the next page
                token = encode_page_token(sort_key(page.records[index - 1]))
                break
            tasks.append(task)
        return ListTasksResponse(
            tasks=tuple(tasks),
            next_page_token=token,
            page_size=page_size,
            total_size=page.total_size,
        )

    async def context_records(self, context_id: str, *, caller: str | None) -> list[StoredTask]:
        """Every stored record of the caller's tasks in ``context_id``, newest first (see
        :meth:`Supervisor.context_records`)."""
        records: list[StoredTask] = []
        token = ""
        while True:
            query = TaskQuery(
                context_id=context_id, owner=caller, page_size=MAX_PAGE_SIZE, page_token=token
            )
            page = await self.roster.env.store.list(query)
            records.extend(page.records)
            token = page.next_page_token
            if not token:
                return records
