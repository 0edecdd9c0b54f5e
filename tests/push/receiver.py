"""A real webhook receiver for push tests: HTTP/1.1 on 127.0.0.1, on whichever backend runs.

It records the method, target, headers and body of every request, in arrival order, and
answers each one as ``answer`` decides: a status (200 by default), optionally with headers
(a redirect), or after waiting for an event (a receiver that hangs until released). It also
counts TCP connections, so a test can show that nothing connected at all. Built on anyio and
h11 only, so it serves under trio and asyncio alike; keep-alive is supported.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
import h11
from anyio.streams.tls import TLSStream

__all__ = ("Answer", "Received", "Receiver", "receiver")


@dataclass(frozen=True, slots=True)
class Received:
    """One request as the receiver saw it (header names lower-case)."""

    method: str
    target: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass(frozen=True, slots=True)
class Answer:
    """How to answer one request."""

    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()


Answerer = Callable[[Received], Awaitable[Answer]]


async def _ok(_: Received) -> Answer:
    return Answer()


@dataclass(slots=True)
class Receiver:
    """The state of a running receiver; see :func:`receiver`."""

    port: int
    answer: Answerer = _ok
    requests: list[Received] = field(default_factory=list)
    connections: int = 0
    handshake_failures: int = 0
    _changed: anyio.Event = field(default_factory=anyio.Event)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def wait_until(self, condition: Callable[[list[Received]], bool]) -> None:
        """Wait until ``condition(requests)`` holds (re-checked at every request)."""
        while not condition(self.requests):
            await self._changed.wait()

    async def wait_for(self, count: int) -> None:
        """Wait until at least ``count`` requests arrived."""
        await self.wait_until(lambda requests: len(requests) >= count)

    async def wait_handshake_failures(self, count: int) -> None:
        """Wait until at least ``count`` TLS handshakes failed."""
        while self.handshake_failures < count:
            await self._changed.wait()

    def bodies(self) -> list[Any]:
        return [r.json() for r in self.requests]

    def _record(self, received: Received) -> None:
        self.requests.append(received)
        self._notify()

    def _refused(self) -> None:
        self.handshake_failures += 1
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def _serve(self, stream: anyio.abc.ByteStream) -> None:
        self.connections += 1
        conn = h11.Connection(h11.SERVER)
        async with stream:
            while True:
                request: h11.Request | None = None
                body = bytearray()
                while True:
                    event = conn.next_event()
                    if event is h11.NEED_DATA:
                        try:
                            data = await stream.receive(65536)
                        except (anyio.EndOfStream, anyio.BrokenResourceError):
                            data = b""
                        conn.receive_data(data)
                        continue
                    if isinstance(event, h11.Request):
                        request = event
                    elif isinstance(event, h11.Data):
                        body += event.data
                    elif isinstance(event, h11.EndOfMessage):
                        break
                    elif isinstance(event, h11.ConnectionClosed):
                        return
                assert request is not None
                received = Received(
                    request.method.decode(),
                    request.target.decode(),
                    {k.decode().lower(): v.decode() for k, v in request.headers},
                    bytes(body),
                )
                self._record(received)
                answer = await self.answer(received)
                headers = [("Content-Length", "0"), *answer.headers]
                data = conn.send(h11.Response(status_code=answer.status, headers=headers))
                data += conn.send(h11.EndOfMessage())
                await stream.send(data)
                if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                    return
                conn.start_next_cycle()


@asynccontextmanager
async def receiver(
    answer: Answerer = _ok, *, tls: ssl.SSLContext | None = None
) -> AsyncIterator[Receiver]:
    """A receiver listening on 127.0.0.1 (ephemeral port) for the block; HTTPS with ``tls``."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    state = Receiver(port, answer)

    async def handle(stream: anyio.abc.ByteStream) -> None:
        if tls is not None:
            plain = stream
            try:
                stream = await TLSStream.wrap(
                    plain, server_side=True, ssl_context=tls, standard_compatible=False
                )
            except (ssl.SSLError, OSError, anyio.BrokenResourceError, anyio.EndOfStream):
                await anyio.aclose_forcefully(plain)
                state._refused()  # the client refused the certificate (or went away)
                return
            except BaseException:  # cancelled mid-handshake: the receiver is closing
                await anyio.aclose_forcefully(plain)
                raise
        # A TLS handshake, or a sender that went away: counted (connections), not recorded.
        with suppress(
            h11.RemoteProtocolError, anyio.BrokenResourceError, anyio.ClosedResourceError
        ):
            await state._serve(stream)

    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, handle)
        try:
            yield state
        finally:
            tg.cancel_scope.cancel()
