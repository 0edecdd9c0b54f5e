"""The shared client suite: one coroutine per scenario, run against any scenario agent.

Each scenario takes a connected :class:`A2AClient` and asserts what the agent described in
tests/client/conftest.py must do. They use anyio only, so ``test_suite.py`` runs them all
under trio and ``test_asyncio.py`` runs a subset under asyncio.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest

from a2a_actors.client import A2AClient, EventStream
from a2a_actors.protocol._errors import (
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a_actors.protocol._models import Message, Role, StreamResponse, Task, TaskState
from a2a_actors.protocol._requests import AuthenticationInfo, TaskPushNotificationConfig

MULTI_TURN_QUESTION = "What is your name?"
STREAM_CHUNKS = ("alpha ", "beta ", "gamma")
TIMEOUT = 10.0


@asynccontextmanager
async def connect(base_url: str, binding: str) -> AsyncIterator[A2AClient]:
    """A client for ``binding`` of the agent at ``base_url`` (fresh card cache)."""
    client = await A2AClient.connect(base_url, bindings=(binding,), card_cache=None)
    async with client:
        assert client.interface.protocol_binding == binding
        yield client


def kinds(events: list[StreamResponse]) -> list[str]:
    return [type(e.payload).__name__ for e in events]


def text_of(task: Task) -> list[str]:
    return ["".join(p.text or "" for p in a.parts) for a in task.artifacts]


async def collect(stream: EventStream) -> list[StreamResponse]:
    async with stream:
        return [event async for event in stream]


def same_config(got: TaskPushNotificationConfig, sent: TaskPushNotificationConfig) -> bool:
    """Equal but for secrets: a server may leave ``token``/``credentials`` out of replies."""
    auth = got.authentication
    return (
        (got.id, got.task_id, got.url) == (sent.id, sent.task_id, sent.url)
        and got.token in ("", sent.token)
        and auth is not None
        and sent.authentication is not None
        and auth.scheme == sent.authentication.scheme
        and auth.credentials in ("", sent.authentication.credentials)
    )


async def send_blocking(client: A2AClient) -> None:
    task = await client.send_message("hello client")
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert text_of(task) == ["hello client"]
    assert task.history[0].role is Role.USER
    got = await client.get_task(task.id, history_length=0)
    assert got.id == task.id
    assert got.status.state is TaskState.COMPLETED
    assert got.history == ()


async def message_reply(client: A2AClient) -> None:
    reply = await client.send_message("message hi")
    assert isinstance(reply, Message)
    assert reply.role is Role.AGENT
    assert reply.text == "message hi"
    assert reply.context_id
    events = await collect(client.stream_message("message again"))
    assert kinds(events) == ["Message"]


async def streaming(client: A2AClient) -> None:
    stream = client.stream_message("stream please")
    events = await collect(stream)
    # A Task first; then status and artifact updates in order; COMPLETED last.
    assert kinds(events)[0] == "Task"
    assert set(kinds(events)[1:]) == {"TaskStatusUpdateEvent", "TaskArtifactUpdateEvent"}
    chunks = [e.artifact_update for e in events if e.artifact_update is not None]
    assert ["".join(p.text or "" for p in c.artifact.parts) for c in chunks] == list(STREAM_CHUNKS)
    assert [c.artifact.artifact_id for c in chunks] == ["stream"] * len(STREAM_CHUNKS)
    assert [c.append for c in chunks] == [False, True, True]
    assert [c.last_chunk for c in chunks] == [False, False, True]
    last = events[-1].status_update
    assert last is not None
    assert last.status.state is TaskState.COMPLETED
    assert stream.done
    assert stream.state is TaskState.COMPLETED
    assert stream.task is not None
    assert text_of(stream.task) == ["".join(STREAM_CHUNKS)]


async def multi_turn(client: A2AClient) -> None:
    first = await client.send_message("input please")
    assert isinstance(first, Task)
    assert first.status.state is TaskState.INPUT_REQUIRED
    assert first.status.message is not None
    assert first.status.message.text == MULTI_TURN_QUESTION
    second = await client.send_message("Ada", task_id=first.id, context_id=first.context_id)
    assert isinstance(second, Task)
    assert second.id == first.id
    assert second.status.state is TaskState.COMPLETED
    assert text_of(second) == ["Ada"]
    with pytest.raises(UnsupportedOperationError) as terminal:  # -32004
        await client.send_message("more", task_id=first.id)
    assert terminal.value.remote


async def subscribe_and_cancel(client: A2AClient) -> None:
    context_id = uuid.uuid4().hex
    task = await client.send_message("sleep", context_id=context_id, return_immediately=True)
    assert isinstance(task, Task)
    assert task.context_id == context_id
    assert task.status.state in (TaskState.SUBMITTED, TaskState.WORKING)

    listed = await client.list_tasks(context_id=context_id, page_size=10)
    assert [t.id for t in listed.tasks] == [task.id]
    assert listed.total_size == 1
    assert listed.next_page_token == ""
    by_state = await client.list_tasks(context_id=context_id, status="completed")
    assert by_state.tasks == ()

    seen: list[StreamResponse] = []
    snapshot_seen = anyio.Event()

    async def follow() -> None:
        async with client.subscribe(task.id) as events:
            async for event in events:
                seen.append(event)
                snapshot_seen.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(follow)
        await snapshot_seen.wait()
        assert seen[0].task is not None
        assert seen[0].task.id == task.id
        canceled = await client.cancel_task(task.id)
        assert canceled.status.state is TaskState.CANCELED
    last = seen[-1].status_update
    assert last is not None
    assert last.status.state is TaskState.CANCELED

    got = await client.get_task(task.id)
    assert got.status.state is TaskState.CANCELED
    with pytest.raises(TaskNotCancelableError):  # -32002
        await client.cancel_task(task.id)
    with pytest.raises(UnsupportedOperationError):  # -32004: subscribe to a terminal task
        await collect(client.subscribe(task.id))


async def push_config_crud(client: A2AClient) -> None:
    task = await client.send_message("push target")
    assert isinstance(task, Task)
    config = TaskPushNotificationConfig(
        task_id=task.id,
        id="cfg-1",
        url="http://127.0.0.1:9/hook",
        token="tok-1",
        authentication=AuthenticationInfo(scheme="Bearer", credentials="secret"),
    )
    created = await client.create_push_config(config)
    assert same_config(created, config)
    unnamed = await client.create_push_config(
        TaskPushNotificationConfig(task_id=task.id, url="http://127.0.0.1:9/b")
    )
    assert unnamed.id
    assert same_config(await client.get_push_config(task.id, "cfg-1"), config)
    listed = await client.list_push_configs(task.id)
    assert sorted(c.id for c in listed.configs) == sorted(["cfg-1", unnamed.id])
    for _ in range(2):  # delete is idempotent
        await client.delete_push_config(task.id, "cfg-1")
    with pytest.raises(TaskNotFoundError):
        await client.get_push_config(task.id, "cfg-1")
    with pytest.raises(TaskNotFoundError):
        await client.list_push_configs("no-such-task")


async def extended_card(client: A2AClient) -> None:
    public = client.card
    assert public is not None
    assert public.capabilities.extended_agent_card
    card = await client.get_extended_card()
    assert card.name.endswith("(extended)")
    assert client.card == card


async def errors(client: A2AClient) -> None:
    with pytest.raises(TaskNotFoundError) as not_found:  # -32001
        await client.get_task("no-such-task")
    error = not_found.value
    assert error.remote
    assert error.code == -32001
    assert error.data
    info = error.data[0]
    assert info["reason"] == "TASK_NOT_FOUND"
    assert info["domain"] == "a2a-protocol.org"
    with pytest.raises(TaskNotFoundError):  # clients cannot choose a new task's id
        await client.send_message("hello", task_id="client-made-id")
    with pytest.raises(TaskNotFoundError):
        await client.cancel_task("no-such-task")
