"""A TCP proxy that cuts an event stream for real: it closes both connections after the
Nth SSE event of the first ``text/event-stream`` answer it relays.

Everything else passes through untouched (a later connection, the resumed stream, is never
cut). The cut lands right after the Nth event's blank line, in the middle of the HTTP
chunk it belongs to, as a proxy or a dropped link would leave it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from anyio.abc import SocketStream

__all__ = ("CuttingProxy", "cutting_proxy")

_SSE = b"text/event-stream"


class CuttingProxy:
    """State of one proxy (see the module docstring).

    Attributes:
        url: ``http://127.0.0.1:PORT`` of the proxy.
        cut: Set once a stream was cut.
        events_before_cut: How many events the cut stream relayed.
    """

    def __init__(self, upstream_port: int, events: int, refuse: int) -> None:
        self.url = ""
        self.cut = anyio.Event()
        self.events_before_cut = events
        self.refused = 0
        self._refuse = refuse
        self._upstream_port = upstream_port
        self._armed = True

    async def handle(self, client: SocketStream) -> None:
        """Relay one connection (called by the listener)."""
        if self.cut.is_set() and self.refused < self._refuse:
            self.refused += 1  # the way back is down for a while: closed unanswered
            await client.aclose()
            return
        server = await anyio.connect_tcp("127.0.0.1", self._upstream_port)
        async with client, server, anyio.create_task_group() as tg:
            tg.start_soon(self._pump_up, client, server)
            await self._pump_down(server, client)
            tg.cancel_scope.cancel()

    async def _pump_up(self, client: SocketStream, server: SocketStream) -> None:
        try:
            async for chunk in client:
                await server.send(chunk)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass

    async def _pump_down(self, server: SocketStream, client: SocketStream) -> None:
        seen = b""  # what this connection relayed, while it may still be cut
        try:
            async for chunk in server:
                if self._armed:
                    seen += chunk
                    end = self._cut_at(seen)
                    if end is not None:
                        self._armed = False
                        await client.send(chunk[: len(chunk) - (len(seen) - end)])
                        self.cut.set()
                        return  # both connections close: the stream is cut
                    if len(seen) > 1 << 20:
                        seen = b""
                await client.send(chunk)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass

    def _cut_at(self, seen: bytes) -> int | None:
        """Where the Nth event of an SSE answer ends in ``seen`` (None: not there yet)."""
        sse = seen.find(_SSE)  # the header of the stream's answer (keep-alive: not the first)
        head = seen.find(b"\r\n\r\n", sse) if sse >= 0 else -1
        if head < 0:
            return None
        at = head
        for _ in range(self.events_before_cut):
            at = seen.find(b"data: ", at)
            if at < 0:
                return None
            at = seen.find(b"\n\n", at)
            if at < 0:
                return None
            at += 2
        return at


@asynccontextmanager
async def cutting_proxy(
    upstream_url: str, events: int, *, refuse: int = 0
) -> AsyncIterator[CuttingProxy]:
    """A :class:`CuttingProxy` in front of ``upstream_url`` (``http://127.0.0.1:PORT``);
    after the cut it closes the next ``refuse`` connections unanswered."""
    port = int(upstream_url.rsplit(":", 1)[1].split("/", 1)[0])
    proxy = CuttingProxy(port, events, refuse)
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    async with listener, anyio.create_task_group() as tg:
        proxy.url = f"http://127.0.0.1:{listener.extra(anyio.abc.SocketAttribute.local_port)}"
        tg.start_soon(listener.serve, proxy.handle)
        yield proxy
        tg.cancel_scope.cancel()
