"""Retention for the whole cluster: the SQLite store's rules, over NATS.

:func:`evict` applies the same two rules as
:meth:`~a2a_actors.stores._sqlite.SQLiteTaskStore.evict`, to every task of the cluster:
only **final** tasks (COMPLETED, FAILED, CANCELED, REJECTED) are ever deleted, oldest
first by ``(status timestamp, id)``:

* ``ttl``: a final task whose status timestamp is at or before ``now - ttl`` goes;
* ``max_terminal``: of the final tasks left, the oldest beyond this count go.

Deleting a task purges its key in the tasks bucket, its objects in the object store
(large content: :mod:`~a2a_actors.cluster._offload`) and, given them, its events and its
push configs. Each pass then lists the object store once and removes whatever is left of
the tasks it deleted, and, after a grace time (``object_grace``, 10 minutes), objects of
tasks that are not stored at all (a write that failed after its upload, a node lost
mid-write).
The purge leaves a small marker; :meth:`~a2a_actors.cluster._task_store.NatsTaskStore.compact`
removes old markers. Any node may run the passes (a pass is idempotent, and a task two
passes delete is simply gone).

:func:`run_retention` is the schedule a served node runs (``retention_ttl`` /
``retention_max`` in cluster mode, ``--retention-ttl`` / ``--retention-max`` with
``--cluster``): every node runs it, so retention goes on while any node serves; a pass
every half TTL (at most a minute apart; every 30 s with only ``max_terminal``), then
the delete markers older than a minute are compacted. A pass NATS fails is logged and
the next one retries.
"""

from __future__ import annotations

import datetime as _dt
import logging
from collections.abc import Iterable

import anyio
import anyio.abc

from a2a_actors.cluster._errors import ClusterUnavailableError
from a2a_actors.cluster._event_log import EventLog
from a2a_actors.cluster._push_configs import NatsPushConfigStore
from a2a_actors.cluster._task_store import OBJECT_GRACE_S, NatsTaskStore
from a2a_actors.protocol._models import utc_now
from a2a_actors.protocol._state import is_terminal
from a2a_actors.stores._base import StoredTask, sort_key

__all__ = ("evict", "run_retention", "select_evictions")

logger = logging.getLogger("a2a_actors.cluster")

#: Seconds between passes with only ``max_terminal`` (no TTL to pace them).
_COUNT_ONLY_INTERVAL_S = 30.0


def select_evictions(
    records: Iterable[StoredTask],
    *,
    now: _dt.datetime,
    ttl: float | None = None,
    max_terminal: int | None = None,
) -> list[str]:
    """Ids of the final tasks the rules remove, oldest first (see the module docstring).

    Raises:
        ValueError: ``ttl`` or ``max_terminal`` is negative.
    """
    if (ttl is not None and ttl < 0) or (max_terminal is not None and max_terminal < 0):
        raise ValueError("ttl and max_terminal must not be negative")
    final = sorted((r for r in records if is_terminal(r.task.status.state)), key=sort_key)
    expired = 0
    if ttl is not None:
        try:
            cutoff = now - _dt.timedelta(seconds=ttl)
        except OverflowError:  # before year 1: nothing is that old
            cutoff = None
        if cutoff is not None:
            while expired < len(final) and sort_key(final[expired])[0] <= cutoff:
                expired += 1
    keep_from = expired
    if max_terminal is not None:
        keep_from = max(expired, len(final) - max_terminal)
    return [record.task.id for record in final[:keep_from]]


async def evict(
    store: NatsTaskStore,
    *,
    now: _dt.datetime,
    ttl: float | None = None,
    max_terminal: int | None = None,
    log: EventLog | None = None,
    push: NatsPushConfigStore | None = None,
    object_grace: float = OBJECT_GRACE_S,
) -> tuple[str, ...]:
    """One retention pass over the cluster: delete what :func:`select_evictions` picks,
    with its objects, its events (given ``log``) and its push configs (given ``push``);
    then collect the object store (see the module docstring; ``object_grace`` seconds).

    Returns:
        The deleted task ids, oldest first.

    Raises:
        ClusterUnavailableError: NATS did not answer in time; the tasks deleted so far
            stay deleted, the next pass deletes the rest.
        ValueError: ``ttl`` or ``max_terminal`` is negative.
    """
    await store.wait_caught_up()
    victims = select_evictions(store.mirrored(), now=now, ttl=ttl, max_terminal=max_terminal)
    for task_id in victims:
        await store.delete(task_id)
        if log is not None:
            await log.forget(task_id)
        if push is not None:
            await push.forget(task_id)
    await store.collect_objects(victims, grace=object_grace)
    return tuple(victims)


async def run_retention(
    store: NatsTaskStore,
    *,
    ttl: float | None = None,
    max_terminal: int | None = None,
    log: EventLog | None = None,
    push: NatsPushConfigStore | None = None,
    compact_after: float = 60.0,
    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Run :func:`evict` on a schedule until cancelled (see the module docstring), then
    compact the delete markers older than ``compact_after`` seconds.

    Raises:
        ValueError: ``ttl`` or ``max_terminal`` is negative.
    """
    if (ttl is not None and ttl < 0) or (max_terminal is not None and max_terminal < 0):
        raise ValueError("ttl and max_terminal must not be negative")
    task_status.started()
    if ttl is None and max_terminal is None:
        return
    interval = max(min(ttl, 60.0) / 2, 0.05) if ttl is not None else _COUNT_ONLY_INTERVAL_S
    while True:
        await anyio.sleep(interval)
        try:
            gone = await evict(
                store, now=utc_now(), ttl=ttl, max_terminal=max_terminal, log=log, push=push
            )
            if gone:
                await store.compact(older_than=compact_after)
        except ClusterUnavailableError as exc:
            logger.warning("retention pass skipped, NATS unavailable: %s", exc)
