"""Publication alone: a machine, a memory store, a recording observer; no actor, no supervisor."""

from __future__ import annotations

import datetime as dt

import anyio
import pytest

from a2a_actors.protocol import Message, Part, Role, TaskState
from a2a_actors.protocol._errors import IllegalTransitionError
from a2a_actors.protocol._models import Artifact
from a2a_actors.protocol._state import TaskMachine
from a2a_actors.runtime._admission import Admission
from a2a_actors.runtime._environment import ActorEnvironment, EndedTask
from a2a_actors.runtime._publication import Publication
from a2a_actors.stores._base import StoredTask
from a2a_actors.stores._memory import MemoryTaskStore

from .helpers import Recorder, state_of

pytestmark = pytest.mark.anyio

S = TaskState
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def user(text: str) -> Message:
    return Message(message_id=text, role=Role.USER, parts=(Part(text=text),))


def agent_says(text: str) -> Message:
    return Message(message_id="a-" + text, role=Role.AGENT, parts=(Part(text=text),))


class Ends:
    """A ``task_ended`` callback that records its calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[EndedTask, bool]] = []

    def __call__(self, ended: EndedTask, stored: bool) -> None:
        self.calls.append((ended, stored))


class GatedStore(MemoryTaskStore):
    """A memory store whose saves wait for ``gate`` (when set) or fail (``fail`` times)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate: anyio.Event | None = None
        self.entered = anyio.Event()
        self.fail = 0

    async def save(self, record: StoredTask) -> None:
        if self.fail:
            self.fail -= 1
            raise OSError("disk full")
        if self.gate is not None:
            self.entered.set()
            await self.gate.wait()
        await super().save(record)


def make(
    store: MemoryTaskStore | None = None,
) -> tuple[Publication, MemoryTaskStore, Recorder, Ends]:
    store = store if store is not None else MemoryTaskStore()
    recorder, ends = Recorder(), Ends()
    env = ActorEnvironment(
        store=store,
        admission=Admission(max_live=None, max_running=None),
        observers=[recorder],
        subscriber_buffer=8,
        task_ended=ends,
    )
    machine = TaskMachine("t-1", "c-1", timestamp=T0)
    machine.add_user_message(user("hi"))
    return Publication(machine, "alice", env), store, recorder, ends


async def test_a_new_task_is_provisional_until_committed() -> None:
    with anyio.fail_after(5):
        pub, store, recorder, _ = make()
        assert (pub.committed, pub.published, pub.published_version) == (False, None, 0)
        assert await store.get("t-1") is None
        await pub.commit()
        stored = await store.get("t-1")
        assert stored is not None
        assert stored.owner == "alice"
        assert pub.published == stored.task
        assert pub.published_version == stored.version
        assert [state_of(e) for e in recorder.for_task("t-1")] == [S.SUBMITTED]
        await pub.commit()  # idempotent: nothing stored or published again
        assert len(recorder.events) == 1


async def test_the_first_change_commits_and_readers_see_only_what_is_stored() -> None:
    with anyio.fail_after(5):
        store = GatedStore()
        pub, _, recorder, _ = make(store)
        sub = pub.subscribe("all")
        store.gate = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(pub.emit_status, S.WORKING)
            await store.entered.wait()
            # Saving: nothing is published yet, to readers, subscribers or observers.
            assert pub.published is None
            assert not sub.ready()
            assert recorder.events == []
            store.gate.set()
        assert pub.published is not None
        assert pub.published.status.state is S.WORKING
        assert [state_of(e) for e in recorder.for_task("t-1")] == [S.SUBMITTED, S.WORKING]
        first, second = sub.next_nowait(), sub.next_nowait()
        assert first is not None
        assert second is not None
        assert (state_of(first), state_of(second)) == (S.SUBMITTED, S.WORKING)


async def test_a_failed_flush_keeps_its_events_for_the_next_one() -> None:
    with anyio.fail_after(5):
        store = GatedStore()
        pub, _, recorder, _ = make(store)
        await pub.commit()
        store.fail = 1
        with pytest.raises(OSError, match="disk full"):
            await pub.emit_status(S.WORKING, message=agent_says("one"))
        assert pub.published is not None
        assert pub.published.status.state is S.SUBMITTED
        await pub.emit_status(S.WORKING, message=agent_says("two"))
        states = [state_of(e) for e in recorder.for_task("t-1")]
        assert states == [S.SUBMITTED, S.WORKING, S.WORKING]  # no gap
        stored = await store.get("t-1")
        assert stored is not None
        assert stored.version == pub.published_version


async def test_discard_unstored_forgets_a_final_state_the_store_refused() -> None:
    with anyio.fail_after(5):
        store = GatedStore()
        pub, _, recorder, _ = make(store)
        await pub.emit_status(S.WORKING)
        store.fail = 1
        with pytest.raises(OSError, match="disk full"):
            await pub.emit_status(S.COMPLETED, message=agent_says("done"))
        assert pub.machine.terminal
        pub.discard_unstored()
        assert pub.machine.state is S.WORKING
        assert pub.machine.version == pub.published_version
        pub.terminate(S.FAILED, agent_says("could not store"))
        await pub.flush()
        states = [state_of(e) for e in recorder.for_task("t-1")]
        assert states == [S.SUBMITTED, S.WORKING, S.FAILED]  # COMPLETED was never seen
        stored = await store.get("t-1")
        assert stored is not None
        assert stored.task.status.state is S.FAILED
        assert pub.ended


async def test_discard_unstored_returns_a_never_stored_task_to_its_creation() -> None:
    # The first change is the final one and the store refuses it: the task never existed
    # in the store, and fails from its creation (no artifact, no COMPLETED seen).
    with anyio.fail_after(5):
        store = GatedStore()
        pub, _, recorder, _ = make(store)
        created = pub.machine.version
        await pub.emit_artifact(Artifact(artifact_id="a", parts=(Part(text="x"),)), flush=False)
        store.fail = 1
        with pytest.raises(OSError, match="disk full"):
            await pub.emit_status(S.COMPLETED, message=agent_says("done"))
        pub.discard_unstored()
        assert (pub.machine.state, pub.machine.version) == (S.SUBMITTED, created)
        assert pub.committed
        pub.terminate(S.FAILED, agent_says("could not store"))
        await pub.flush()
        states = [state_of(e) for e in recorder.for_task("t-1")]
        assert states == [S.SUBMITTED, S.FAILED]  # the Task snapshot, then the failure
        stored = await store.get("t-1")
        assert stored is not None
        assert stored.task.status.state is S.FAILED
        assert stored.task.artifacts == ()


async def test_discard_unstored_leaves_a_provisional_task_alone() -> None:
    pub, _, _, _ = make()
    version = pub.machine.version
    pub.discard_unstored()
    assert (pub.machine.version, pub.committed) == (version, False)


async def test_an_illegal_change_raises_and_changes_nothing() -> None:
    with anyio.fail_after(5):
        pub, _, recorder, _ = make()
        await pub.emit_status(S.COMPLETED)
        version = pub.published_version
        with pytest.raises(IllegalTransitionError):
            await pub.emit_status(S.WORKING)
        with pytest.raises(IllegalTransitionError):
            await pub.emit_artifact(Artifact(artifact_id="a", parts=(Part(text="x"),)))
        assert pub.published_version == version
        assert len(recorder.events) == 2


async def test_a_reply_while_provisional_discards_the_task() -> None:
    with anyio.fail_after(5):
        pub, store, recorder, ends = make()
        sub = pub.subscribe("all")
        await pub.reply(agent_says("hello"))
        assert pub.reply_message is not None
        assert pub.reply_message.context_id == "c-1"
        assert pub.ended
        assert ends.calls == [(pub, False)]
        assert await store.get("t-1") is None
        assert recorder.events == []
        event = sub.next_nowait()
        assert event is not None
        assert event.message is not None
        with pytest.raises(StopAsyncIteration):
            await sub.__anext__()
        with pytest.raises(IllegalTransitionError):  # a second answer is refused
            await pub.reply(agent_says("again"))


async def test_a_reply_after_the_commit_completes_the_task() -> None:
    with anyio.fail_after(5):
        pub, _, _, ends = make()
        await pub.commit()
        await pub.reply(agent_says("done"))
        assert pub.reply_message is None
        assert pub.published is not None
        assert pub.published.status.state is S.COMPLETED
        assert ends.calls == [(pub, True)]


async def test_terminate_queues_a_final_state_that_the_next_flush_publishes() -> None:
    with anyio.fail_after(5):
        pub, _, recorder, ends = make()
        pub.terminate(S.CANCELED, None, {"reason": "user"})
        assert pub.committed
        assert not pub.ended
        await pub.flush_pending()
        update = recorder.events[-1][2].status_update
        assert update is not None
        assert update.status.state is S.CANCELED
        assert update.metadata == {"reason": "user"}
        assert recorder.events[-1][3] is True  # terminal
        assert pub.ended
        assert len(ends.calls) == 1
        pub.end()  # idempotent
        assert len(ends.calls) == 1


async def test_waiters_wake_on_the_states_they_wait_for() -> None:
    with anyio.fail_after(5):
        pub, _, _, _ = make()
        settled = anyio.Event()

        async def wait_settled() -> None:
            await pub.wait_settled()
            settled.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(wait_settled)
            await anyio.wait_all_tasks_blocked()
            await pub.emit_status(S.WORKING)
            await anyio.wait_all_tasks_blocked()
            assert not settled.is_set()
            await pub.emit_status(S.INPUT_REQUIRED, message=agent_says("?"))
        assert settled.is_set()
        after = pub.published_version
        async with anyio.create_task_group() as tg:
            tg.start_soon(pub.wait_published, after)
            tg.start_soon(pub.wait_ended)
            await anyio.wait_all_tasks_blocked()
            await pub.emit_status(S.FAILED)


async def test_publish_unstored_frees_waiters_when_the_store_is_broken() -> None:
    with anyio.fail_after(5):
        store = GatedStore()
        pub, _, _, _ = make(store)
        await pub.commit()
        pub.terminate(S.FAILED, agent_says("broken"))
        store.fail = 1
        with pytest.raises(OSError, match="disk full"):
            await pub.flush()
        pub.publish_unstored()
        assert pub.published is not None
        assert pub.published.status.state is S.FAILED
        assert pub.ended


async def test_subscribers_count_and_drops_reach_the_environment() -> None:
    with anyio.fail_after(5):
        pub, _, _, _ = make()
        assert pub.fanout_statistics().subscribers == 0
        await pub.commit()
        sub = pub.subscribe("snapshot")
        assert pub.fanout_statistics().subscribers == 1
        for i in range(9):  # the buffer holds 8 (the snapshot is one of them)
            await pub.emit_status(S.WORKING, message=agent_says(str(i)))
        stats = pub.fanout_statistics()
        assert (stats.subscribers, stats.dropped) == (0, 1)
        assert pub.env.dropped_subscribers == 1
        assert sub.dropped
