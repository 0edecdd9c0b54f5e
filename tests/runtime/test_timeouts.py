"""Task deadlines (``Agent.timeout``, ``Supervisor(task_timeout=)``) and the bounded queue for
running slots (``max_queued``), in trio's virtual time (the autojump clock): no test waits
for real seconds."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from a2a_actors.protocol import ServerBusyError, TaskState
from a2a_actors.runtime import Agent, InProcessClient, Supervisor, TaskContext, agent

from .helpers import as_task, status_text

TIMEOUT_TEXT = "the task ran longer than its timeout of 5 s"


def worker(seconds: list[float], *, timeout: float | None = 5, ask: bool = False) -> Agent:
    """Works ``seconds[0]``, asks (when ``ask``), then works ``seconds[1]``; says when it
    was interrupted through ``interrupted``."""

    async def handler(ctx: TaskContext) -> str:
        await trio.sleep(seconds[0])
        if ask:
            await ctx.ask("more?")
        await trio.sleep(seconds[1])
        return "done"

    return Agent(handler=handler, name="worker", timeout=timeout)


async def test_a_handler_past_its_timeout_is_interrupted_and_the_task_fails(
    autojump_clock: trio.testing.MockClock,
) -> None:
    interrupted = trio.Event()

    @agent(timeout=5)
    async def hung(ctx: TaskContext) -> None:
        try:
            await trio.sleep_forever()
        finally:
            interrupted.set()

    with trio.fail_after(60):
        async with Supervisor(hung) as sup:
            started = trio.current_time()
            task = as_task(await InProcessClient(sup).send_message("go"))
            assert task.status.state is TaskState.FAILED
            assert status_text(task) == TIMEOUT_TEXT
            assert interrupted.is_set()
            assert trio.current_time() - started == pytest.approx(5)
            assert sup.statistics().running_handlers == 0


async def test_waiting_for_input_does_not_count(autojump_clock: trio.testing.MockClock) -> None:
    with trio.fail_after(600):
        async with Supervisor(worker([3, 1], ask=True)) as sup:
            client = InProcessClient(sup)
            asked = as_task(await client.send_message("go"))
            assert asked.status.state is TaskState.INPUT_REQUIRED
            await trio.sleep(100)  # far past the timeout, in virtual time
            done = as_task(await client.send_message("yes", task_id=asked.id))
            assert done.status.state is TaskState.COMPLETED  # 3 s + 1 s of running


async def test_the_time_before_and_after_a_question_adds_up(
    autojump_clock: trio.testing.MockClock,
) -> None:
    with trio.fail_after(600):
        async with Supervisor(worker([3, 3], ask=True)) as sup:
            client = InProcessClient(sup)
            asked = as_task(await client.send_message("go"))
            await trio.sleep(100)
            failed = as_task(await client.send_message("yes", task_id=asked.id))
            assert failed.status.state is TaskState.FAILED  # 3 s + 2 s, then interrupted
            assert status_text(failed) == TIMEOUT_TEXT


async def test_the_supervisor_timeout_applies_to_agents_without_their_own(
    autojump_clock: trio.testing.MockClock,
) -> None:
    with trio.fail_after(60):
        async with Supervisor(worker([1, 9], timeout=None), task_timeout=5) as sup:
            task = as_task(await InProcessClient(sup).send_message("go"))
            assert status_text(task) == TIMEOUT_TEXT
        async with Supervisor(worker([1, 9], timeout=20), task_timeout=5) as sup:
            task = as_task(await InProcessClient(sup).send_message("go"))
            assert task.status.state is TaskState.COMPLETED  # the agent's own timeout wins


async def test_a_cancel_of_a_timed_task_is_a_cancel(autojump_clock: trio.testing.MockClock) -> None:
    with trio.fail_after(60):
        async with Supervisor(worker([100, 0])) as sup:
            client = InProcessClient(sup)
            task = as_task(await client.send_message("go", return_immediately=True))
            await trio.testing.wait_all_tasks_blocked()
            canceled = await client.cancel_task(task.id)
            assert canceled.status.state is TaskState.CANCELED


def test_a_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match="timeout must be a positive number of seconds"):
        worker([0, 0], timeout=0)
    with pytest.raises(ValueError, match="task_timeout must be a positive number"):
        Supervisor(worker([0, 0]), task_timeout=-1)


async def test_past_max_queued_a_new_task_is_refused_and_hung_handlers_time_out(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Two hung handlers hold both slots; two tasks queue; the next is refused at once;
    once the hung ones time out, the queued ones run."""
    with trio.fail_after(60):
        async with Supervisor(
            worker([1000, 0], timeout=None), max_running=2, max_queued=2, task_timeout=5
        ) as sup:
            client = InProcessClient(sup)
            tasks = [
                as_task(await client.send_message(f"t{i}", return_immediately=True))
                for i in range(4)
            ]
            await trio.testing.wait_all_tasks_blocked()
            stats = sup.statistics()
            assert (stats.running_handlers, stats.queued) == (2, 2)
            with pytest.raises(
                ServerBusyError,
                match=r"^all 2 running slots are taken and 2 tasks wait for one \(limit 2\)",
            ):
                await client.send_message("t4", return_immediately=True)
            await trio.sleep(20)  # virtual time: 5 s for the first two, 5 more for the others
            for task in tasks:
                done = await client.get_task(task.id)
                assert (done.status.state, status_text(done)) == (TaskState.FAILED, TIMEOUT_TEXT)
            assert sup.statistics().queued == 0
