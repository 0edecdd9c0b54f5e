"""Chaos: NATS stopped and started again (same port, same store) while requests flow to
two node processes (the real CLI): busy answers within the bound during the outage, no
hang, nothing acknowledged lost, the nodes back by themselves, new tasks working. And
the fix it needed on its own: a held task's write waits for NATS, a creation does not."""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from a2a_actors.client import A2AClient
from a2a_actors.cluster._entries import Holder
from a2a_actors.cluster._errors import ClusterUnavailableError
from a2a_actors.cluster._member import HeldTaskStore
from a2a_actors.cluster._task_store import NatsTaskStore
from a2a_actors.protocol import Task, TaskState, TaskStatus
from a2a_actors.protocol._errors import ServerBusyError, UnsupportedOperationError
from a2a_actors.stores import StoredTask

from .chaos_nodes import cli_nodes, client_of
from .helpers import connect, nats_server

pytestmark = pytest.mark.anyio

BOUND = 2.0  # ClusterOptions.timeout_s: what any NATS operation may take
SENDERS = 8
BEFORE = 30  # acknowledged tasks before NATS stops
DURING = 8  # busy answers while it is stopped
AFTER = 30  # acknowledged tasks sent after it is back


@dataclasses.dataclass
class Outcome:
    """One SendMessage: when it was sent and answered, and what the answer was."""

    node: int
    sent_at: float
    took: float
    task_id: str = ""
    busy: ServerBusyError | None = None


async def wait_final(client: A2AClient, task_id: str) -> None:
    """Return once the task is final (followed on ``client``'s node)."""
    try:
        async with client.subscribe(task_id, resubscribe=False) as events:
            async for _ in events:
                pass
    except UnsupportedOperationError:
        pass  # final already


@pytest.mark.slow
async def test_nats_restarted_under_load_loses_nothing_acknowledged(tmp_path: Path) -> None:
    with anyio.fail_after(120):
        async with (
            nats_server(tmp_path) as server,
            # a lease longer than the outage: the nodes ride it out instead of fencing
            cli_nodes(server, ["a", "b"], tmp_path, lease=6.0) as nodes,
        ):
            # JSON-RPC to a (busy: -32050), REST to b (busy: HTTP 429 with Retry-After)
            clients = [await client_of(nodes[0]), await client_of(nodes[1], binding="HTTP+JSON")]
            async with clients[0], clients[1]:
                outcomes: list[Outcome] = []
                down_at = up_at = float("inf")
                before, during, after = anyio.Event(), anyio.Event(), anyio.Event()
                sent = 0

                def note(outcome: Outcome) -> None:
                    outcomes.append(outcome)
                    acked = [o for o in outcomes if o.busy is None]
                    if len(acked) >= BEFORE:
                        before.set()
                    if sum(1 for o in outcomes if o.busy and o.sent_at > down_at) >= DURING:
                        during.set()
                    if sum(1 for o in acked if o.sent_at > up_at) >= AFTER:
                        after.set()

                async def sender() -> None:
                    nonlocal sent
                    while not after.is_set():
                        node = sent % 2
                        sent += 1
                        sent_at = time.monotonic()
                        try:
                            task = await clients[node].send_message("work", return_immediately=True)
                        except ServerBusyError as exc:
                            note(Outcome(node, sent_at, time.monotonic() - sent_at, busy=exc))
                            continue
                        assert isinstance(task, Task)
                        note(Outcome(node, sent_at, time.monotonic() - sent_at, task.id))

                async with anyio.create_task_group() as tg:
                    for _ in range(SENDERS):
                        tg.start_soon(sender)
                    await before.wait()
                    down_at = time.monotonic()  # nodes may see it go while it stops
                    await server.stop()
                    await during.wait()
                    await server.start()  # same port, same store
                    up_at = time.monotonic()

                # no hang: every request was answered within the bound (and some slack)
                assert max(o.took for o in outcomes) < BOUND + 1.5
                # busy answers only while NATS was away (or until a node saw it back),
                # on both bindings
                assert all(o.sent_at + o.took > down_at for o in outcomes if o.busy)
                assert {o.node for o in outcomes if o.busy} == {0, 1}
                # the nodes reconnected by themselves and still serve (no lease lost)
                assert all(node.process.returncode is None for node in nodes)

                acked = [o for o in outcomes if o.busy is None]
                async with anyio.create_task_group() as tg:
                    for outcome in acked:
                        tg.start_soon(wait_final, clients[1 - outcome.node], outcome.task_id)
                states: dict[TaskState, int] = {}
                for outcome in acked:  # everything acknowledged is there, on both nodes
                    task = await clients[0].get_task(outcome.task_id)
                    assert await clients[1].get_task(outcome.task_id) == task
                    states[task.status.state] = states.get(task.status.state, 0) + 1
                listed = await clients[1].list_tasks(page_size=1)
                assert listed.total_size == len(acked)  # and nothing a busy answer refused
                assert states == {TaskState.COMPLETED: len(acked)}, states


def record(task_id: str, state: TaskState, version: int) -> StoredTask:
    status = TaskStatus(state=state, timestamp=dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    return StoredTask(Task(id=task_id, context_id="c", status=status), "alice", version)


async def test_a_held_write_and_a_creation_wait_for_nats(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as conn,
            NatsTaskStore.open(conn, holder=Holder("n1", 1)) as store,
        ):
            held = HeldTaskStore(store, patience=10.0)
            await held.save(record("t", TaskState.WORKING, 2))
            await server.stop()
            written: list[str] = []

            async def save(saved: StoredTask) -> None:
                await held.save(saved)
                written.append(saved.task.id)

            failures = conn.statistics().unavailable
            async with anyio.create_task_group() as tg:
                tg.start_soon(save, record("t", TaskState.COMPLETED, 3))
                tg.start_soon(save, record("new", TaskState.WORKING, 1))  # its creation
                while conn.statistics().unavailable < failures + 2:  # both tries failed
                    await anyio.lowlevel.checkpoint()
                assert written == []  # they wait to try again
                await server.start()
            assert sorted(written) == ["new", "t"]
            stored = await store.get("t")
            assert stored is not None
            assert stored.task.status.state is TaskState.COMPLETED
            assert stored.version == 3
            created = await store.get("new")
            assert created is not None
            assert created.version == 1
            # without patience (the default) a held write is not retried either
            await server.stop()
            with pytest.raises(ClusterUnavailableError):
                await HeldTaskStore(store).save(record("t", TaskState.COMPLETED, 3))
            await server.start()
