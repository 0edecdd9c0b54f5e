"""Settling a lost node's tasks: what a restart on the SQLite store does, for one node.

When a node's lease expires (:mod:`~a2a_actors.cluster._leases`), its actors are gone with
it — or, if it was only cut from NATS, it has fenced itself. Another node then calls
:func:`settle_lost_node`, which applies the orphan rule (:mod:`~..protocol.settling`) to
every live task *held* by the lost incarnation
(:class:`~a2a_actors.cluster._entries.Holder`), as
:meth:`~a2a_actors.stores._sqlite.SQLiteTaskStore.recover` does after a restart:

* a SUBMITTED or WORKING task becomes FAILED, with an agent-role status message saying the
  node was lost (also appended to the history) and its version increased by one; the
  status update is appended to the task's event log, so subscribers on every node receive
  the final event (preceded by the stored snapshot as a ``task`` event when the lost
  owner had stored a change it did not get to log: no gap);
* an INPUT_REQUIRED or AUTH_REQUIRED task is left as it is but released (nobody holds
  it): the client's next message resumes it on whichever node receives it
  (``ctx.resumed``), as after a restart;
* final tasks are not touched.

Every write takes the task over (``take_over``) with the store's optimistic concurrency,
so two nodes settling the same lost node at once, or a late write of the lost owner,
leave one outcome: a task is failed once, and its final event is published once.
``keep_epoch`` lets a node that came back with the same id settle only its previous
incarnations' tasks.
"""

from __future__ import annotations

import datetime as _dt

from a2a_actors.cluster._event_log import EventLog
from a2a_actors.cluster._task_store import NatsTaskStore
from a2a_actors.protocol._models import StreamResponse
from a2a_actors.protocol._settling import settle_orphan
from a2a_actors.protocol._state import INTERRUPTED_STATES
from a2a_actors.stores._base import RecoveryReport, StoredTask

__all__ = ("LOST_TEXT", "settle_lost_node")

#: The status message of the tasks :func:`settle_lost_node` fails (``{node}``: its id).
LOST_TEXT = "node {node} was lost; the task was interrupted"


async def settle_lost_node(
    store: NatsTaskStore,
    node_id: str,
    *,
    now: _dt.datetime,
    log: EventLog | None = None,
    epoch: int | None = None,
    keep_epoch: int | None = None,
) -> RecoveryReport:
    """Fail or release every live task held by ``node_id`` (see the module docstring).

    Args:
        store: The cluster's task store.
        node_id: The lost node.
        now: The failed tasks' status timestamp.
        log: Where the FAILED status updates are published (None: nowhere).
        epoch: Settle only this epoch of ``node_id`` (the lease that expired).
        keep_epoch: An epoch of ``node_id`` that is alive and keeps its tasks.

    Returns:
        The FAILED records this call wrote (a task another settler failed first is not
        among them), and the ids of the tasks it released for resumption (releasing is
        idempotent: two settlers at once may both report one).

    Raises:
        ClusterUnavailableError: NATS did not answer in time; calling again finishes
            the job (it only ever finds what is still held).
    """
    failed: list[StoredTask] = []
    resumable: list[str] = []
    text = LOST_TEXT.format(node=node_id)
    held = await store.held_by(node_id, epoch=epoch, except_epoch=keep_epoch)
    # Waiting tasks first: releasing them publishes nothing, so whoever sees a FAILED
    # event of this pass knows the node's waiting tasks are already released.
    held.sort(key=lambda entry: entry.record.task.status.state not in INTERRUPTED_STATES)
    for entry in held:
        record = entry.record
        settled = settle_orphan(record.task, record.version, now=now, reason=text)
        if settled is None:  # waiting for its client: released, resumable anywhere
            if await store.commit(record, holder=None, take_over=True) is record:
                resumable.append(record.task.id)
            continue
        new = StoredTask(settled.task, record.owner, settled.version, record.private)
        if await store.commit(new, holder=None, take_over=True) is not new:
            continue  # settled by another node, or finished by its owner first
        failed.append(new)
        if log is not None:
            await log.catch_up(record)  # the owner may have died before logging it
            update = StreamResponse(status_update=settled.update)
            await log.publish(record.task.id, [(new.version, update)])
    return RecoveryReport(failed=tuple(failed), resumable=tuple(resumable))
