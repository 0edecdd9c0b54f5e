"""``Orchestrator.cancel_orphans``: the children a parent whose handler is gone left
running (a cluster node settled the parent after its own node was lost) are cancelled —
only remote children its hop record shows live, with the cascade's metadata."""

from __future__ import annotations

import datetime as dt

import anyio
import msgspec
import pytest

from a2a_actors.client import A2AClient
from a2a_actors.protocol._models import Task, TaskState, TaskStatus
from a2a_actors.runtime import Agent, TaskContext
from orchestrator import CORRELATION_URI, ChildRecord, HopRecord, Orchestrator

from .helpers import TIMEOUT, served

pytestmark = pytest.mark.anyio

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def parent_with(children: list[ChildRecord]) -> Task:
    """A FAILED parent task whose hop record lists ``children``."""
    record = HopRecord(trace_id="4bf92f3577b34da6a3ce929d0e0e4736", agent="boss", children=children)
    status = TaskStatus(state=TaskState.FAILED, timestamp=T0)
    metadata = {CORRELATION_URI: msgspec.to_builtins(record)}
    return Task(id="parent-1", context_id="c", status=status, metadata=metadata)


async def test_only_live_remote_children_are_cancelled_with_the_cascade_metadata() -> None:
    async def wait(ctx: TaskContext) -> None:
        await anyio.sleep_forever()

    with anyio.fail_after(TIMEOUT):
        async with served(Agent(handler=wait, name="leaf")) as (url,):
            async with await A2AClient.connect(url, card_cache=None) as client:
                live = await client.send_message("a", return_immediately=True)
                done = await client.send_message("b", return_immediately=True)
                assert isinstance(live, Task)
                assert isinstance(done, Task)
                await client.cancel_task(done.id)  # ended before the parent was lost
                parent = parent_with(
                    [
                        ChildRecord(
                            agent="leaf", task_id=live.id, state="TASK_STATE_WORKING", url=url
                        ),
                        ChildRecord(
                            agent="leaf", task_id=done.id, state="TASK_STATE_CANCELED", url=url
                        ),
                        ChildRecord(
                            agent="note", task_id="local-1", state="TASK_STATE_WORKING", local=True
                        ),
                    ]
                )
                async with client.subscribe(live.id) as events:
                    assert (await events.__anext__()).task is not None
                    async with Orchestrator() as orch:
                        assert await orch.cancel_orphans(parent) == (live.id,)
                    rest = [event async for event in events]
            final = rest[-1].status_update
            assert final is not None
            assert final.status.state is TaskState.CANCELED
            said = (final.metadata or {}).get(CORRELATION_URI)
            assert said == {"canceledBy": "boss", "parentTaskId": "parent-1"}


async def test_a_task_without_a_hop_record_or_live_children_needs_nothing() -> None:
    async with Orchestrator() as orch:
        status = TaskStatus(state=TaskState.FAILED, timestamp=T0)
        assert await orch.cancel_orphans(Task(id="t", context_id="c", status=status)) == ()
        gone = ChildRecord(
            agent="x", task_id="x1", state="TASK_STATE_WORKING", url="http://127.0.0.1:9"
        )
        assert await orch.cancel_orphans(parent_with([gone])) == ()  # unreachable: logged
