"""The reading requests of a supervisor: GetTask, ListTasks, and the access check.

None of them waits for an actor or changes anything. A live task is read from its
actor's last *published* snapshot, anything else from the store; since an actor
publishes only what it already stored (:mod:`~a2a_actors.runtime.publication`), both
agree. Provisional tasks and other callers' tasks read as unknown (ownership: see
:mod:`~a2a_actors.runtime.roster`). ``historyLength`` is applied to every Task returned.
"""

from __future__ import annotations

import msgspec

from ..protocol.models import Task, TaskState
from ..protocol.requests import ListTasksRequest, ListTasksResponse
from ..protocol.state import apply_history_length
from ..stores.base import DEFAULT_PAGE_SIZE, TaskQuery
from .roster import TaskRoster

__all__ = ("TaskQueries",)


class TaskQueries(TaskRoster):
    """GetTask, ListTasks and :meth:`check_access`; a base of the Supervisor."""

    async def get_task(
        self, task_id: str, *, history_length: int | None = None, caller: str | None = None
    ) -> Task:
        """GetTask: the last published snapshot, cut to ``history_length``.

        Never waits for the task's actor.

        Raises:
            TaskNotFoundError: Unknown, provisional, or not the caller's.
        """
        return apply_history_length(await self.check_access(task_id, caller=caller), history_length)

    async def check_access(self, task_id: str, *, caller: str | None = None) -> Task:
        """The task, if ``caller`` may see it (for push-config CRUD and the like).

        Raises:
            TaskNotFoundError: Unknown, provisional, or not the caller's.
        """
        actor = self._visible(task_id, caller)
        if actor is not None:
            assert actor.published is not None
            return actor.published
        return (await self._stored(task_id, caller)).task

    async def list_tasks(
        self, request: ListTasksRequest, *, caller: str | None = None
    ) -> ListTasksResponse:
        """ListTasks: the caller's tasks, newest first, from the store.

        Without ``includeArtifacts`` the tasks carry no artifacts; ``historyLength`` cuts
        each history; ``nextPageToken`` is ``""`` on the last page.

        Raises:
            InvalidParamsError: Bad ``pageToken`` or ``pageSize``.
        """
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
        page = await self._store.list(query)
        include = bool(request.include_artifacts)
        tasks = tuple(
            apply_history_length(
                r.task
                if include or not r.task.artifacts
                else msgspec.structs.replace(r.task, artifacts=()),
                request.history_length,
            )
            for r in page.records
        )
        return ListTasksResponse(
            tasks=tasks,
            next_page_token=page.next_page_token,
            page_size=page_size,
            total_size=page.total_size,
        )
