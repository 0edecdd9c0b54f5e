"""Restart recovery with a durable store: unfinished tasks fail loudly, interrupted ones resume."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from a2a_actors.protocol import (
    Message,
    Part,
    Role,
    SendMessageRequest,
    Task,
    TaskState,
    TaskStatus,
)
from a2a_actors.protocol._errors import TaskNotFoundError
from a2a_actors.runtime import Supervisor, TaskContext, agent
from a2a_actors.stores import SQLiteTaskStore, StoredTask
from a2a_actors.stores._sqlite import RESTART_TEXT

from .helpers import Recorder, as_task, state_of

pytestmark = pytest.mark.anyio

runs: list[tuple[bool, list[str]]] = []


@agent(name="city")
async def city_agent(ctx: TaskContext) -> str:
    runs.append((ctx.resumed, [m.text for m in ctx.history]))
    if ctx.resumed:  # restarted after a restart: the answer is the new message
        return f"weather in {ctx.text}"
    answer = await ctx.ask("Which city?")
    return f"weather in {answer.text}"


def user(text: str, *, task_id: str = "", context_id: str = "") -> SendMessageRequest:
    return SendMessageRequest(
        message=Message(
            message_id=f"m-{text}",
            role=Role.USER,
            parts=(Part(text=text),),
            task_id=task_id,
            context_id=context_id,
        )
    )


async def test_input_required_task_resumes_after_a_restart(tmp_path: Path) -> None:
    runs.clear()
    path = tmp_path / "tasks.db"
    with anyio.fail_after(10):
        async with (
            SQLiteTaskStore.open(path) as store,
            Supervisor(city_agent, store=store, keep_interrupted=True) as sup,
        ):
            parked = as_task(await sup.send_message(user("forecast")))
            assert parked.status.state is TaskState.INPUT_REQUIRED
        async with (
            SQLiteTaskStore.open(path) as store,
            Supervisor(city_agent, store=store, keep_interrupted=True) as sup,
        ):
            stored = await sup.get_task(parked.id)
            assert stored.status.state is TaskState.INPUT_REQUIRED
            done = as_task(await sup.send_message(user("Paris", task_id=parked.id)))
    assert done.status.state is TaskState.COMPLETED
    assert done.context_id == parked.context_id
    assert done.status.message is not None
    assert done.status.message.text == "weather in Paris"
    assert [m.text for m in done.history] == [
        "forecast",
        "Which city?",
        "Paris",
        "weather in Paris",
    ]
    assert runs == [(False, ["forecast"]), (True, ["forecast", "Which city?", "Paris"])]


async def test_without_keep_interrupted_shutdown_cancels_waiting_tasks(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    with anyio.fail_after(10):
        async with (
            SQLiteTaskStore.open(path) as store,
            Supervisor(city_agent, store=store) as sup,
        ):
            parked = as_task(await sup.send_message(user("forecast")))
        async with SQLiteTaskStore.open(path) as store:
            record = await store.get(parked.id)
    assert record is not None
    assert record.task.status.state is TaskState.CANCELED


async def test_unfinished_tasks_are_failed_at_start_and_observers_told(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    working = Task(id="w1", context_id="c1", status=TaskStatus(state=TaskState.WORKING))
    submitted = Task(id="s1", context_id="c1", status=TaskStatus(state=TaskState.SUBMITTED))
    recorder = Recorder()
    with anyio.fail_after(10):
        async with SQLiteTaskStore.open(path) as store:
            # What a killed process leaves behind.
            await store.save(StoredTask(working, "alice", 3))
            await store.save(StoredTask(submitted, None, 1))
        async with (
            SQLiteTaskStore.open(path) as store,
            Supervisor(city_agent, store=store, observers=[recorder]) as sup,
        ):
            failed = await sup.get_task("w1", caller="alice")
            with pytest.raises(TaskNotFoundError):
                await sup.get_task("w1")  # still owned by alice
            other = await sup.get_task("s1")
    for task in (failed, other):
        assert task.status.state is TaskState.FAILED
        assert task.status.message is not None
        assert task.status.message.text == RESTART_TEXT
    told = {(tid, owner, state_of(ev), terminal) for tid, owner, ev, terminal in recorder.events}
    assert told == {
        ("w1", "alice", TaskState.FAILED, True),
        ("s1", None, TaskState.FAILED, True),
    }
