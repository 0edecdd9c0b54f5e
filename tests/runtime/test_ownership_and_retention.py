"""Ownership (another caller sees nothing) and retention (oldest finished tasks evicted)."""

from __future__ import annotations

import anyio
import pytest

from a2a_actors.protocol import ListTasksRequest, TaskNotFoundError, TaskState
from a2a_actors.runtime import InProcessClient, Supervisor, TaskContext
from a2a_actors.stores import MemoryTaskStore

from .helpers import as_task

pytestmark = pytest.mark.anyio


async def maybe_ask(ctx: TaskContext) -> str:
    if ctx.text.startswith("ask"):
        await ctx.ask("?")
    return "done"


async def test_another_caller_cannot_see_or_touch_a_task() -> None:
    with anyio.fail_after(5):
        async with Supervisor(maybe_ask) as sup:
            alice = InProcessClient(sup, caller="alice")
            bob = InProcessClient(sup, caller="bob")
            anonymous = InProcessClient(sup)
            live = as_task(await alice.send_message("ask"))
            done = as_task(await alice.send_message("finish"))
            for task_id in (live.id, done.id):
                for other in (bob, anonymous):
                    with pytest.raises(TaskNotFoundError):
                        await other.get_task(task_id)
                    with pytest.raises(TaskNotFoundError):
                        await other.cancel_task(task_id)
                    with pytest.raises(TaskNotFoundError):
                        async with other.subscribe(task_id):
                            pass
                    with pytest.raises(TaskNotFoundError):
                        await other.send_message("answer", task_id=task_id)
                    with pytest.raises(TaskNotFoundError):
                        await sup.check_access(task_id, caller=other.caller)
            assert (await bob.list_tasks()).total_size == 0
            assert (await anonymous.list_tasks()).tasks == ()
            mine = await alice.list_tasks()
            assert {t.id for t in mine.tasks} == {live.id, done.id}
            assert (await alice.get_task(live.id)).status.state is TaskState.INPUT_REQUIRED
            assert (await sup.check_access(live.id, caller="alice")).id == live.id


async def test_list_omits_artifacts_unless_asked_and_pages() -> None:
    with anyio.fail_after(5):

        async def with_artifact(ctx: TaskContext) -> None:
            await ctx.artifact("result", name="r")

        async with Supervisor(with_artifact) as sup:
            client = InProcessClient(sup)
            for _ in range(3):
                await client.send_message("x", context_id="ctx-a")
            await client.send_message("y", context_id="ctx-b")
            page = await client.list_tasks(ListTasksRequest(context_id="ctx-a", page_size=2))
            assert (len(page.tasks), page.total_size, page.page_size) == (2, 3, 2)
            assert all(t.artifacts == () for t in page.tasks)
            rest = await client.list_tasks(
                ListTasksRequest(
                    context_id="ctx-a",
                    page_size=2,
                    page_token=page.next_page_token,
                    include_artifacts=True,
                )
            )
            assert len(rest.tasks) == 1
            assert rest.next_page_token == ""
            assert rest.tasks[0].artifacts[0].name == "r"
            default = await client.list_tasks()
            assert default.page_size == 50


async def test_retention_max_evicts_the_oldest_finished_tasks_only() -> None:
    with anyio.fail_after(5):
        store = MemoryTaskStore()
        async with Supervisor(maybe_ask, store=store, retention_max=2) as sup:
            client = InProcessClient(sup)
            live = as_task(await client.send_message("ask"))
            finished = [as_task(await client.send_message(f"t{i}")).id for i in range(5)]
            await anyio.wait_all_tasks_blocked()
            assert live.id in store
            assert [t in store for t in finished] == [False, False, False, True, True]
            assert sup.statistics().retained_tasks == 2
            with pytest.raises(TaskNotFoundError):
                await client.get_task(finished[0])


async def test_retention_ttl_with_an_injected_clock() -> None:
    with anyio.fail_after(5):
        now = [1000.0]
        store = MemoryTaskStore()
        async with Supervisor(
            maybe_ask, store=store, retention_ttl=60, clock=lambda: now[0]
        ) as sup:
            client = InProcessClient(sup)
            old = as_task(await client.send_message("old")).id
            live = as_task(await client.send_message("ask")).id
            now[0] += 30
            newer = as_task(await client.send_message("newer")).id
            await anyio.wait_all_tasks_blocked()
            assert await sup.evict() == 0
            now[0] += 31  # old finished 61 s ago, newer 31 s ago
            assert await sup.evict() == 1
            assert (old in store, newer in store, live in store) == (False, True, True)
            now[0] += 1000
            assert await sup.evict() == 1
            assert live in store  # never a live task
            assert sup.statistics().retained_tasks == 0
