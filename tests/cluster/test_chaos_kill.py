"""Chaos: node processes (the real CLI) SIGKILLed mid-stream and mid-cancel, and
concurrent cancels from every node — against a real nats-server, leases of 2 s."""

from __future__ import annotations

import re
import time
from pathlib import Path

import anyio
import pytest

from a2a_actors.client import A2AClient, A2AConnectionError, StreamInterruptedError
from a2a_actors.protocol import Task, TaskState, TaskStatus
from a2a_actors.protocol._errors import (
    ServerBusyError,
    TaskNotCancelableError,
    UnsupportedOperationError,
)
from a2a_actors.protocol._models import StreamResponse

from .chaos_nodes import cli_nodes, client_of
from .helpers import nats_server

pytestmark = pytest.mark.anyio

LEASE = 2.0
TICK = re.compile(r"tick (\d+)")


def tick_of(event: StreamResponse) -> int | None:
    """The tick a status update or snapshot says (None: no tick yet, or another text)."""
    status = event.status_update.status if event.status_update is not None else None
    if event.task is not None:
        status = event.task.status
    if status is None or status.message is None:
        return None
    found = TICK.fullmatch(status.message.text)
    return int(found.group(1)) if found else None


def final_status(event: StreamResponse) -> TaskStatus:
    """The status a status update or a task snapshot carries."""
    if event.status_update is not None:
        return event.status_update.status
    assert event.task is not None, event
    return event.task.status


def state_of(event: StreamResponse) -> TaskState | None:
    if event.task is not None:
        return event.task.status.state
    if event.status_update is not None:
        return event.status_update.status.state
    return None


async def test_a_node_killed_mid_stream_fails_its_task_for_a_subscriber_elsewhere(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(90):
        async with (
            nats_server(tmp_path) as server,
            cli_nodes(server, ["a", "b"], tmp_path, lease=LEASE) as (a, b),
        ):
            sender = await client_of(a)
            watcher = await client_of(b)
            async with sender, watcher:
                seen: list[StreamResponse] = []
                sender_error: list[BaseException] = []
                subscribed = anyio.Event()
                killed_at = 0.0
                failed_at = 0.0

                async def stream_on_a(task_status: anyio.abc.TaskStatus[str]) -> None:
                    try:
                        async with sender.stream_message("tick", resubscribe=False) as events:
                            async for event in events:
                                if event.task is not None:
                                    task_status.started(event.task.id)
                    except (A2AConnectionError, StreamInterruptedError) as exc:
                        sender_error.append(exc)

                async def subscribe_on_b(task_id: str) -> None:
                    nonlocal failed_at
                    async with watcher.subscribe(task_id, resubscribe=False) as events:
                        async for event in events:
                            seen.append(event)
                            if len(seen) == 20:
                                subscribed.set()
                    failed_at = time.monotonic()

                async with anyio.create_task_group() as tg:
                    task_id = await tg.start(stream_on_a)
                    tg.start_soon(subscribe_on_b, task_id)
                    await subscribed.wait()  # the snapshot and 19 ticks arrived on b
                    a.kill()
                    killed_at = time.monotonic()

            # the sender on the killed node got a broken stream, not an end
            assert len(sender_error) == 1, sender_error
            # the subscriber on b: snapshot, ticks in order without gap or duplicate, FAILED
            assert seen[0].task is not None
            final = seen[-1].status_update
            assert final is not None
            assert final.status.state is TaskState.FAILED
            assert final.status.message is not None
            assert "node a was lost" in final.status.message.text
            assert failed_at - killed_at < 2 * LEASE + 1.0  # within the lease (and a pass)
            last = tick_of(seen[0])
            for event in seen[1:-1]:
                assert state_of(event) is TaskState.WORKING, event
                tick = tick_of(event)
                assert tick is not None
                if event.task is not None:  # the settler's catch-up: a newer snapshot
                    assert last is None or tick >= last
                else:
                    assert tick == (0 if last is None else last + 1), (last, tick)
                last = tick


async def cancel_into(answers: list[Task | None], client: A2AClient, task_id: str) -> None:
    """CancelTask; its answer into ``answers`` (None: TaskNotCancelable, another won)."""
    try:
        answers.append(await client.cancel_task(task_id))
    except TaskNotCancelableError:
        answers.append(None)


async def final_event(client: A2AClient, task_id: str) -> StreamResponse:
    """The task's final event as a subscriber sees it (its snapshot if already final)."""
    try:
        async with client.subscribe(task_id, resubscribe=False) as events:
            return [event async for event in events][-1]
    except UnsupportedOperationError:  # final already
        return StreamResponse(task=await client.get_task(task_id))


async def test_a_node_killed_mid_cancel_ends_its_task_failed_once(tmp_path: Path) -> None:
    with anyio.fail_after(90):
        async with (
            nats_server(tmp_path) as server,
            cli_nodes(server, ["a", "b"], tmp_path, lease=LEASE) as (a, b),
        ):
            owner = await client_of(a)
            other = await client_of(b)
            async with owner, other:
                started = await owner.send_message("slow-cancel", return_immediately=True)
                assert isinstance(started, Task)
                # a cancel sent before the handler waits would skip its cleanup: wait for it
                assert (await a.next_line()).split() == ["waiting", started.id]
                answers: list[Task | BaseException] = []
                took: list[float] = []

                async def cancel_on_b() -> None:
                    begun = time.monotonic()
                    try:
                        answers.append(await other.cancel_task(started.id))
                    except ServerBusyError as exc:
                        answers.append(exc)
                    took.append(time.monotonic() - begun)

                async with anyio.create_task_group() as tg:
                    tg.start_soon(cancel_on_b)
                    # the cancel reached a's handler, which is cleaning up: kill a now
                    assert (await a.next_line()).split() == ["cancelling", started.id]
                    a.kill()
                # the cancel's answer was lost with the owner: busy, within the bound
                (answer,) = answers
                assert isinstance(answer, ServerBusyError), answer
                assert took[0] < 2.0 + 1.0
                final = await final_event(other, started.id)
                status = final_status(final)
                assert status.state is TaskState.FAILED
                assert status.message is not None
                assert "node a was lost" in status.message.text
                with pytest.raises(TaskNotCancelableError):  # one final state: it stays
                    await other.cancel_task(started.id)
                assert (await other.get_task(started.id)).status.state is TaskState.FAILED


async def test_a_task_canceled_before_its_node_is_killed_stays_canceled(tmp_path: Path) -> None:
    with anyio.fail_after(90):
        async with (
            nats_server(tmp_path) as server,
            cli_nodes(server, ["a", "b"], tmp_path, lease=LEASE) as (a, b),
        ):
            owner = await client_of(a)
            other = await client_of(b)
            async with owner, other:
                canceled = await owner.send_message("spin", return_immediately=True)
                running = await owner.send_message("spin", return_immediately=True)
                assert isinstance(canceled, Task)
                assert isinstance(running, Task)
                answer = await other.cancel_task(canceled.id)
                assert answer.status.state is TaskState.CANCELED
                a.kill()
                # once a's other task is FAILED, the settling pass over a's tasks is done
                final = await final_event(other, running.id)
                assert final.status_update is not None
                assert final.status_update.status.state is TaskState.FAILED
                assert await other.get_task(canceled.id) == answer
                with pytest.raises(TaskNotCancelableError):
                    await other.cancel_task(canceled.id)


async def test_concurrent_cancels_from_every_node_give_one_canceled_state(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(90):
        async with (
            nats_server(tmp_path) as server,
            cli_nodes(server, ["a", "b", "c"], tmp_path, lease=LEASE) as nodes,
        ):
            clients = [await client_of(node) for node in nodes]
            async with clients[0], clients[1], clients[2]:
                for round_ in range(5):
                    owner = clients[round_ % 3]
                    started = await owner.send_message("spin", return_immediately=True)
                    assert isinstance(started, Task)
                    answers: list[Task | None] = []
                    async with clients[(round_ + 1) % 3].subscribe(started.id) as events:
                        assert (await events.__anext__()).task is not None
                        async with anyio.create_task_group() as tg:
                            for client in clients * 2:  # two cancels from each node
                                tg.start_soon(cancel_into, answers, client, started.id)
                        rest = [event async for event in events]
                    finals = [e for e in rest if state_of(e) is TaskState.CANCELED]
                    assert len(finals) == 1, rest  # one CANCELED event, the last
                    assert rest[-1] is finals[0]
                    final = await owner.get_task(started.id)
                    assert final.status.state is TaskState.CANCELED
                    assert any(answer is not None for answer in answers)
                    for answer in answers:
                        assert answer is None or answer == final
                    for client in clients:
                        assert await client.get_task(started.id) == final
