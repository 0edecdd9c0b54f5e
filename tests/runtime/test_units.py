"""Unit tests of the runtime's small parts: agent spelling, mailbox, fanout, admission."""

from __future__ import annotations

import anyio
import pytest

from a2a_actors.protocol import (
    AgentSkill,
    ServerBusyError,
    StreamResponse,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_actors.runtime import Agent, SubscriberDropped, TaskContext, agent, as_agent
from a2a_actors.runtime._admission import Admission
from a2a_actors.runtime._fanout import Fanout
from a2a_actors.runtime._mailbox import Mailbox

pytestmark = pytest.mark.anyio


# --- agent ------------------------------------------------------------------------------


async def plain(ctx: TaskContext) -> str:
    """Echo the text back."""
    return ctx.text


def test_agent_decorator_bare_and_with_options() -> None:
    bare = agent(plain)
    assert isinstance(bare, Agent)
    assert (bare.name, bare.description, bare.handler) == ("plain", "Echo the text back.", plain)
    assert bare.input_modes == ("text/plain",)
    skill = AgentSkill(id="s", name="S", description="d", tags=("t",))
    made = agent(name="echo", description="Says it", version="2.0", skills=(skill,))(plain)
    assert (made.name, made.description, made.version, made.skills) == (
        "echo",
        "Says it",
        "2.0",
        (skill,),
    )


def test_as_agent_accepts_three_spellings() -> None:
    made = agent(plain)
    assert as_agent(made) is made
    assert as_agent(plain).handler is plain

    class Handler:
        """A class-based agent."""

        name = "klass"

        async def handle(self, ctx: TaskContext) -> None:
            return None

    obj = Handler()
    converted = as_agent(obj)
    assert (converted.name, converted.description) == ("klass", "A class-based agent.")
    assert converted.handler == obj.handle
    with pytest.raises(TypeError, match="expected an Agent"):
        as_agent(42)


# --- mailbox ----------------------------------------------------------------------------


async def test_mailbox_fifo_bounded_and_closing() -> None:
    with anyio.fail_after(5):
        box: Mailbox[int] = Mailbox(2)
        box.send_nowait(1)
        box.send_nowait(2)
        with pytest.raises(anyio.WouldBlock):
            box.send_nowait(3)
        assert box.statistics().depth == 2
        assert await box.receive() == 1
        assert box.receive_nowait() == 2
        with pytest.raises(anyio.WouldBlock):
            box.receive_nowait()
        box.send_nowait(4)
        box.close()
        with pytest.raises(anyio.ClosedResourceError):
            box.send_nowait(5)
        assert await box.receive() == 4
        with pytest.raises(anyio.EndOfStream):
            await box.receive()
        with pytest.raises(ValueError, match="at least 1"):
            Mailbox[int](0)


async def test_mailbox_receive_waits_and_allows_one_receiver() -> None:
    with anyio.fail_after(5):
        box: Mailbox[str] = Mailbox(1)
        got: list[str] = []

        async def receiver() -> None:
            got.append(await box.receive())

        async with anyio.create_task_group() as tg:
            tg.start_soon(receiver)
            await anyio.wait_all_tasks_blocked()
            assert box.statistics().receiver_waiting
            with pytest.raises(anyio.BusyResourceError):
                await box.receive()
            box.send_nowait("hello")
        assert got == ["hello"]

        with anyio.CancelScope() as scope:
            scope.cancel()
            await box.receive()
        assert not box.statistics().receiver_waiting  # a cancelled receive takes nothing
        box.send_nowait("after")
        assert await box.receive() == "after"


# --- fanout -----------------------------------------------------------------------------


def _task(state: TaskState = TaskState.WORKING) -> Task:
    return Task(id="t", context_id="c", status=TaskStatus(state=state))


def _update(state: TaskState) -> StreamResponse:
    status = TaskStatus(state=state)
    return StreamResponse(
        status_update=TaskStatusUpdateEvent(task_id="t", context_id="c", status=status)
    )


async def _drain(sub: object) -> list[StreamResponse]:
    assert hasattr(sub, "__anext__")
    return [event async for event in sub]  # type: ignore[attr-defined]


async def test_fanout_snapshot_then_newer_events_only() -> None:
    with anyio.fail_after(5):
        fanout = Fanout("t")
        snap = _task()
        sub = fanout.subscribe(8, snapshot=snap, version=5)
        working, done = _update(TaskState.WORKING), _update(TaskState.COMPLETED)
        for version, event in ((4, working), (5, working), (6, working)):
            fanout.publish(version, event, final=False, snapshot=snap, snapshot_version=6)
        fanout.publish(7, done, final=True, snapshot=snap, snapshot_version=7)
        assert await _drain(sub) == [StreamResponse(task=snap), working, done]
        assert sub.version == 7
        assert len(fanout) == 0


async def test_fanout_resync_replaces_the_first_event_by_the_snapshot() -> None:
    with anyio.fail_after(5):
        fanout = Fanout("t")
        sub = fanout.subscribe(8, resync=True)
        later = _task(TaskState.COMPLETED)
        fanout.publish(
            3, _update(TaskState.WORKING), final=False, snapshot=later, snapshot_version=4
        )
        fanout.publish(
            4, _update(TaskState.COMPLETED), final=True, snapshot=later, snapshot_version=4
        )
        assert await _drain(sub) == [StreamResponse(task=later)]


async def test_fanout_drops_a_full_subscriber_without_touching_others() -> None:
    with anyio.fail_after(5):
        fanout = Fanout("t")
        slow = fanout.subscribe(2, version=0)
        fast = fanout.subscribe(10, version=0)
        closed = fanout.subscribe(10, version=0)
        closed.close()
        snap = _task()
        dropped = 0
        for version in range(1, 5):
            dropped += fanout.publish(
                version,
                _update(TaskState.WORKING),
                final=False,
                snapshot=snap,
                snapshot_version=version,
            )
        assert dropped == 1
        assert fanout.statistics().subscribers == 1
        assert fanout.statistics().dropped == 1
        assert slow.dropped
        got = [await slow.__anext__(), await slow.__anext__()]
        assert len(got) == 2
        with pytest.raises(SubscriberDropped, match="fell more than 2 events behind"):
            await slow.__anext__()
        fanout.end_all()
        assert len(await _drain(fast)) == 4
        assert await _drain(closed) == []


# --- admission --------------------------------------------------------------------------


def test_admission_live_cap_counts_nothing_when_refusing() -> None:
    adm = Admission(max_live=2, max_running=None)
    adm.admit()
    adm.admit()
    with pytest.raises(ServerBusyError, match="too many live tasks"):
        adm.admit()
    assert adm.statistics().live == 2
    adm.retire()
    adm.admit()
    with pytest.raises(ValueError, match="max_running"):
        Admission(max_live=None, max_running=0)


async def test_admission_grants_slots_in_fifo_order_and_skips_abandoned() -> None:
    with anyio.fail_after(5):
        adm = Admission(max_live=None, max_running=1)
        assert adm.try_run()
        tickets = [adm.enqueue() for _ in range(3)]
        assert not adm.try_run()  # nobody barges in while others queue
        adm.abandon(tickets[1])
        assert adm.statistics().queued == 2
        adm.release()
        await adm.wait(tickets[0])  # granted: returns at once, holding the slot
        assert not tickets[2].granted
        adm.release()
        await adm.wait(tickets[2])
        assert not tickets[1].granted
        assert adm.statistics().running == 1
        adm.release()
        assert adm.statistics().running == 0


async def test_admission_cancelled_waiter_passes_a_granted_slot_on() -> None:
    with anyio.fail_after(5):
        adm = Admission(max_live=None, max_running=1)
        assert adm.try_run()
        first, second = adm.enqueue(), adm.enqueue()
        with anyio.CancelScope() as scope:
            adm.release()  # granted to first...
            scope.cancel()
            await adm.wait(first)  # ...but first is cancelled: the slot moves on
        assert second.granted
        assert adm.statistics() == type(adm.statistics())(live=0, running=1, queued=0)


def test_subscription_next_nowait() -> None:
    from a2a_actors.protocol._models import Message, Part, Role, StreamResponse

    def event(text: str) -> StreamResponse:
        return StreamResponse(
            message=Message(message_id=text, role=Role.AGENT, parts=(Part(text=text),))
        )

    fanout = Fanout("t")
    sub = fanout.subscribe(4)
    assert sub.next_nowait() is None
    snapshot = _task()
    fanout.publish(1, event("a"), final=False, snapshot=snapshot, snapshot_version=1)
    fanout.publish(2, event("b"), final=True, snapshot=snapshot, snapshot_version=2)
    first = sub.next_nowait()
    assert first is not None
    assert first.message is not None
    assert first.message.message_id == "a"
    assert sub.version == 1
    second = sub.next_nowait()
    assert second is not None
    assert sub.version == 2
    assert sub.next_nowait() is None  # ended: reported by __anext__, not here


def test_subscription_ready_says_whether_anext_would_wait() -> None:
    from a2a_actors.protocol._models import Message, Part, Role, StreamResponse

    message = Message(message_id="m", role=Role.AGENT, parts=(Part(text="m"),))
    snapshot = _task()
    fanout = Fanout("t")
    sub, closed, dropped = fanout.subscribe(4), fanout.subscribe(4), fanout.subscribe(1)
    assert not sub.ready()  # open and empty: __anext__ would wait
    fanout.publish(
        1, StreamResponse(message=message), final=False, snapshot=snapshot, snapshot_version=1
    )
    assert sub.ready()  # an event is buffered
    assert sub.next_nowait() is not None
    assert not sub.ready()
    closed.close()
    assert closed.ready()  # closed: __anext__ ends at once
    fanout.publish(
        2, StreamResponse(message=message), final=False, snapshot=snapshot, snapshot_version=2
    )
    assert dropped.dropped  # its buffer of one overflowed
    assert dropped.ready()  # __anext__ raises SubscriberDropped at once
    fanout.publish(
        3, StreamResponse(message=message), final=True, snapshot=snapshot, snapshot_version=3
    )
    assert sub.next_nowait() is not None
    assert sub.next_nowait() is not None
    assert sub.ready()  # ended: __anext__ stops at once
