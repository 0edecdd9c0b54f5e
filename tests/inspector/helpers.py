"""Servers with the inspector on, for the inspector's tests (real servers on 127.0.0.1:0)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
import httpx

from a2a_actors.protocol._sse import SSEEvent, SSEParser
from a2a_actors.server import ServerConfig, serve
from a2a_actors.server._observability.inspector import InspectorOptions
from tests.server.agents import scenario_agent

#: Two principals' API keys (the server maps each key to its own principal).
KEYS = {"key-alice": "alice", "key-bob": "bob"}
ALICE = {"X-API-Key": "key-alice"}
BOB = {"X-API-Key": "key-bob"}


@asynccontextmanager
async def inspected_server(target: object = scenario_agent, **config: Any) -> AsyncIterator[str]:
    """Serve ``target`` with the inspector on; yield the base URL."""
    options = config.pop("inspect", None) or InspectorOptions()
    server_config = ServerConfig(inspect=options, **config)
    async with anyio.create_task_group() as tg:
        url: str = await tg.start(partial(serve, target, config=server_config))
        try:
            yield url
        finally:
            tg.cancel_scope.cancel()


class EventReader:
    """The SSE events of a streaming response, one at a time."""

    def __init__(self, response: httpx.Response) -> None:
        self._chunks = response.aiter_bytes()
        self._parser = SSEParser()
        self._ready: list[SSEEvent] = []
        #: Every byte read so far (comments included).
        self.raw = b""

    async def next(self) -> SSEEvent:
        """The next event (comments are skipped)."""
        while not self._ready:
            await self.read_chunk()
        return self._ready.pop(0)

    async def read_chunk(self) -> None:
        """Read one more chunk of the stream."""
        chunk = await anext(self._chunks)
        self.raw += chunk
        self._ready.extend(self._parser.feed(chunk))
