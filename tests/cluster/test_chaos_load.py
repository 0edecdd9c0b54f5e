"""Chaos under load: 1,000 tasks sent round-robin to three node processes (the real
CLI), one of them SIGKILLed in the middle: none lost, none duplicated, each in one final
state, and every request's fate accounted for."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import anyio
import pytest

from a2a_actors.client import A2AClient, A2AConnectionError
from a2a_actors.protocol import Task, TaskState
from a2a_actors.protocol._errors import UnsupportedOperationError
from a2a_actors.protocol._models import Message, Part, Role

from .chaos_nodes import cli_nodes, client_of
from .helpers import nats_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

TASKS = 1000
SENDERS = 24
KILL_AFTER = TASKS // 2
LIVE = (TaskState.SUBMITTED, TaskState.WORKING)


@dataclasses.dataclass
class Sent:
    """One SendMessage: where it went and how it ended."""

    node: int
    task_id: str = ""
    error: BaseException | None = None


async def all_tasks(
    client: A2AClient, *, status: TaskState | None = None, changing: bool = False
) -> list[Task]:
    """Every task (in ``status``), page by page (100 a page), as one node lists them.

    Unless ``changing`` (tasks still enter and leave ``status`` while the pages are read),
    the pages must add up to the total the last one gives."""
    tasks: list[Task] = []
    token: str | None = None
    while True:
        page = await client.list_tasks(status=status, page_size=100, page_token=token)
        tasks.extend(page.tasks)
        if not page.next_page_token:
            assert changing or len(tasks) == page.total_size
            return tasks
        token = page.next_page_token


async def wait_final(client: A2AClient, task_id: str) -> None:
    """Return once the task is final (followed on ``client``'s node)."""
    try:
        async with client.subscribe(task_id, resubscribe=False) as events:
            async for _ in events:
                pass
    except UnsupportedOperationError:
        pass  # final already


def request_of(task: Task) -> str:
    """The message id of the request that created ``task`` (its first user message)."""
    return next(m.message_id for m in task.history if m.role is Role.USER)


async def test_a_thousand_tasks_with_a_node_killed_none_lost_or_duplicated(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(240):
        async with (
            nats_server(tmp_path) as server,
            cli_nodes(server, ["a", "b", "c"], tmp_path, lease=2.0) as nodes,
        ):
            clients = [await client_of(node) for node in nodes]
            async with clients[0], clients[1], clients[2]:
                sent: dict[str, Sent] = {}
                acknowledged = 0
                half = anyio.Event()
                next_index = 0

                async def sender() -> None:
                    nonlocal acknowledged, next_index
                    while next_index < TASKS:
                        i = next_index
                        next_index += 1
                        message_id = f"m{i}"
                        record = sent[message_id] = Sent(node=i % 3)
                        message = Message(
                            message_id=message_id, role=Role.USER, parts=(Part(text="work"),)
                        )
                        try:
                            task = await clients[i % 3].send_message(
                                message, return_immediately=True
                            )
                        except A2AConnectionError as exc:
                            record.error = exc
                            continue
                        assert isinstance(task, Task)
                        record.task_id = task.id
                        acknowledged += 1
                        if acknowledged == KILL_AFTER:
                            half.set()

                async with anyio.create_task_group() as tg:
                    for _ in range(SENDERS):
                        tg.start_soon(sender)
                    await half.wait()
                    nodes[2].kill()  # c: SIGKILL while requests to it are in flight

                survivors = clients[:2]
                # every live task ends (c's are settled by a or b within its lease); the
                # live set changes while its pages are read, so it is read until empty
                while live := [
                    task
                    for state in LIVE
                    for task in await all_tasks(survivors[0], status=state, changing=True)
                ]:
                    async with anyio.create_task_group() as tg:
                        for task in live:
                            tg.start_soon(wait_final, survivors[1], task.id)
                for state in LIVE:
                    assert not await all_tasks(survivors[0], status=state)

                listed = [await all_tasks(client) for client in survivors]
                assert listed[0] == listed[1]  # identical answers from both survivors
                tasks = listed[0]
                ids = [task.id for task in tasks]
                assert len(set(ids)) == len(ids)  # no id twice
                by_request: dict[str, Task] = {}
                for task in tasks:
                    message_id = request_of(task)
                    assert message_id not in by_request  # one task per request at most
                    by_request[message_id] = task

                lost = 0
                for message_id, record in sent.items():
                    found = by_request.get(message_id)
                    if record.error is None:  # acknowledged: listed, the same id
                        assert found is not None, message_id
                        assert found.id == record.task_id
                    elif found is None:  # a connection error before the task existed
                        continue
                    # Connection errors are c's (in flight at the kill, or sent after it)
                    # and, rarely, another node's: seen once under heavy load, a ReadError,
                    # most likely a kept-alive connection the server closed as it was
                    # reused. Whatever the node, such a request has at most one task, in a
                    # final state like any other of that node.
                    state = found.status.state
                    if record.node != 2:
                        assert state is TaskState.COMPLETED, found
                        continue
                    if state is not TaskState.FAILED:
                        assert state is TaskState.COMPLETED, found
                        continue
                    assert found.status.message is not None
                    assert found.status.message.text.startswith("node c was lost")
                    lost += 1
                    for client in survivors:  # settled: read the same on every node
                        assert (await client.get_task(found.id)).status == found.status

                errors = [r for r in sent.values() if r.error is not None]
                assert len(sent) == TASKS
                assert sum(1 for r in sent.values() if r.error is None) + len(errors) == TASKS
                assert len(tasks) == TASKS - sum(
                    1 for m, r in sent.items() if r.error is not None and m not in by_request
                )
                for state in (TaskState.COMPLETED, TaskState.FAILED):  # counts match
                    expected = sum(1 for task in tasks if task.status.state is state)
                    for client in survivors:
                        page = await client.list_tasks(status=state, page_size=1)
                        assert page.total_size == expected
                assert any(r.node == 2 for r in errors)  # c's requests after the kill
                assert lost  # c's tasks running at the kill were settled FAILED
