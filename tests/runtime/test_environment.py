"""ActorEnvironment alone: what a supervisor shares with its actors, and its notify contract."""

from __future__ import annotations

import logging

import pytest

from a2a_actors.protocol import Message, Part, Role, StreamResponse
from a2a_actors.runtime._admission import Admission
from a2a_actors.runtime._environment import ActorEnvironment, EventObserver
from a2a_actors.stores._memory import MemoryTaskStore

from .helpers import Recorder


class Broken:
    def task_event(
        self,
        task_id: str,
        owner: str | None,
        event: StreamResponse,
        *,
        terminal: bool,
        version: int = 0,
    ) -> None:
        raise RuntimeError("observer bug")


class Ended:
    task_id = "t-9"


def env(*observers: EventObserver) -> ActorEnvironment:
    return ActorEnvironment(
        store=MemoryTaskStore(),
        admission=Admission(max_live=None, max_running=None),
        observers=observers,
    )


def test_defaults() -> None:
    e = env()
    assert (e.observers, e.mailbox_size, e.subscriber_buffer) == ((), 64, 256)
    assert (e.keep_interrupted, e.evict, e.dropped_subscribers) == (False, None, 0)
    assert e.supervisor is None
    e.task_ended(Ended(), True)  # the default callback does nothing


def test_notify_reaches_every_observer_in_order_and_never_raises(
    caplog: pytest.LogCaptureFixture,
) -> None:
    first, last = Recorder(), Recorder()
    e = env(first, Broken(), last)
    event = StreamResponse(
        message=Message(message_id="m", role=Role.AGENT, parts=(Part(text="x"),))
    )
    with caplog.at_level(logging.ERROR, logger="a2a_actors.runtime"):
        e.notify("t-1", "alice", event, terminal=False)
    assert first.events == [("t-1", "alice", event, False)]
    assert last.events == [("t-1", "alice", event, False)]
    assert "task t-1: event observer failed" in caplog.text
    e.notify("t-2", None, event)
    assert last.events[-1] == ("t-2", None, event, True)  # terminal unless told otherwise
