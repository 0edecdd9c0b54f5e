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
:class:`~a2a_actors.cluster._errors.ClusterUnavailableError` — the server busy/unavailable
error of our hierarchy, so a client gets JSON-RPC -32050 (HTTP 429, ``Retry-After``)
instead of a hang. The one exception is a message larger than the server's
``max_payload``: it would be refused again, so it is
:class:`~a2a_actors.protocol._errors.PayloadTooLargeError` (-32052, HTTP 413) naming the
limit, which nothing retries (writers move large content to the object store first:
:mod:`~a2a_actors.cluster._offload`).

While the connection is known to be down, an operation fails at once:
nats-py's buffering of outgoing messages during a reconnect is turned off, so a write we
reported as failed is not sent later behind the caller's back when NATS comes back (a
write whose answer was lost in flight may still have been applied: retrying the same
record is safe). Once the connection is back, the next operation simply works.

JetStream writes on the hot path (a task's snapshots, its events) go through
:meth:`ClusterConnection.publish_acked`: a plain publish whose reply subject is one of this
connection's acknowledgement inbox, subscribed once when the connection opens, so the
server has the subscription before any write can be acknowledged to it. Many writes can
be in flight at once, each acknowledged to its own future, without a request's per-call
machinery. (nats-py's ``publish_async`` subscribes its inbox lazily, on the first call,
without waiting for the server: an acknowledgement could come back before the
subscription and be lost, the write then timing out although it was stored.)

Only the cluster's other modules import this one; it imports nats-py, so importing it
needs the ``cluster`` extra.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import logging
import random
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager

import anyio
import msgspec
import nats.errors
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.js import JetStreamContext
from nats.js.api import Header
from nats.js.errors import APIError

from a2a_actors.cluster._errors import ClusterUnavailableError
from a2a_actors.cluster._names import ClusterNames
from a2a_actors.protocol._errors import PayloadTooLargeError

__all__ = ("ClusterConnection", "ConnectionStatistics", "acked_sequence", "close_subscription")

logger = logging.getLogger("a2a_actors.cluster")
#: The status of a reply NATS sends when no subscriber (here: no stream) took a message.
_NO_RESPONDERS = "503"


class _ApiError(msgspec.Struct):
    code: int = 0
    err_code: int = 0
    description: str = ""


class _PubAck(msgspec.Struct):
    seq: int = 0
    error: _ApiError | None = None


_PUB_ACK = msgspec.json.Decoder(_PubAck)


def acked_sequence(reply: Msg) -> int:
    """The stream sequence a JetStream acknowledgement gives.

    Raises:
        nats.js.errors.APIError: JetStream refused the write (its ``err_code`` says why),
            or no stream took the subject (``code`` 503).
    """
    if reply.headers and reply.headers.get(Header.STATUS.value) == _NO_RESPONDERS:
        raise APIError(code=503, description="no stream took the subject")
    try:
        ack = _PUB_ACK.decode(reply.data)
    except msgspec.DecodeError as exc:
        raise APIError(code=500, description=f"not an acknowledgement: {exc}") from exc
    if ack.error is not None:
        error = ack.error
        raise APIError(code=error.code, err_code=error.err_code, description=error.description)
    return ack.seq


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


class _AckInbox:
    """The futures of a connection's acknowledged publishes, by reply token."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.subject = f"{prefix}*"
        self._tokens = itertools.count()
        self._futures: dict[str, asyncio.Future[Msg]] = {}

    def expect(self) -> tuple[str, asyncio.Future[Msg]]:
        """A new reply token and the future its reply completes (forgotten once done)."""
        token = str(next(self._tokens))
        future: asyncio.Future[Msg] = asyncio.get_running_loop().create_future()
        self._futures[token] = future
        future.add_done_callback(lambda _: self._futures.pop(token, None))
        return token, future

    async def deliver(self, msg: Msg) -> None:
        """The inbox subscription's callback: complete the reply's future."""
        future = self._futures.get(msg.subject[len(self.prefix) :])
        if future is not None and not future.done():
            future.set_result(msg)


class ClusterConnection:
    """One NATS connection and its JetStream context (see the module docstring).

    Attributes:
        names: The cluster's bucket, stream and subject names.
        timeout: Seconds each operation may take.
    """

    def __init__(
        self, client: Client, names: ClusterNames, *, timeout: float, acks: _AckInbox
    ) -> None:
        """Wrap a connected client; use :meth:`open` instead, which also closes it."""
        self.names = names
        self.timeout = timeout
        self._client = client
        self._js = client.jetstream(timeout=timeout)
        self._disconnects = 0
        self._reconnects = 0
        self._unavailable = 0
        self._back = anyio.Event()
        self._acks = acks

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
            cluster: The cluster's name (see :func:`~a2a_actors.cluster._names.cluster_token`).
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
        acks = _AckInbox(f"{client.new_inbox()}.")
        conn = cls(client, ClusterNames.for_cluster(cluster), timeout=timeout, acks=acks)
        try:
            with conn.bounded("subscribe the acknowledgement inbox"):
                await client.subscribe(acks.subject, cb=acks.deliver)
                await client.flush()  # the server has it before anything writes
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

    async def publish_acked(
        self, subject: str, payload: bytes, headers: dict[str, str]
    ) -> asyncio.Future[Msg]:
        """Publish to a JetStream subject; the future gets JetStream's reply (read it
        with :func:`acked_sequence`). Await the future within :meth:`bounded`; cancel it
        when giving up on it (it never completes if the write or its reply is lost).

        Raises:
            nats.errors.Error: The connection is closed or cannot send.
        """
        acks = self._acks
        token, future = acks.expect()
        try:
            await self._client.publish(subject, payload, reply=acks.prefix + token, headers=headers)
        except BaseException:
            future.cancel()
            raise
        return future

    @property
    def max_payload(self) -> int:
        """The largest message the server accepts, headers included (its ``max_payload``)."""
        return self._client.max_payload

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
            PayloadTooLargeError: A message was larger than the server's ``max_payload``
                (not retryable: the same message is refused again).
        """
        bound = self.timeout if timeout is None else timeout
        try:
            with anyio.fail_after(bound):
                yield
        except TimeoutError as exc:
            self._unavailable += 1
            raise ClusterUnavailableError(f"NATS did not answer within {bound} s ({what})") from exc
        except nats.errors.MaxPayloadError as exc:  # the same message fails again: no retry
            raise PayloadTooLargeError(
                f"NATS refused a message larger than its max_payload of {self.max_payload} "
                f"bytes ({what})"
            ) from exc
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
