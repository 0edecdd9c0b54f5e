"""What the cluster tests share: a real nats-server, connections to it, and one node's
task store and event log over one connection."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from a2a_actors.cluster import NatsServer
from a2a_actors.cluster._connection import ClusterConnection
from a2a_actors.cluster._entries import Holder
from a2a_actors.cluster._event_log import EventLog
from a2a_actors.cluster._task_store import NatsTaskStore
from a2a_actors.protocol import TaskState, TaskStatus
from a2a_actors.protocol._models import StreamResponse, TaskStatusUpdateEvent

__all__ = ("Node", "connect", "nats_server", "one_node", "update")

_T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


@asynccontextmanager
async def nats_server(tmp_path: Path) -> AsyncIterator[NatsServer]:
    """A nats-server with JetStream on a free 127.0.0.1 port, its store under ``tmp_path``;
    stopped by its PID on leaving, whatever happened."""
    async with NatsServer.running(tmp_path / "nats") as server:
        yield server


@asynccontextmanager
async def connect(
    server: NatsServer, *, cluster: str = "test", timeout: float = 2.0, name: str | None = None
) -> AsyncIterator[ClusterConnection]:
    """A node's connection to ``server`` (a short reconnect wait, for restart tests)."""
    async with ClusterConnection.open(
        [server.url], cluster=cluster, name=name, timeout=timeout, reconnect_wait=0.1
    ) as conn:
        yield conn


@dataclasses.dataclass
class Node:
    """A nats-server, one connection to it, the task store and the event log over it."""

    server: NatsServer
    conn: ClusterConnection
    store: NatsTaskStore
    log: EventLog


@asynccontextmanager
async def one_node(
    tmp_path: Path, *, timeout: float = 2.0, holder: Holder | None = None
) -> AsyncIterator[Node]:
    """A :class:`Node` for the block (``timeout``: the connection's bound; ``holder``: the
    store's)."""
    async with (
        nats_server(tmp_path) as server,
        connect(server, timeout=timeout) as conn,
        NatsTaskStore.open(conn, holder=holder) as store,
    ):
        yield Node(server, conn, store, await EventLog.open(conn))


def update(task_id: str, version: int, state: TaskState = TaskState.WORKING) -> StreamResponse:
    """A status update of ``task_id`` (context ``c``) stamped ``version`` seconds after a
    fixed instant."""
    status = TaskStatus(state=state, timestamp=_T0 + dt.timedelta(seconds=version))
    return StreamResponse(
        status_update=TaskStatusUpdateEvent(task_id=task_id, context_id="c", status=status)
    )
