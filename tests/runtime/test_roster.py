"""The supervisor's fields alone: a TaskRoster with TaskStreams and TaskQueries over it, a
real environment, a memory store and actors spawned in the test's own task group."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest

from a2a_actors.protocol import (
    Message,
    Part,
    Role,
    ServerBusyError,
    TaskNotFoundError,
    TaskState,
    UnsupportedOperationError,
)
from a2a_actors.protocol._models import Task, TaskStatus
from a2a_actors.protocol._requests import ListTasksRequest, SendMessageRequest
from a2a_actors.runtime import TaskContext, agent
from a2a_actors.runtime._admission import Admission
from a2a_actors.runtime._environment import ActorEnvironment
from a2a_actors.runtime._queries import TaskQueries
from a2a_actors.runtime._retention import Retention
from a2a_actors.runtime._roster import TaskRoster
from a2a_actors.runtime._streams import TaskStreams
from a2a_actors.stores._base import StoredTask
from a2a_actors.stores._memory import MemoryTaskStore

from .helpers import Recorder, state_of

pytestmark = pytest.mark.anyio

S = TaskState


@agent
async def asker(ctx: TaskContext) -> str:
    answer = await ctx.ask("which city?")
    return f"{ctx.resumed}:{answer.text}"


def request(text: str, task_id: str = "") -> SendMessageRequest:
    return SendMessageRequest(
        message=Message(message_id=text, role=Role.USER, parts=(Part(text=text),), task_id=task_id)
    )


def new_roster(store: MemoryTaskStore, recorder: Recorder) -> TaskRoster:
    ids = iter(f"id-{i}" for i in range(100))
    env = ActorEnvironment(
        store=store,
        admission=Admission(max_live=2, max_running=None),
        supervisor=None,
        observers=[recorder],
    )
    roster = TaskRoster(
        env, agent=asker, retention=Retention(max_tasks=10), id_factory=ids.__next__
    )
    env.task_ended = roster.task_ended
    return roster


@asynccontextmanager
async def running(roster: TaskRoster) -> AsyncIterator[TaskRoster]:
    async with anyio.create_task_group() as tg:
        roster.spawn = tg.start_soon
        try:
            yield roster
        finally:
            roster.spawn = None
            tg.cancel_scope.cancel()


async def test_a_roster_that_is_not_running_refuses_work() -> None:
    with anyio.fail_after(5):
        roster = new_roster(MemoryTaskStore(), Recorder())
        with pytest.raises(ServerBusyError, match="not running"):
            await roster.create(request("x"), None, frozenset(), commit=False)
        assert roster.env.admission.statistics().live == 0


async def test_create_counts_a_provisional_actor_that_queries_cannot_see() -> None:
    with anyio.fail_after(5):
        store, recorder = MemoryTaskStore(), Recorder()
        async with running(new_roster(store, recorder)) as roster:
            actor, sub = await roster.create(request("x"), "alice", frozenset(), commit=False)
            assert sub is None
            assert roster.actors == {"id-0": actor}
            assert roster.env.admission.statistics().live == 1
            queries = TaskQueries(roster)
            with pytest.raises(TaskNotFoundError):  # provisional until it acts
                await queries.get_task("id-0", caller="alice")
            await actor.publication.wait_settled()
            assert (await queries.get_task("id-0", caller="alice")).status.state is S.INPUT_REQUIRED
            with pytest.raises(TaskNotFoundError):  # another caller's task reads as unknown
                await queries.check_access("id-0", caller="bob")
            listed = await queries.list_tasks(ListTasksRequest(), caller="alice")
            assert [t.id for t in listed.tasks] == ["id-0"]


async def test_task_ended_forgets_the_actor_and_hands_it_to_retention() -> None:
    with anyio.fail_after(5):
        store, recorder = MemoryTaskStore(), Recorder()
        async with running(new_roster(store, recorder)) as roster:
            actor, _ = await roster.create(request("x"), None, frozenset(), commit=True)
            actor.request_cancel()
            await actor.publication.wait_ended()
            assert roster.actors == {}
            assert roster.env.admission.statistics().live == 0
            assert len(roster.retention) == 1


async def test_the_live_cap_refuses_before_anything_exists() -> None:
    with anyio.fail_after(5):
        store, recorder = MemoryTaskStore(), Recorder()
        async with running(new_roster(store, recorder)) as roster:
            for text in ("a", "b"):
                await roster.create(request(text), None, frozenset(), commit=True)
            with pytest.raises(ServerBusyError):
                await roster.create(request("c"), None, frozenset(), commit=True)
            assert sorted(roster.actors) == ["id-0", "id-2"]


async def test_a_stored_interrupted_task_gets_a_new_actor_from_its_next_message() -> None:
    with anyio.fail_after(5):
        store, recorder = MemoryTaskStore(), Recorder()
        now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
        first = request("weather").message
        stored = Task(
            id="old",
            context_id="c",
            status=TaskStatus(state=S.INPUT_REQUIRED, timestamp=now),
            history=(first,),
        )
        await store.save(StoredTask(stored, "alice", 3))
        async with running(new_roster(store, recorder)) as roster:
            with pytest.raises(TaskNotFoundError):
                await roster.resume_target(request("Paris", "old").message, "bob")
            actor = await roster.resume_target(request("Paris", "old").message, "alice")
            assert roster.actors == {"old": actor}
            after = actor.deliver(request("Paris", "old").message, frozenset())
            await actor.publication.wait_settled(after)
            # The handler started again from the beginning, so it asks again.
            again = actor.publication.published
            assert again is not None
            assert again.status.state is S.INPUT_REQUIRED
            assert [m.text for m in again.history][:2] == ["weather", "Paris"]
            after = actor.deliver(request("Rome", "old").message, frozenset())
            await actor.publication.wait_settled(after)
            done = actor.publication.published
            assert done is not None
            assert done.status.message is not None
            assert (done.status.state, done.status.message.text) == (S.COMPLETED, "True:Rome")


async def test_cancel_stored_cancels_in_the_store_and_tells_the_observers() -> None:
    with anyio.fail_after(5):
        store, recorder = MemoryTaskStore(), Recorder()
        now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
        task = Task(id="old", context_id="c", status=TaskStatus(state=S.WORKING, timestamp=now))
        await store.save(StoredTask(task, None, 2))
        roster = new_roster(store, recorder)
        canceled = await roster.cancel_stored(await roster.stored("old", None), {"why": "x"})
        assert canceled.status.state is S.CANCELED
        record = await store.get("old")
        assert record is not None
        assert (record.task.status.state, record.version) == (S.CANCELED, 3)
        [(_, _, event, terminal)] = recorder.events
        assert event.status_update is not None
        assert event.status_update.metadata == {"why": "x"}
        assert terminal


async def test_streams_refuse_before_the_first_event_and_subscribe_to_live_tasks() -> None:
    with anyio.fail_after(5):
        store, recorder = MemoryTaskStore(), Recorder()
        async with running(new_roster(store, recorder)) as roster:
            streams = TaskStreams(roster)
            with pytest.raises(TaskNotFoundError):
                async with streams.subscribe("nope"):
                    pass
            async with streams.stream_message(request("x")) as sub:
                states = [state_of(event) async for event in sub]
            assert states == [S.SUBMITTED, S.INPUT_REQUIRED]
            async with streams.subscribe("id-0") as sub:
                first = await sub.__anext__()
                assert state_of(first) is S.INPUT_REQUIRED
            actor = roster.actors["id-0"]
            actor.request_cancel()
            await actor.publication.wait_ended()
            with pytest.raises(UnsupportedOperationError, match="terminal state"):
                async with streams.subscribe("id-0"):
                    pass
