"""A real Supervisor as a task's owner: a cancel and an input sent from another node
reach it through its inbox and do what they do locally, and the other node reads the
outcome from the shared store and event log."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from a2a_actors.cluster import NatsServer
from a2a_actors.cluster._entries import Holder
from a2a_actors.cluster._inbox import CancelCommand, InputCommand, OwnerInbox
from a2a_actors.cluster._owner import SupervisorInbox
from a2a_actors.cluster._task_store import NatsTaskStore
from a2a_actors.protocol import TaskState
from a2a_actors.protocol._errors import TaskNotCancelableError, TaskNotFoundError
from a2a_actors.protocol._models import Message, Part, Role, Task
from a2a_actors.protocol._requests import SendMessageConfiguration, SendMessageRequest
from a2a_actors.runtime import Supervisor, TaskContext

from .helpers import connect, nats_server

pytestmark = pytest.mark.anyio


async def spin_or_ask(ctx: TaskContext) -> None:
    if ctx.text == "spin":
        await ctx.start()
        await anyio.sleep_forever()  # until cancelled, at this await
    name = (await ctx.ask("What is your name?")).text
    await ctx.complete(f"Hello, {name}!")


def request(
    text: str, task_id: str = "", context_id: str = "", *, immediate: bool = False
) -> SendMessageRequest:
    message = Message(
        message_id=f"m-{text}",
        role=Role.USER,
        parts=(Part(text=text),),
        task_id=task_id,
        context_id=context_id,
    )
    config = SendMessageConfiguration(return_immediately=immediate)
    return SendMessageRequest(message=message, configuration=config)


@asynccontextmanager
async def owner(server: NatsServer) -> AsyncIterator[tuple[Supervisor, NatsTaskStore]]:
    """Node "a": a real Supervisor on the cluster's store, serving its inbox."""
    async with (
        connect(server, name="a") as conn,
        NatsTaskStore.open(conn, holder=Holder("a", 1)) as store,
        Supervisor(spin_or_ask, store=store) as supervisor,
        anyio.create_task_group() as tg,
    ):
        await tg.start(OwnerInbox(conn).serve, "a", SupervisorInbox(supervisor))
        yield supervisor, store
        tg.cancel_scope.cancel()


async def test_a_cancel_from_another_node_interrupts_the_owners_handler(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as server,
            owner(server) as (supervisor, _),
            connect(server, name="b") as b,
            NatsTaskStore.open(b, holder=Holder("b", 2)) as store_b,
        ):
            started = await supervisor.send_message(request("spin", immediate=True), caller="alice")
            assert isinstance(started, Task)
            inbox = OwnerInbox(b)
            with pytest.raises(TaskNotFoundError):  # someone else's task: as locally
                await inbox.cancel("a", CancelCommand(started.id, "mallory"))
            canceled = await inbox.cancel(
                "a", CancelCommand(started.id, "alice", metadata={"by": "b"})
            )
            assert canceled.status.state is TaskState.CANCELED
            stored = await store_b.get(started.id)
            assert stored is not None
            assert stored.task == canceled  # stored before the owner answered
            with pytest.raises(TaskNotCancelableError):
                await inbox.cancel("a", CancelCommand(started.id, "alice"))


async def test_an_input_from_another_node_reaches_the_parked_ask(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as server,
            owner(server) as (supervisor, _),
            connect(server, name="b") as b,
            NatsTaskStore.open(b, holder=Holder("b", 2)) as store_b,
        ):
            asked = await supervisor.send_message(request("hi"), caller="alice")
            assert isinstance(asked, Task)
            assert asked.status.state is TaskState.INPUT_REQUIRED
            inbox = OwnerInbox(b)
            answer = request("Ada", task_id=asked.id, context_id=asked.context_id)
            with pytest.raises(TaskNotFoundError):
                await inbox.give_input("a", InputCommand(answer, "mallory"))
            async with supervisor.subscribe(asked.id, caller="alice") as events:
                taken = await inbox.give_input("a", InputCommand(answer, "alice"))
                assert isinstance(taken, Task)
                assert taken.status.state is not TaskState.INPUT_REQUIRED
                async for _ in events:  # on the owner, until the task is final
                    pass
            done = await store_b.get(asked.id)  # what node b reads
            assert done is not None
            status = done.task.status
            assert status.state is TaskState.COMPLETED
            assert status.message is not None
            assert status.message.text == "Hello, Ada!"
