"""A node's connection to NATS: reconnecting by itself, every operation bounded in time.

Theory of operation
-------------------
:meth:`ClusterConnection.open` connects to any of the given URLs (a NATS cluster's
servers, in random order) and keeps the connection for the block. When the server goes
away, nats-py reconnects by itself, forever, every ``reconnect_wait`` seconds, and replays
the connection's subscriptions; JetStream consumers built on it (ordered consumers) resume
from the last sequence they delivered.

Nothing here ever waits on NATS without a bound. Every operation of the cluster code runs
inside :meth:`ClusterConnection.bounded`, which gives it ``timeout`` seconds and turns a
timeout, a closed connection or any nats-py failure into
:class:`~a2a_actors.cluster.errors.ClusterUnavailableError` — the server busy/unavailable
error of our hierarchy, so a client gets JSON-RPC -32050 (HTTP 429, ``Retry-After``)
instead of a hang. While the connection is known to be down, an operation fails at once:
nats-py's buffering of outgoing messages during a reconnect is turned off, so a write we
reported as failed is not sent later behind the caller's back when NATS comes back (a
write whose answer was lost in flight may still have been applied: retrying the same
record is safe). Once the connection is back, the next operation simply works.

Only the cluster's other modules import this one; it imports nats-py, so importing it
needs the ``cluster`` extra.
"""

from __future__ import annotations

import dataclasses
import logging
import random
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager

import anyio
import nats.errors
from nats.aio.client import Client
from nats.aio.subscription import Subscription
from nats.js import JetStreamContext

from .errors import ClusterUnavailableError
from .names import ClusterNames

__all__ = ("ClusterConnection", "ConnectionStatistics", "close_subscription")

logger = logging.getLogger("a2a_actors.cluster")


@dataclasses.dataclass(frozen=True, slots=True)
class ConnectionStatistics:
    """The connection at one instant.

    Attributes:
        connected: Whether it is connected now.
        disconnects: Times it lost its server since it opened.
        reconnects: Times it reconnected since it opened.
        unavailable: Operations that failed with ClusterUnavailableError.
    """

    connected: bool
    disconnects: int
    reconnects: int
    unavailable: int


class ClusterConnection:
    """One NATS connection and its JetStream context (see the module docstring).

    Attributes:
        names: The cluster's bucket, stream and subject names.
        timeout: Seconds each operation may take.
    """

    def __init__(self, client: Client, names: ClusterNames, *, timeout: float) -> None:
        """Wrap a connected client; use :meth:`open` instead, which also closes it."""
        self.names = names
        self.timeout = timeout
        self._client = client
        self._js = client.jetstream(timeout=timeout)
        self._disconnects = 0
        self._reconnects = 0
        self._unavailable = 0
        self._back = anyio.Event()

    @classmethod
    @asynccontextmanager
    async def open(
        cls,
        urls: Sequence[str],
        *,
        cluster: str,
        name: str | None = None,
        timeout: float = 2.0,
        connect_timeout: float = 5.0,
        reconnect_wait: float = 0.5,
    ) -> AsyncIterator[ClusterConnection]:
        """Connect to NATS at any of ``urls`` for the block; close the connection after.

        Args:
            urls: ``nats://host:port`` URLs of one NATS server or cluster.
            cluster: The cluster's name (see :func:`~a2a_actors.cluster.names.cluster_token`).
            name: The connection's name in NATS monitoring (the node id, say).
            timeout: Seconds every later operation may take.
            connect_timeout: Seconds to get the first connection.
            reconnect_wait: Seconds between reconnect attempts to one server.

        Raises:
            ClusterUnavailableError: No server accepted a connection in
                ``connect_timeout`` seconds.
            ValueError: No URL, or a bound that is not positive.
        """
        if not urls:
            raise ValueError("at least one NATS URL is needed")
        if min(timeout, connect_timeout, reconnect_wait) <= 0:
            raise ValueError("timeouts must be positive")
        client = Client()
        conn: ClusterConnection | None = None

        async def disconnected() -> None:
            if client.is_closed:
                return  # our own close
            if conn is not None:
                conn._disconnects += 1
            logger.warning("NATS connection lost; reconnecting")

        async def reconnected() -> None:
            if conn is not None:
                conn._reconnects += 1
                conn._back.set()
            logger.warning("NATS connection back (%s)", client.connected_url)

        async def error(exc: Exception) -> None:
            logger.debug("NATS: %r", exc)

        servers = list(urls)
        random.shuffle(servers)
        try:
            with anyio.fail_after(connect_timeout):
                await client.connect(
                    servers=servers,
                    name=name,
                    allow_reconnect=True,
                    max_reconnect_attempts=-1,
                    reconnect_time_wait=reconnect_wait,  # type: ignore[arg-type]
                    connect_timeout=min(connect_timeout, 2.0),  # type: ignore[arg-type]
                    dont_randomize=True,
                    pending_size=0,  # no buffering while disconnected (module docstring)
                    disconnected_cb=disconnected,
                    reconnected_cb=reconnected,
                    error_cb=error,
                )
        except (TimeoutError, OSError, nats.errors.Error) as exc:
            with anyio.CancelScope(shield=True):
                await _close(client, connect_timeout)
            raise ClusterUnavailableError(
                f"NATS unreachable at {', '.join(urls)} within {connect_timeout} s"
            ) from exc
        conn = cls(client, ClusterNames.for_cluster(cluster), timeout=timeout)
        try:
            yield conn
        finally:
            with anyio.CancelScope(shield=True):
                await _close(client, connect_timeout)

    @property
    def client(self) -> Client:
        """The nats-py client (core NATS: publish, subscribe, request)."""
        return self._client

    @property
    def js(self) -> JetStreamContext:
        """The JetStream context (streams, consumers, KV)."""
        return self._js

    @property
    def connected(self) -> bool:
        """Whether the connection is up now."""
        return self._client.is_connected

    async def wait_connected(self) -> None:
        """Return once the connection is up (at once if it is); no bound of its own."""
        while not self.connected:
            await self._back.wait()
            self._back = anyio.Event()

    @contextmanager
    def bounded(self, what: str, *, timeout: float | None = None) -> Iterator[None]:
        """Run the block within :attr:`timeout`; NATS failures become ClusterUnavailableError.

        Args:
            what: What the block does, for the error message ("save task t1").
            timeout: Seconds instead of :attr:`timeout`.

        Raises:
            ClusterUnavailableError: The block timed out, or nats-py failed (closed or
                reconnecting connection, no JetStream, a server error).
        """
        bound = self.timeout if timeout is None else timeout
        try:
            with anyio.fail_after(bound):
                yield
        except TimeoutError as exc:
            self._unavailable += 1
            raise ClusterUnavailableError(f"NATS did not answer within {bound} s ({what})") from exc
        except (nats.errors.Error, OSError) as exc:  # OSError: the socket broke mid-write
            self._unavailable += 1
            raise ClusterUnavailableError(f"NATS failed ({what}): {exc!r}") from exc

    def statistics(self) -> ConnectionStatistics:
        """A frozen record of the connection's state and counters."""
        return ConnectionStatistics(
            connected=self.connected,
            disconnects=self._disconnects,
            reconnects=self._reconnects,
            unavailable=self._unavailable,
        )


async def _close(client: Client, timeout: float) -> None:
    # Closing flushes what is pending; on a connection that is already broken that fails,
    # and there is nothing left to save.
    with anyio.move_on_after(timeout):
        try:
            await client.close()
        except (OSError, nats.errors.Error) as exc:
            logger.debug("NATS: closing a broken connection: %r", exc)


async def close_subscription(client: Client, sub: Subscription) -> None:
    """Unsubscribe ``sub`` of ``client`` and wait until the server has processed it
    (shielded, at most 5 s); a closed connection is fine."""
    with anyio.CancelScope(shield=True), anyio.move_on_after(5):
        try:
            await sub.unsubscribe()
            await client.flush()
        except (nats.errors.Error, OSError):
            return  # the connection is closed or gone: the server dropped it already
