"""An actor's inbox alone: which client messages ``deliver`` takes, without running the actor,
and the Mailbox under it (made at the first item, bounded)."""

from __future__ import annotations

import datetime as dt

import anyio
import pytest

from a2a_actors.protocol import (
    InvalidParamsError,
    Message,
    Part,
    Role,
    ServerBusyError,
    TaskState,
    UnsupportedOperationError,
)
from a2a_actors.protocol._state import TaskMachine
from a2a_actors.runtime import TaskContext, agent
from a2a_actors.runtime._actor import ClientInput, TaskActor
from a2a_actors.runtime._admission import Admission
from a2a_actors.runtime._environment import ActorEnvironment
from a2a_actors.runtime._mailbox import Mailbox
from a2a_actors.stores._memory import MemoryTaskStore

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


@agent
async def idle(ctx: TaskContext) -> None:
    return None


def user(text: str, context_id: str = "") -> Message:
    return Message(message_id=text, role=Role.USER, parts=(Part(text=text),), context_id=context_id)


def actor_in(state: TaskState, mailbox_size: int = 4) -> TaskActor:
    env = ActorEnvironment(
        store=MemoryTaskStore(),
        admission=Admission(max_live=None, max_running=None),
        supervisor=None,
        mailbox_size=mailbox_size,
    )
    machine = TaskMachine("t-1", "c-1", timestamp=T0)
    first = machine.add_user_message(user("hi"))
    if state is not TaskState.SUBMITTED:
        machine.set_status(state, timestamp=T0)
    return TaskActor(env, machine, owner=None, agent=idle, message=first, extensions=frozenset())


@pytest.mark.parametrize(
    "state", [TaskState.SUBMITTED, TaskState.WORKING, TaskState.COMPLETED, TaskState.CANCELED]
)
def test_only_an_interrupted_task_takes_input(state: TaskState) -> None:
    actor = actor_in(state)
    with pytest.raises(UnsupportedOperationError):
        actor.deliver(user("x"), frozenset())
    assert actor.inbox is None  # nothing was made for a refused message


def test_an_interrupted_task_takes_one_message_at_a_time() -> None:
    actor = actor_in(TaskState.INPUT_REQUIRED)
    version = actor.machine.version
    assert actor.deliver(user("Paris"), frozenset({"urn:x"}), {"k": 1}, "acme") == version
    assert actor.inbox is not None
    assert actor.statistics().mailbox_depth == 1
    with pytest.raises(UnsupportedOperationError, match="still working"):
        actor.deliver(user("Rome"), frozenset())
    item = actor.inbox.receive_nowait()
    assert item == ClientInput(user("Paris"), frozenset({"urn:x"}), {"k": 1}, "acme")


def test_a_message_for_another_context_is_invalid() -> None:
    actor = actor_in(TaskState.AUTH_REQUIRED)
    with pytest.raises(InvalidParamsError, match="contextId"):
        actor.deliver(user("x", context_id="other"), frozenset())


def test_a_task_being_canceled_takes_no_input() -> None:
    actor = actor_in(TaskState.INPUT_REQUIRED)
    actor.request_cancel()
    with pytest.raises(UnsupportedOperationError):
        actor.deliver(user("x"), frozenset())


def test_a_closed_inbox_is_busy() -> None:
    actor = actor_in(TaskState.INPUT_REQUIRED)
    actor.inbox = Mailbox(1)
    actor.inbox.close()
    with pytest.raises(ServerBusyError, match="cannot take more input"):
        actor.deliver(user("x"), frozenset())


def test_the_mailbox_makes_its_list_at_the_first_item() -> None:
    box: Mailbox[int] = Mailbox(2)
    assert (len(box), box.statistics().depth) == (0, 0)
    with pytest.raises(anyio.WouldBlock):
        box.receive_nowait()
    box.send_nowait(1)
    box.send_nowait(2)
    with pytest.raises(anyio.WouldBlock):
        box.send_nowait(3)
    assert [box.receive_nowait(), box.receive_nowait()] == [1, 2]
    assert len(box) == 0
    box.close()
    with pytest.raises(anyio.EndOfStream):
        box.receive_nowait()
