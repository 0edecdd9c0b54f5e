"""A stream cut for real (a proxy closes the connection after N events) and resumed with
``Last-Event-ID``: every later event exactly once, on both bindings and both backends.

Our client resumes by itself (``resubscribe=True``); the other tests resume by hand with
``client.subscribe(task_id, last_event_id=...)`` to pin down what the server answers: the
events after the id when they are still held, the snapshot first when they are not, an
empty stream after a task's final event, and a clear error for an id it never sent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import httpx
import pytest

from a2a_actors.client import A2AClient, EventStream, StreamInterruptedError
from a2a_actors.protocol._models import StreamResponse, Task, TaskState
from a2a_actors.runtime import ResumeOptions
from a2a_actors.server import ServerConfig

from ..server.helpers import HTTPX_EARLY_EXIT, JSON_HEADERS, envelope, served
from .agents import Chunks
from .proxy import cutting_proxy

pytestmark = [pytest.mark.anyio, HTTPX_EARLY_EXIT]

TIMEOUT = 20.0
BINDINGS = pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])


@asynccontextmanager
async def client_of(url: str, binding: str, **options: object) -> AsyncIterator[A2AClient]:
    client = await A2AClient.connect(url, bindings=(binding,), card_cache=None, **options)  # type: ignore[arg-type]
    async with client:
        yield client


def chunk_texts(events: list[tuple[int, StreamResponse]]) -> str:
    return "".join(
        part.text or ""
        for _, event in events
        if event.artifact_update is not None
        for part in event.artifact_update.artifact.parts
    )


def state_of(event: StreamResponse) -> TaskState | None:
    if event.task is not None:
        return event.task.status.state
    if event.status_update is not None:
        return event.status_update.status.state
    return None


async def collect(stream: EventStream, seen: list[tuple[int, StreamResponse]]) -> None:
    async for event in stream:
        assert stream.last_event_id is not None
        seen.append((int(stream.last_event_id), event))


def assert_once_in_order(seen: list[tuple[int, StreamResponse]]) -> None:
    """Versions strictly increasing by one: no gap, no duplicate."""
    versions = [version for version, _ in seen]
    assert versions == list(range(versions[0], versions[0] + len(versions))), versions


@BINDINGS
async def test_a_cut_stream_resumes_with_every_later_event_once(binding: str) -> None:
    chunks = Chunks()  # 4 chunks, the gate, 4 more: the cut falls before the gate opens
    with anyio.fail_after(TIMEOUT):
        async with (
            served(chunks.agent) as url,
            cutting_proxy(url, events=3) as proxy,
            client_of(proxy.url, binding, resubscribe=True) as client,
        ):
            seen: list[tuple[int, StreamResponse]] = []
            async with client.stream_message("8 chunks") as stream:
                async for event in stream:
                    assert stream.last_event_id is not None
                    seen.append((int(stream.last_event_id), event))
                    if proxy.cut.is_set() and len(seen) == 5:
                        chunks.gate.set()  # the rest comes live, after the replay
            assert proxy.cut.is_set()
            assert stream.resubscribes == 1
    assert_once_in_order(seen)
    assert [event.task is not None for _, event in seen].count(True) == 1  # no snapshot
    assert seen[0][1].task is not None
    assert chunk_texts(seen) == "".join(f"{i};" for i in range(8))
    assert state_of(seen[-1][1]) is TaskState.COMPLETED
    assert stream.task is not None
    assert stream.task.artifacts[0].parts[-1].text == "7;"


@BINDINGS
async def test_a_resume_that_cannot_connect_is_retried_within_the_budget(binding: str) -> None:
    chunks = Chunks(gated=False)
    with anyio.fail_after(TIMEOUT):
        async with (
            served(chunks.agent) as url,
            cutting_proxy(url, events=2, refuse=1) as proxy,
            client_of(proxy.url, binding, resubscribe=True) as client,
        ):
            seen: list[tuple[int, StreamResponse]] = []
            async with client.stream_message("4 chunks") as stream:
                await collect(stream, seen)
            assert (proxy.refused, stream.resubscribes) == (1, 2)
            async with (
                cutting_proxy(url, events=2, refuse=5) as down,
                client_of(down.url, binding, resubscribe=True, max_resubscribes=2) as other,
            ):
                with pytest.raises(StreamInterruptedError) as interrupted:
                    async with other.stream_message("4 chunks") as cut:
                        await collect(cut, [])
            assert (down.refused, cut.resubscribes) == (2, 2)
            assert interrupted.value.task_id == cut.task_id != ""
    assert_once_in_order(seen)
    assert chunk_texts(seen) == "0;1;2;3;"
    assert state_of(seen[-1][1]) is TaskState.COMPLETED


@BINDINGS
async def test_a_stream_cut_before_the_task_ended_resumes_after_it_ended(binding: str) -> None:
    chunks = Chunks(gated=False)
    with anyio.fail_after(TIMEOUT):
        async with (
            served(chunks.agent) as url,
            cutting_proxy(url, events=2) as proxy,
            client_of(proxy.url, binding) as client,
        ):
            seen: list[tuple[int, StreamResponse]] = []
            with pytest.raises(StreamInterruptedError):
                async with client.stream_message("6 chunks") as stream:
                    await collect(stream, seen)
            assert len(seen) == 2
            task_id, last_id = stream.task_id, stream.last_event_id
            await chunks.finished.wait()  # the task is over: its last events are kept
            async with client.subscribe(task_id, last_event_id=last_id) as resumed:
                await collect(resumed, seen)
    assert_once_in_order(seen)
    assert [event.task is not None for _, event in seen].count(True) == 1
    assert chunk_texts(seen) == "".join(f"{i};" for i in range(6))
    assert state_of(seen[-1][1]) is TaskState.COMPLETED


@BINDINGS
async def test_resuming_after_the_final_event_ends_at_once(binding: str) -> None:
    chunks = Chunks(gated=False)
    with anyio.fail_after(TIMEOUT):
        async with served(chunks.agent) as url, client_of(url, binding) as client:
            seen: list[tuple[int, StreamResponse]] = []
            async with client.stream_message("2 chunks") as stream:
                await collect(stream, seen)
            assert state_of(seen[-1][1]) is TaskState.COMPLETED
            async with client.subscribe(stream.task_id, last_event_id=seen[-1][0]) as again:
                assert [event async for event in again] == []
            assert again.done
            assert again.task is not None
            assert again.task.status.state is TaskState.COMPLETED


@BINDINGS
async def test_an_id_older_than_the_window_starts_with_the_snapshot(binding: str) -> None:
    chunks = Chunks()
    config = ServerConfig(resume=ResumeOptions(window=2))
    with anyio.fail_after(TIMEOUT):
        async with served(chunks.agent, config) as url, client_of(url, binding) as client:
            started = await client.send_message("12 chunks", return_immediately=True)
            assert isinstance(started, Task)
            await chunks.waiting.wait()  # 7 events published, the last 2 held
            seen: list[tuple[int, StreamResponse]] = []
            async with client.subscribe(started.id, last_event_id=1) as resumed:
                async for event in resumed:
                    assert resumed.last_event_id is not None
                    seen.append((int(resumed.last_event_id), event))
                    if len(seen) == 1:
                        chunks.gate.set()
    assert seen[0][1].task is not None  # the snapshot, as without Last-Event-ID
    assert_once_in_order(seen)
    task = seen[0][1].task
    assert task is not None
    texts = "".join(part.text or "" for part in task.artifacts[0].parts) + chunk_texts(seen)
    assert texts == "".join(f"{i};" for i in range(12))
    assert state_of(seen[-1][1]) is TaskState.COMPLETED


@BINDINGS
async def test_resuming_at_the_current_version_sends_no_snapshot(binding: str) -> None:
    chunks = Chunks()
    with anyio.fail_after(TIMEOUT):
        async with served(chunks.agent) as url, client_of(url, binding) as client:
            started = await client.send_message("4 chunks", return_immediately=True)
            assert isinstance(started, Task)
            await chunks.waiting.wait()
            async with client.subscribe(started.id) as probe:
                async for _ in probe:
                    break
            assert probe.last_event_id is not None
            current = int(probe.last_event_id)
            seen: list[tuple[int, StreamResponse]] = []
            chunks.gate.set()  # (the answer starts with its first event)
            async with client.subscribe(started.id, last_event_id=current) as resumed:
                await collect(resumed, seen)
    assert seen[0][0] == current + 1
    assert all(event.task is None for _, event in seen)
    assert_once_in_order(seen)
    assert chunk_texts(seen) == "2;3;"


@BINDINGS
async def test_a_parked_task_resumes_up_to_its_question_and_ends(binding: str) -> None:
    chunks = Chunks(gated=False)
    with anyio.fail_after(TIMEOUT):
        async with (
            served(chunks.agent) as url,
            cutting_proxy(url, events=2) as proxy,
            client_of(proxy.url, binding, resubscribe=True) as client,
        ):
            seen: list[tuple[int, StreamResponse]] = []
            async with client.stream_message("4 chunks, ask") as stream:
                await collect(stream, seen)
            assert proxy.cut.is_set()
            assert stream.resubscribes == 1
            assert state_of(seen[-1][1]) is TaskState.INPUT_REQUIRED
            assert stream.task is not None
            context_id = stream.task.context_id
            async with client.stream_message(
                "x", task_id=stream.task_id, context_id=context_id
            ) as more:
                rest = [event async for event in more]
    assert_once_in_order(seen)
    assert chunk_texts(seen) == "0;1;"
    assert state_of(rest[-1]) is TaskState.COMPLETED


async def raw_subscribe(
    url: str, binding: str, task_id: str, last_event_id: str | bytes
) -> httpx.Response:
    value = last_event_id if isinstance(last_event_id, bytes) else last_event_id.encode()
    headers = [(name.encode(), v.encode()) for name, v in JSON_HEADERS.items()]
    headers += [(b"Last-Event-ID", value), (b"Accept", b"text/event-stream")]
    async with httpx.AsyncClient(base_url=url, timeout=TIMEOUT) as http:
        if binding == "JSONRPC":
            body = envelope("SubscribeToTask", {"id": task_id})
            return await http.post("/", content=body, headers=headers)
        return await http.get(f"/rest/tasks/{task_id}:subscribe", headers=headers)


@BINDINGS
@pytest.mark.parametrize("garbage", ["abc", "-1", "1.5", "1e3", b"\xb2", "1" * 19, "0x10"])
async def test_a_garbage_last_event_id_is_refused_clearly(
    binding: str, garbage: str | bytes
) -> None:
    chunks = Chunks()
    with anyio.fail_after(TIMEOUT):
        async with served(chunks.agent) as url, client_of(url, binding) as client:
            started = await client.send_message("2 chunks", return_immediately=True)
            assert isinstance(started, Task)
            response = await raw_subscribe(url, binding, started.id, garbage)
            chunks.gate.set()
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    if binding == "JSONRPC":
        assert response.status_code == 200
        error = body["error"]
        assert error["code"] == -32602
        assert "Last-Event-ID" in error["message"]
    else:
        assert response.status_code == 400
        assert body["error"]["status"] == "INVALID_ARGUMENT"
        assert "Last-Event-ID" in body["error"]["message"]


@BINDINGS
async def test_an_empty_last_event_id_is_no_resume(binding: str) -> None:
    chunks = Chunks(gated=False)
    with anyio.fail_after(TIMEOUT):
        async with served(chunks.agent) as url, client_of(url, binding) as client:
            done = await client.send_message("2 chunks")
            assert isinstance(done, Task)
            response = await raw_subscribe(url, binding, done.id, "")
    assert response.headers["content-type"].startswith("application/json")
    assert "terminal" in response.text  # SubscribeToTask as without the header: -32004
