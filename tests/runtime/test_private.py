"""What an agent keeps with its task unseen by clients: ``ctx.private``,
``ctx.update_private`` and ``ctx.supervisor.context_records``."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from a2a_actors.protocol import TaskState, codec
from a2a_actors.runtime import InProcessClient, Supervisor, TaskContext
from a2a_actors.stores import MemoryTaskStore, SQLiteTaskStore

from .helpers import as_task

pytestmark = pytest.mark.anyio


async def notes(ctx: TaskContext) -> str:
    """Keeps the text it was sent, privately; answers with every earlier note of its
    context (its own caller's tasks only)."""
    earlier = [
        r.private["note"]
        for r in await ctx.supervisor.context_records(ctx.context_id, caller=ctx.caller)
        if r.private and r.task.id != ctx.task_id
    ]
    await ctx.update_private({"note": f"{ctx.text}#kept"})
    return ",".join(sorted(earlier))


async def test_private_data_is_stored_and_never_part_of_the_task() -> None:
    store = MemoryTaskStore()
    with anyio.fail_after(10):
        async with Supervisor(notes, store=store) as sup:
            client = InProcessClient(sup)
            first = as_task(await client.send_message("secret-1"))
            assert b"#kept" not in codec.encode(first)
            assert b"#kept" not in codec.encode(await client.get_task(first.id))
            record = await store.get(first.id)
            assert record is not None
            assert record.private == {"note": "secret-1#kept"}
            second = as_task(await client.send_message("secret-2", context_id=first.context_id))
            assert second.status.message is not None
            assert second.status.message.text == "secret-1#kept"
            other = InProcessClient(sup, caller="mallory")
            third = as_task(await other.send_message("x", context_id=first.context_id))
            assert third.status.message is not None
            assert third.status.message.text == ""  # another caller's records are not read


async def test_private_data_survives_a_restart(tmp_path: Path) -> None:
    seen: list[dict[str, object]] = []

    async def careful(ctx: TaskContext) -> str:
        seen.append(ctx.private)
        if not ctx.resumed:
            await ctx.update_private({"step": 1})
            await ctx.ask("go on?")
        return "done"

    path = tmp_path / "tasks.db"
    with anyio.fail_after(10):
        async with (
            SQLiteTaskStore.open(path) as store,
            Supervisor(careful, store=store, keep_interrupted=True) as sup,
        ):
            asked = as_task(await InProcessClient(sup).send_message("hi"))
            assert asked.status.state is TaskState.INPUT_REQUIRED
        async with (
            SQLiteTaskStore.open(path) as store,
            Supervisor(careful, store=store, keep_interrupted=True) as sup,
        ):
            done = as_task(await InProcessClient(sup).send_message("yes", task_id=asked.id))
            assert done.status.state is TaskState.COMPLETED
    assert seen == [{}, {"step": 1}]


async def test_private_data_of_a_provisional_task_goes_with_its_first_write() -> None:
    store = MemoryTaskStore()

    async def quiet(ctx: TaskContext) -> str:
        await ctx.update_private({"early": True})  # nothing stored yet: the task is provisional
        assert len(store) == 0
        return "ok"

    with anyio.fail_after(10):
        async with Supervisor(quiet, store=store) as sup:
            task = as_task(await InProcessClient(sup).send_message("hi"))
            record = await store.get(task.id)
            assert record is not None
            assert record.private == {"early": True}
