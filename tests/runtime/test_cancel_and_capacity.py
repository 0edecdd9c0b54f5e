"""Cancellation by interruption, the live-task cap, the running-slot queue, shutdown."""

from __future__ import annotations

import anyio
import pytest

from a2a_actors.protocol import (
    ListTasksRequest,
    ServerBusyError,
    Task,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskState,
)
from a2a_actors.protocol._settling import SHUTDOWN_TEXT
from a2a_actors.runtime import InProcessClient, Supervisor, TaskContext
from a2a_actors.runtime._actor import TaskActor
from a2a_actors.stores import MemoryTaskStore

from .helpers import Recorder, as_task, state_of, status_text

pytestmark = pytest.mark.anyio


async def test_cancel_interrupts_an_agent_blocked_in_sleep_forever() -> None:
    with anyio.fail_after(5):
        cleaned_up = anyio.Event()

        async def sleeper(ctx: TaskContext) -> None:
            try:
                await anyio.sleep_forever()
            finally:
                cleaned_up.set()

        store = MemoryTaskStore()
        async with Supervisor(sleeper, store=store) as sup:
            client = InProcessClient(sup)
            task = as_task(await client.send_message("zzz", return_immediately=True))
            await anyio.wait_all_tasks_blocked()
            assert sup.statistics().running_handlers == 1
            canceled = await client.cancel_task(task.id)
            assert canceled.status.state is TaskState.CANCELED
            assert cleaned_up.is_set()
            stored = await store.get(task.id)
            assert stored is not None
            assert stored.task == canceled
            assert sup.statistics().live_tasks == 0
            assert sup.statistics().running_handlers == 0
            with pytest.raises(TaskNotCancelableError, match="terminal state"):
                await client.cancel_task(task.id)
            with pytest.raises(TaskNotFoundError):
                await client.cancel_task("nope")


async def test_cancel_while_waiting_for_input_and_the_waiting_resume_sees_it() -> None:
    with anyio.fail_after(5):

        async def asker(ctx: TaskContext) -> str:
            reply = await ctx.ask("?")
            return reply.text

        recorder = Recorder()
        async with Supervisor(asker, observers=[recorder]) as sup:
            client = InProcessClient(sup)
            task = as_task(await client.send_message("x"))
            assert task.status.state is TaskState.INPUT_REQUIRED
            canceled = await client.cancel_task(task.id, metadata={"why": "test"})
            assert canceled.status.state is TaskState.CANCELED
            last = recorder.for_task(task.id)[-1]
            assert last.status_update is not None
            assert last.status_update.metadata == {"why": "test"}
            assert recorder.events[-1][3] is True  # terminal flag


async def test_live_task_cap_refuses_the_next_task_and_creates_nothing() -> None:
    with anyio.fail_after(5):
        release = anyio.Event()

        async def gated(ctx: TaskContext) -> str:
            await release.wait()
            return "ok"

        store = MemoryTaskStore()
        async with Supervisor(gated, store=store, max_live_tasks=3) as sup:
            client = InProcessClient(sup)
            tasks = [
                as_task(await client.send_message("x", return_immediately=True)) for _ in range(3)
            ]
            before = sup.statistics()
            with pytest.raises(ServerBusyError, match="too many live tasks") as info:
                await client.send_message("one too many")
            assert info.value.http_status == 429
            assert sup.statistics() == before
            assert before.live_tasks == 3
            assert len(store) == 3
            release.set()
            await anyio.wait_all_tasks_blocked()
            for task in tasks:
                assert (await client.get_task(task.id)).status.state is TaskState.COMPLETED
            assert sup.statistics().live_tasks == 0
            done = as_task(await client.send_message("room again"))
            assert done.status.state is TaskState.COMPLETED


async def test_running_cap_queues_fifo_cancellable_and_input_required_frees_the_slot() -> None:
    with anyio.fail_after(5):
        started: list[str] = []
        gates: dict[str, anyio.Event] = {}

        async def worker(ctx: TaskContext) -> str:
            started.append(ctx.text)
            if ctx.text == "asks":
                answer = await ctx.ask("more?")
                started.append(f"resumed:{answer.text}")
                return "asked"
            gate = gates.setdefault(ctx.text, anyio.Event())
            await gate.wait()
            return ctx.text

        async with Supervisor(worker, max_running=1) as sup:
            client = InProcessClient(sup)
            first = as_task(await client.send_message("asks"))
            assert first.status.state is TaskState.INPUT_REQUIRED  # slot given back
            names = ["a", "b", "c", "d"]
            tasks = {
                n: as_task(await client.send_message(n, return_immediately=True)) for n in names
            }
            await anyio.wait_all_tasks_blocked()
            stats = sup.statistics()
            assert (stats.running_handlers, stats.queued, stats.interrupted) == (1, 3, 1)
            assert started == ["asks", "a"]
            for name in "bcd":
                assert (await client.get_task(tasks[name].id)).status.state is TaskState.SUBMITTED

            canceled = await client.cancel_task(tasks["c"].id)  # cancelled while queued
            assert canceled.status.state is TaskState.CANCELED
            assert sup.statistics().queued == 2

            resumed = as_task(
                await client.send_message("yes", task_id=first.id, return_immediately=True)
            )
            assert resumed.status.state is TaskState.WORKING  # queued behind b and d
            for name in "abd":
                gates.setdefault(name, anyio.Event()).set()
                await anyio.wait_all_tasks_blocked()
            done = await client.get_task(first.id)
            assert done.status.state is TaskState.COMPLETED
            assert started == ["asks", "a", "b", "d", "resumed:yes"]
            assert sup.statistics().running_handlers == 0


async def test_an_agent_that_never_returns_does_not_block_others() -> None:
    with anyio.fail_after(5):

        async def mixed(ctx: TaskContext) -> str:
            if ctx.text == "hang":
                await ctx.update("hanging")
                await anyio.sleep_forever()
            return "fine"

        async with Supervisor(mixed) as sup:
            client = InProcessClient(sup)
            hung = as_task(await client.send_message("hang", return_immediately=True))
            for _ in range(5):
                assert as_task(await client.send_message("x")).status.state is TaskState.COMPLETED
            assert (await client.cancel_task(hung.id)).status.state is TaskState.CANCELED


async def test_shutdown_cancels_every_live_task_and_stores_it() -> None:
    with anyio.fail_after(5):
        finally_ran: list[str] = []

        async def agent(ctx: TaskContext) -> str:
            try:
                if ctx.text == "ask":
                    await ctx.ask("?")
                elif ctx.text == "silent":
                    await anyio.sleep_forever()  # still provisional: nothing emitted
                else:
                    await ctx.update("busy")
                    await anyio.sleep_forever()
            finally:
                finally_ran.append(ctx.text)
            return "unreachable"

        store = MemoryTaskStore()
        results: list[Task] = []
        async with anyio.create_task_group() as callers:
            async with Supervisor(agent, store=store, max_running=2) as sup:
                client = InProcessClient(sup)
                await client.send_message("ask")
                await client.send_message("busy", return_immediately=True)

                async def blocking(text: str) -> None:
                    results.append(as_task(await client.send_message(text)))

                callers.start_soon(blocking, "silent")
                await anyio.wait_all_tasks_blocked()
                callers.start_soon(blocking, "queued")
                await anyio.wait_all_tasks_blocked()
                stats = sup.statistics()
                assert (stats.live_tasks, stats.running_handlers, stats.queued) == (4, 2, 1)
                assert stats.provisional_tasks == 1
            assert sup.statistics().live_tasks == 0
            assert sup.statistics().running_handlers == 0
        assert sorted(finally_ran) == ["ask", "busy", "silent"]
        records = store.records()
        assert len(records) == 4
        for record in records:
            assert record.task.status.state is TaskState.CANCELED
            assert status_text(record.task) == SHUTDOWN_TEXT
        assert sorted(r.status.state.name for r in results) == ["CANCELED", "CANCELED"]


async def test_a_handler_tells_a_client_cancel_from_a_shutdown() -> None:
    seen: dict[str, bool] = {}

    async def watcher(ctx: TaskContext) -> None:
        assert not ctx.cancel_requested
        try:
            await ctx.ask("wait") if ctx.text == "ask" else await anyio.sleep_forever()
        finally:
            seen[ctx.text] = ctx.cancel_requested

    with anyio.fail_after(5):
        async with Supervisor(watcher) as sup:
            client = InProcessClient(sup)
            canceled = as_task(await client.send_message("cancel", return_immediately=True))
            await client.send_message("ask")
            await client.send_message("shutdown", return_immediately=True)
            await anyio.wait_all_tasks_blocked()
            await client.cancel_task(canceled.id)
            assert seen == {"cancel": True}
    assert seen == {"cancel": True, "ask": False, "shutdown": False}


async def test_shutdown_ends_open_streams() -> None:
    with anyio.fail_after(5):

        async def busy(ctx: TaskContext) -> None:
            await ctx.update("busy")
            await anyio.sleep_forever()

        seen: list[TaskState | None] = []
        async with anyio.create_task_group() as tg, Supervisor(busy) as sup:

            async def watch() -> None:
                async with InProcessClient(sup).stream("x") as events:
                    seen.extend([state_of(e) async for e in events])

            tg.start_soon(watch)
            await anyio.wait_all_tasks_blocked()
        assert seen == [TaskState.SUBMITTED, TaskState.WORKING, TaskState.CANCELED]


async def test_list_shows_live_and_finished_tasks() -> None:
    with anyio.fail_after(5):

        async def maybe_ask(ctx: TaskContext) -> str:
            if ctx.text == "ask":
                await ctx.ask("?")
            return "ok"

        async with Supervisor(maybe_ask) as sup:
            client = InProcessClient(sup)
            await client.send_message("ask")
            await client.send_message("done")
            states = {t.status.state for t in (await client.list_tasks()).tasks}
            assert states == {TaskState.INPUT_REQUIRED, TaskState.COMPLETED}
            working = await client.list_tasks(ListTasksRequest(status=TaskState.INPUT_REQUIRED))
            assert working.total_size == 1


async def test_cancel_of_a_queued_task_before_its_actor_ever_ran() -> None:
    with anyio.fail_after(5):
        started: list[str] = []

        async def blocker(ctx: TaskContext) -> None:
            started.append(ctx.text)
            await anyio.sleep_forever()

        async with Supervisor(blocker, max_running=1) as sup:
            client = InProcessClient(sup)
            first = as_task(await client.send_message("first", return_immediately=True))
            queued = as_task(await client.send_message("queued", return_immediately=True))
            canceled = await client.cancel_task(queued.id)  # no yield in between
            assert canceled.status.state is TaskState.CANCELED
            await client.cancel_task(first.id)
            assert started == ["first"]
            assert sup.statistics().queued == 0


async def test_cancel_reaches_agents_with_their_own_task_groups(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with anyio.fail_after(5):

        async def nested(ctx: TaskContext) -> None:
            async def child(fail: bool) -> None:
                try:
                    await anyio.sleep_forever()
                finally:
                    if fail:
                        raise ValueError("cleanup failed")

            await ctx.update("fan out")
            async with anyio.create_task_group() as tg:
                tg.start_soon(child, ctx.text == "messy")
                tg.start_soon(child, False)

        async with Supervisor(nested) as sup:
            client = InProcessClient(sup)
            for text in ("tidy", "messy"):
                task = as_task(await client.send_message(text, return_immediately=True))
                await anyio.wait_all_tasks_blocked()
                assert (await client.cancel_task(task.id)).status.state is TaskState.CANCELED
            still_serving = as_task(await client.send_message("tidy", return_immediately=True))
            assert still_serving.status.state is TaskState.SUBMITTED
        assert any("failed while cancelled" in r.getMessage() for r in caplog.records)


async def test_a_handler_that_swallows_the_cancellation_still_ends_canceled() -> None:
    with anyio.fail_after(5):

        async def stubborn(ctx: TaskContext) -> str:
            await ctx.update("working")
            try:
                await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                return "I refuse"  # deliberately wrong: swallows the cancellation
            return "unreachable"

        async with Supervisor(stubborn) as sup:
            client = InProcessClient(sup)
            task = as_task(await client.send_message("x", return_immediately=True))
            await anyio.wait_all_tasks_blocked()
            canceled = await client.cancel_task(task.id)
            assert canceled.status.state is TaskState.CANCELED


async def test_an_agent_emitting_in_a_loop_can_be_cancelled() -> None:
    with anyio.fail_after(5):

        async def spinner(ctx: TaskContext) -> None:
            i = 0
            while True:  # never awaits anything but its own updates
                i += 1
                await ctx.update(f"tick {i}")

        async with Supervisor(spinner, subscriber_buffer=1) as sup:
            client = InProcessClient(sup)
            task = as_task(await client.send_message("x", return_immediately=True))
            canceled = await client.cancel_task(task.id)
            assert canceled.status.state is TaskState.CANCELED


async def test_cancel_without_anyio_task_handles(monkeypatch: pytest.MonkeyPatch) -> None:
    """anyio < 4.14 returns no task handle: the actor then opens its own cancel scope."""
    with anyio.fail_after(5):
        monkeypatch.setattr(TaskActor, "attach", lambda self, handle: None)

        async def sleeper(ctx: TaskContext) -> None:
            await ctx.update("sleeping")
            await anyio.sleep_forever()

        async with Supervisor(sleeper) as sup:
            client = InProcessClient(sup)
            task = as_task(await client.send_message("x", return_immediately=True))
            canceled = await client.cancel_task(task.id)  # before the actor even ran
            assert canceled.status.state is TaskState.CANCELED
            task = as_task(await client.send_message("y", return_immediately=True))
            await anyio.wait_all_tasks_blocked()
            assert (await client.cancel_task(task.id)).status.state is TaskState.CANCELED


async def test_actor_statistics() -> None:
    with anyio.fail_after(5):

        async def asker(ctx: TaskContext) -> None:
            await ctx.ask("?")

        async with Supervisor(asker) as sup:
            client = InProcessClient(sup)
            task = as_task(await client.send_message("x"))
            actor = sup.get_actor(task.id)
            assert actor is not None
            async with client.subscribe(task.id):
                stats = actor.statistics()
            assert stats.task_id == task.id
            assert stats.state is TaskState.INPUT_REQUIRED
            assert stats.committed
            assert not stats.running
            assert not stats.queued
            assert (stats.mailbox_depth, stats.subscribers, stats.dropped_subscribers) == (0, 1, 0)
            stored = await sup.store.get(task.id)
            assert stored is not None
            assert stats.version == stored.version
