"""The :class:`~a2a_actors.runtime._environment.RemoteTasks` of a single process: no other node runs
a task.

A task stored without a local actor is one this process (or a previous one on the same
durable store) left: nobody else runs it. So this process takes new tasks whenever it
runs, names no runner, and subscribes to such a task only to replay a settled one's end
to a resumed stream (``Last-Event-ID``), from what the supervisor still holds of its
events. The cluster's implementation is :class:`a2a_actors.cluster._member.NodeRemote`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from a2a_actors.protocol._errors import UnsupportedOperationError
from a2a_actors.protocol._models import Message, Task
from a2a_actors.protocol._requests import SendMessageRequest
from a2a_actors.protocol._state import is_terminal
from a2a_actors.runtime._fanout import Subscription, replayed
from a2a_actors.runtime._replay import SettledHistories
from a2a_actors.stores._base import StoredTask

__all__ = ("LocalTasks",)


class LocalTasks:
    """No other node (see the module docstring).

    Args:
        settled: The events the supervisor keeps of settled tasks.
    """

    #: Events of a task are held only by its publication and ``settled``: a stream that
    #: cannot resume from them starts again from the snapshot.
    keeps_events = False

    def __init__(self, settled: SettledHistories) -> None:
        self._settled = settled

    def check_available(self) -> None:
        """Always: a single process takes new tasks while it runs."""

    async def runner(self, record: StoredTask) -> str | None:
        """None: no other node runs a task."""
        return None

    async def cancel(self, node: str, record: StoredTask, metadata: dict[str, Any] | None) -> Task:
        """Never called: :meth:`runner` names no node."""
        raise RuntimeError(f"no node {node!r}: this process is alone")

    async def give_input(
        self, node: str, record: StoredTask, request: SendMessageRequest, extensions: frozenset[str]
    ) -> Task | Message:
        """Never called: :meth:`runner` names no node."""
        raise RuntimeError(f"no node {node!r}: this process is alone")

    def subscribe(
        self, record: StoredTask, capacity: int, *, after: int | None = None
    ) -> AbstractAsyncContextManager[Subscription]:
        """A settled task's end, for a stream resumed after version ``after``: the events
        it missed while they are still held, else the final snapshot; then the end.

        Raises:
            UnsupportedOperationError: Without ``after``, or the task is not terminal: it
                is not running on this server (a previous process left it).
        """
        return self._subscribe(record, after)

    @asynccontextmanager
    async def _subscribe(
        self, record: StoredTask, after: int | None
    ) -> AsyncIterator[Subscription]:
        task, version = record.task, record.version
        if after is None or not is_terminal(task.status.state):
            raise UnsupportedOperationError(
                f"Task {task.id} is not running on this server", metadata={"taskId": task.id}
            )
        sub = self._ended(task, version, after)
        try:
            yield sub
        finally:
            sub.close()

    def _ended(self, task: Task, version: int, after: int) -> Subscription:
        if after == version:
            return replayed(task.id, after, replay=[])
        history = self._settled.get(task.id, version)
        replay = history.after(after) if history is not None and after < version else None
        if replay is None:
            return replayed(task.id, version, snapshot=task)
        return replayed(task.id, after, replay=replay)
