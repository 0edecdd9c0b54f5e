"""Children whose parent's handler is gone: cancelling what a lost parent left running.

When the cluster node that ran a parent task is lost (SIGKILL, cut from NATS), another
node settles the parent FAILED, but no handler is left to run the cancel cascade
(:mod:`._hop`), so the parent's remote children would run on to their own end. The node
that failed the parent calls :func:`cancel_orphans` with it instead (the server wires
:meth:`Orchestrator.cancel_orphans <orchestrator.Orchestrator.cancel_orphans>` to the
cluster's settler): every child the parent's hop record still shows live is cancelled
with CancelTask at the URL it was delegated to, with the same ``canceledBy`` /
``parentTaskId`` metadata as a cascade. Local children need nothing: they ran on the
parent's node and are settled with it.

The parent's final record is not updated (a settled task nobody holds never changes);
the children's own CANCELED states say what happened.
"""

from __future__ import annotations

import logging

import anyio

from a2a_actors.protocol._errors import TaskNotCancelableError, TaskNotFoundError
from a2a_actors.protocol._models import Task
from a2a_actors.protocol._state import TERMINAL_STATES
from orchestrator._correlation import CORRELATION_URI, ChildRecord, hop_record, traceparent
from orchestrator._targets import Targets

__all__ = ("cancel_orphans",)

logger = logging.getLogger("orchestrator")

_FINAL = frozenset(state.value for state in TERMINAL_STATES)


async def cancel_orphans(targets: Targets, task: Task, *, timeout: float) -> tuple[str, ...]:
    """Cancel the remote children ``task``'s hop record shows live (see the module
    docstring), all at once, each attempt bounded by ``timeout`` and retried once.

    Returns:
        The ids of the children this call cancelled (not those that had ended by
        themselves). Never raises an Exception: a child that cannot be reached is logged.
    """
    record = hop_record(task.metadata)
    if record is None:
        return ()
    live = [c for c in record.children if not c.local and c.url and c.state not in _FINAL]
    why = {CORRELATION_URI: {"canceledBy": record.agent, "parentTaskId": task.id}}
    headers = {"traceparent": traceparent(record.trace_id)} if record.trace_id else {}
    ended: list[str] = []

    async def cancel(child: ChildRecord) -> None:
        for attempt in (1, 2):
            try:
                with anyio.fail_after(timeout):
                    link = await targets.remote(child.url)
                    await link.cancel(child.task_id, why, headers)
            except (TaskNotCancelableError, TaskNotFoundError):
                return  # it ended (or went) by itself meanwhile
            except Exception:
                logger.warning(
                    "orphaned child %s (%s) of lost task %s: cancel failed (attempt %d)",
                    child.task_id,
                    child.url,
                    task.id,
                    attempt,
                    exc_info=True,
                )
                continue
            ended.append(child.task_id)
            return

    async with anyio.create_task_group() as tg:
        for child in live:
            tg.start_soon(cancel, child)
    return tuple(ended)
