"""Framework agents served for real and called with the official SDK's client.

:func:`sdk_agent` serves an agent on Hypercorn (127.0.0.1, port 0) and yields a
:class:`Caller`: the official SDK client (JSON-RPC) with helpers that send a message and
collect every event (streaming) or the final task (blocking). The functions below read what
the bridges produce: the ``answer`` artifact's chunks, the tool DataParts of WORKING
updates, the question of an INPUT_REQUIRED task, the task metadata. :func:`send_once` and
:func:`on_sqlite` serve an agent for one message or over an SQLite store (a restart each
time); :func:`follow_up` answers a task waiting for input; :func:`hold` is an await that
never ends, for the cancel tests.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import anyio
import httpx
from a2a.types.a2a_pb2 import (
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
)
from google.protobuf.json_format import MessageToDict
from google.protobuf.struct_pb2 import Value

from a2a_actors.server import ServerConfig
from a2a_actors.stores import MemoryTaskStore, TaskStore
from a2a_actors.stores._sqlite import SQLiteTaskStore
from tests.interop.sdk_server import sdk_client
from tests.server.helpers import served

__all__ = [
    "Caller",
    "Chunk",
    "answer_chunks",
    "answer_text",
    "data_of",
    "data_part",
    "follow_up",
    "hold",
    "metadata_of",
    "on_sqlite",
    "question_of",
    "sdk_agent",
    "send_once",
    "states",
    "tool_parts",
]

TIMEOUT = 20.0
SDK_WARNINGS = (
    r"ignore:Async generator '(a2a\.client|httpx|httpcore)\..*' was garbage collected"
    r":ResourceWarning"
)


def data_of(value: Value) -> Any:
    """A protobuf ``Value`` as Python."""
    return MessageToDict(value)


def data_part(value: dict[str, Any]) -> Part:
    """A DataPart of ``value``."""
    part = Value()
    part.struct_value.update(value)
    return Part(data=part)


def follow_up(task: Task, reply: str | dict[str, Any]) -> dict[str, Any]:
    """The options of the message that answers ``task`` (waiting for input) with ``reply``:
    its text, or (a dict) its DataPart; for :meth:`Caller.send` and :meth:`Caller.stream`."""
    options: dict[str, Any] = {"task_id": task.id, "context_id": task.context_id}
    if isinstance(reply, dict):
        return options | {"parts": [data_part(reply)]}
    return options | {"text": reply}


class Settable(Protocol):
    def set(self) -> None: ...


def hold(started: Settable, stopped: Settable) -> Callable[[], Awaitable[None]]:
    """An await that never ends: ``started`` when it begins, ``stopped`` when cancelled."""

    async def forever() -> None:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            stopped.set()

    return forever


@dataclass(frozen=True, slots=True)
class Chunk:
    """One artifact update of the answer."""

    text: str
    append: bool
    last_chunk: bool


def answer_chunks(events: Sequence[StreamResponse]) -> list[Chunk]:
    """The answer artifact's updates, in order."""
    chunks = []
    for event in events:
        if event.HasField("artifact_update"):
            update = event.artifact_update
            text = "".join(p.text for p in update.artifact.parts if p.HasField("text"))
            chunks.append(Chunk(text, update.append, update.last_chunk))
    return chunks


def answer_text(task: Task) -> str:
    """The text of the task's ``answer`` artifact."""
    return "".join(
        p.text for a in task.artifacts if a.name == "answer" for p in a.parts if p.HasField("text")
    )


def tool_parts(events: Sequence[StreamResponse]) -> list[dict[str, Any]]:
    """The DataParts of the WORKING status updates (tool calls and results), in order."""
    found: list[dict[str, Any]] = []
    for event in events:
        if event.HasField("status_update"):
            status = event.status_update.status
            if status.state == TaskState.TASK_STATE_WORKING and status.HasField("message"):
                found.extend(data_of(p.data) for p in status.message.parts if p.HasField("data"))
    return found


def states(events: Sequence[StreamResponse]) -> list[int]:
    """Every task state the events report, in order (the Task snapshot's included)."""
    found: list[int] = []
    for event in events:
        if event.HasField("task"):
            found.append(event.task.status.state)
        elif event.HasField("status_update"):
            found.append(event.status_update.status.state)
    return found


def question_of(task: Task) -> tuple[str, list[Any]]:
    """An INPUT_REQUIRED task's question: its text, and its DataParts."""
    message = task.status.message
    text = "".join(p.text for p in message.parts if p.HasField("text"))
    return text, [data_of(p.data) for p in message.parts if p.HasField("data")]


def metadata_of(task: Task) -> dict[str, Any]:
    """The task's metadata as Python."""
    return MessageToDict(task.metadata)


class Caller:
    """The official SDK client of one served agent, with the helpers of these tests."""

    def __init__(self, client: Any, http: httpx.AsyncClient, url: str, store: TaskStore) -> None:
        self.client = client
        self.http = http
        self.url = url
        self.store = store

    async def private(self, task_id: str) -> dict[str, Any]:
        """What the agent keeps with the task unseen by clients (read from the store)."""
        record = await self.store.get(task_id)
        assert record is not None, task_id
        return record.private or {}

    @staticmethod
    def request(
        text: str = "",
        *,
        task_id: str = "",
        context_id: str = "",
        parts: Sequence[Part] = (),
        blocking: bool = True,
    ) -> SendMessageRequest:
        message = Message(
            message_id=uuid.uuid4().hex,
            role=Role.ROLE_USER,
            parts=[*([Part(text=text)] if text else []), *parts],
            task_id=task_id,
            context_id=context_id,
        )
        return SendMessageRequest(
            message=message,
            configuration=SendMessageConfiguration(return_immediately=not blocking),
        )

    async def stream(self, text: str = "", **options: Any) -> list[StreamResponse]:
        """SendStreamingMessage; every event until the stream ends."""
        return [e async for e in self.client.send_message(self.request(text, **options))]

    async def send(self, text: str = "", **options: Any) -> Task:
        """A blocking SendMessage over a non-streaming client; the task it returns."""
        client = await sdk_client(
            self.url, binding="JSONRPC", httpx_client=self.http, streaming=False
        )
        try:
            async for event in client.send_message(self.request(text, **options)):
                assert event.HasField("task"), event
                return event.task
        finally:
            await client.close()
        raise AssertionError("no answer")

    async def get(self, task_id: str) -> Task:
        task: Task = await self.client.get_task(GetTaskRequest(id=task_id))
        return task


@asynccontextmanager
async def sdk_agent(agent: object, config: ServerConfig | None = None) -> AsyncIterator[Caller]:
    """``agent`` served on 127.0.0.1 and the official SDK client (JSON-RPC, streaming) to it;
    its task store is the one ``config`` names, else a memory store of its own."""
    config = config or ServerConfig()
    store = config.supervisor_options.get("store")
    if store is None:
        store = MemoryTaskStore()
        config = config.replace(supervisor_options={**config.supervisor_options, "store": store})
    async with served(agent, config) as url, httpx.AsyncClient(timeout=TIMEOUT) as http:
        client = await sdk_client(url, binding="JSONRPC", httpx_client=http)
        try:
            yield Caller(client, http, url, store)
        finally:
            await client.close()


async def send_once(agent: object, text: str = "", **options: Any) -> Task:
    """``agent`` served for one blocking SendMessage (``text``, ``options`` as for
    :meth:`Caller.send`); the task it returns."""
    with anyio.fail_after(TIMEOUT):
        async with sdk_agent(agent) as caller:
            return await caller.send(text, **options)


@asynccontextmanager
async def on_sqlite(
    agent: object, path: Path, *, keep_interrupted: bool = False
) -> AsyncIterator[Caller]:
    """:func:`sdk_agent` over the SQLite task store at ``path``: a server of its own, so that
    each use restarts the last; ``keep_interrupted`` leaves the tasks waiting for input as
    they are stored when it stops."""
    async with SQLiteTaskStore.open(path) as store:
        options: dict[str, Any] = {"store": store}
        if keep_interrupted:
            options["keep_interrupted"] = True
        async with sdk_agent(agent, ServerConfig(supervisor_options=options)) as caller:
            yield caller
