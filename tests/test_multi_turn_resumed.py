"""``examples.multi_turn`` completes when resumed: after a restart with a durable store, the
next message is the answer to the question already asked (asked once, never again)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from a2a_actors.protocol import Message, Part, Role, SendMessageRequest, Task, TaskState
from a2a_actors.runtime import Supervisor
from a2a_actors.stores import SQLiteTaskStore
from examples.multi_turn import QUESTION, agent

pytestmark = pytest.mark.anyio


def user(text: str, *, task_id: str = "") -> SendMessageRequest:
    message = Message(
        message_id=f"m-{text}", role=Role.USER, parts=(Part(text=text),), task_id=task_id
    )
    return SendMessageRequest(message=message)


async def test_multi_turn_completes_after_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    with anyio.fail_after(10):
        async with (
            SQLiteTaskStore.open(path) as store,
            Supervisor(agent, store=store, keep_interrupted=True) as sup,
        ):
            asked = await sup.send_message(user("hi"))
            assert isinstance(asked, Task)
            assert asked.status.state is TaskState.INPUT_REQUIRED
        async with (
            SQLiteTaskStore.open(path) as store,
            Supervisor(agent, store=store, keep_interrupted=True) as sup,
        ):
            done = await sup.send_message(user("Ada", task_id=asked.id))
    assert isinstance(done, Task)
    assert done.status.state is TaskState.COMPLETED
    assert done.status.message is not None
    assert done.status.message.text == "Hello, Ada!"
    assert [m.text for m in done.history] == ["hi", QUESTION, "Ada", "Hello, Ada!"]
