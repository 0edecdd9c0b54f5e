"""The owner's inbox: cancel and input reach the owning node and its reply comes back;
errors keep their class; a gone owner and a silent owner are bounded errors."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import anyio
import pytest

from a2a_actors.cluster import ClusterUnavailableError, OwnerUnreachableError
from a2a_actors.cluster._inbox import CancelCommand, InputCommand, OwnerInbox
from a2a_actors.protocol import Task, TaskState, TaskStatus
from a2a_actors.protocol._errors import (
    InternalError,
    TaskNotCancelableError,
    TaskNotFoundError,
)
from a2a_actors.protocol._models import Message, Part, Role
from a2a_actors.protocol._requests import SendMessageRequest

from .helpers import connect, nats_server

pytestmark = pytest.mark.anyio

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def task(task_id: str, state: TaskState) -> Task:
    return Task(id=task_id, context_id="c", status=TaskStatus(state=state, timestamp=T0))


class Owner:
    """An owner's side of the seam, as the runtime will implement it: a few tasks, each
    cancellable once, one of them slow to give up."""

    def __init__(self) -> None:
        self.states = {"t1": TaskState.WORKING, "done": TaskState.COMPLETED}
        self.inputs: list[InputCommand] = []
        self.release = anyio.Event()
        self.slow_started = anyio.Event()

    async def cancel(self, command: CancelCommand) -> Task:
        if command.task_id == "slow":
            self.slow_started.set()
            await self.release.wait()
            return task("slow", TaskState.CANCELED)
        if command.task_id == "boom":
            raise RuntimeError("a bug in the owner")
        state = self.states.get(command.task_id)
        if state is None or command.caller != "alice":
            raise TaskNotFoundError(
                f"Task {command.task_id} not found", metadata={"taskId": command.task_id}
            )
        if state is not TaskState.WORKING:
            raise TaskNotCancelableError(f"Task {command.task_id} is in terminal state")
        self.states[command.task_id] = TaskState.CANCELED
        return task(command.task_id, TaskState.CANCELED)

    async def give_input(self, command: InputCommand) -> Task | Message:
        self.inputs.append(command)
        return task(command.request.message.task_id, TaskState.WORKING)


async def test_commands_reach_the_owner_and_its_answers_come_back(tmp_path: Path) -> None:
    owner = Owner()
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as a,
            connect(server) as b,
            anyio.create_task_group() as tg,
        ):
            await tg.start(OwnerInbox(a).serve, "node-a", owner)
            inbox = OwnerInbox(b)
            canceled = await inbox.cancel(
                "node-a", CancelCommand("t1", "alice", metadata={"why": "user"})
            )
            assert canceled == task("t1", TaskState.CANCELED)
            with pytest.raises(TaskNotCancelableError, match="terminal"):
                await inbox.cancel("node-a", CancelCommand("t1", "alice"))
            with pytest.raises(TaskNotFoundError, match="Task t1 not found") as info:
                await inbox.cancel("node-a", CancelCommand("t1", "mallory"))
            assert info.value.metadata == {"taskId": "t1"}
            with pytest.raises(InternalError, match="the owner failed"):
                await inbox.cancel("node-a", CancelCommand("boom", "alice"))
            message = Message(
                message_id="m1",
                role=Role.USER,
                parts=(Part(text="yes"), Part(raw=b"\x00\xff")),
                task_id="t2",
                context_id="c",
            )
            request = SendMessageRequest(message=message, metadata={"k": [1, None]})
            answer = await inbox.give_input(
                "node-a", InputCommand(request, "alice", extensions=("urn:x",))
            )
            assert answer == task("t2", TaskState.WORKING)
            assert owner.inputs == [InputCommand(request, "alice", extensions=("urn:x",))]
            tg.cancel_scope.cancel()


async def test_a_slow_command_does_not_hold_up_another(tmp_path: Path) -> None:
    owner = Owner()
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as a,
            connect(server, timeout=10) as b,
            anyio.create_task_group() as tg,
        ):
            await tg.start(OwnerInbox(a).serve, "node-a", owner)
            inbox = OwnerInbox(b)
            results: list[Task] = []
            answered = anyio.Event()

            async def cancel_slow() -> None:
                results.append(await inbox.cancel("node-a", CancelCommand("slow", "alice")))
                answered.set()

            tg.start_soon(cancel_slow)
            await owner.slow_started.wait()
            fast = await inbox.cancel("node-a", CancelCommand("t1", "alice"))
            assert fast.status.state is TaskState.CANCELED
            assert results == []
            owner.release.set()
            await answered.wait()
            assert results[0].status.state is TaskState.CANCELED
            tg.cancel_scope.cancel()


async def test_a_gone_owner_fails_at_once_and_a_silent_one_within_the_bound(
    tmp_path: Path,
) -> None:
    owner = Owner()
    with anyio.fail_after(30):
        async with nats_server(tmp_path) as server, connect(server) as b:
            inbox = OwnerInbox(b, request_timeout=0.3)
            with anyio.fail_after(1), pytest.raises(OwnerUnreachableError) as info:
                await inbox.cancel("node-x", CancelCommand("t1", "alice"))
            assert (info.value.node_id, info.value.code) == ("node-x", -32050)
            async with connect(server) as a, anyio.create_task_group() as tg:
                await tg.start(OwnerInbox(a).serve, "node-a", owner)
                with anyio.fail_after(2), pytest.raises(ClusterUnavailableError, match=r"0\.3 s"):
                    await inbox.cancel("node-a", CancelCommand("slow", "alice"))
                owner.release.set()
                tg.cancel_scope.cancel()
            with pytest.raises(OwnerUnreachableError):  # its server task is gone
                await inbox.cancel("node-a", CancelCommand("t1", "alice"))


def test_node_ids_are_subject_tokens() -> None:
    from a2a_actors.cluster._names import ClusterNames

    names = ClusterNames.for_cluster("Echo Agent")
    assert names.inbox_subject("node-1").endswith(".inbox.node-1")
    for bad in ("a.b", "*", ">", "", "a b"):
        with pytest.raises(ValueError, match="node id"):
            names.inbox_subject(bad)


async def test_with_nats_down_a_command_is_a_bounded_busy_error(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with nats_server(tmp_path) as server, connect(server, timeout=0.5) as b:
            await server.stop()
            with anyio.fail_after(2), pytest.raises(ClusterUnavailableError) as info:
                await OwnerInbox(b).cancel("node-a", CancelCommand("t1", "alice"))
            assert not isinstance(info.value, OwnerUnreachableError)
            assert info.value.http_status == 429
