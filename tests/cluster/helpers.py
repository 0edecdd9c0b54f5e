"""What the cluster tests share: a real nats-server and connections to it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from a2a_actors.cluster import NatsServer
from a2a_actors.cluster.connection import ClusterConnection

__all__ = ("connect", "nats_server")


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
