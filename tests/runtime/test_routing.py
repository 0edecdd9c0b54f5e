"""Message routing, identifiers, history, returnImmediately and historyLength."""

from __future__ import annotations

import anyio
import pytest

from a2a_actors.protocol import (
    InvalidParamsError,
    ListTasksRequest,
    Message,
    Part,
    Role,
    ServerBusyError,
    TaskNotFoundError,
    TaskState,
    UnsupportedOperationError,
)
from a2a_actors.runtime import InProcessClient, Supervisor, TaskContext
from a2a_actors.runtime._inprocess import user_message

from .helpers import as_task, status_text, texts

pytestmark = pytest.mark.anyio


async def echo(ctx: TaskContext) -> str:
    return f"echo: {ctx.text}"


async def test_new_task_completes_with_the_returned_text() -> None:
    with anyio.fail_after(5):
        async with Supervisor(echo) as sup:
            task = as_task(await InProcessClient(sup).send_message("hi"))
            assert task.status.state is TaskState.COMPLETED
            assert status_text(task) == "echo: hi"
            assert texts(task) == ["hi", "echo: hi"]
            assert task.id
            assert task.context_id
            assert all(
                m.task_id == task.id and m.context_id == task.context_id for m in task.history
            )
            assert [m.role for m in task.history] == [Role.USER, Role.AGENT]
            stored = await sup.get_task(task.id)
            assert stored == task


async def test_context_id_is_kept_or_generated() -> None:
    with anyio.fail_after(5):
        ids = iter(["task-1", "ctx-generated", "task-2"])
        async with Supervisor(echo, id_factory=lambda: next(ids)) as sup:
            client = InProcessClient(sup)
            generated = as_task(await client.send_message("a"))
            assert (generated.id, generated.context_id) == ("task-1", "ctx-generated")
            mine = as_task(await client.send_message("b", context_id="my-own-ctx"))
            assert (mine.id, mine.context_id) == ("task-2", "my-own-ctx")


async def test_unknown_task_id_is_not_found() -> None:
    with anyio.fail_after(5):
        async with Supervisor(echo) as sup:
            with pytest.raises(TaskNotFoundError, match="Task client-made-id not found"):
                await InProcessClient(sup).send_message("x", task_id="client-made-id")
            assert sup.statistics().live_tasks == 0


async def test_message_to_a_terminal_task_is_unsupported() -> None:
    with anyio.fail_after(5):
        async with Supervisor(echo) as sup:
            client = InProcessClient(sup)
            task = as_task(await client.send_message("x"))
            with pytest.raises(UnsupportedOperationError, match="terminal state"):
                await client.send_message("again", task_id=task.id)


async def ask_twice(ctx: TaskContext) -> str:
    first = await ctx.ask("Which city?")
    second = await ctx.ask(f"When in {first.text}?")
    return f"{first.text} {second.text}"


async def test_resume_infers_the_context_and_rejects_another_one() -> None:
    with anyio.fail_after(5):
        async with Supervisor(ask_twice) as sup:
            client = InProcessClient(sup)
            task = as_task(await client.send_message("weather", context_id="ctx-1"))
            assert task.status.state is TaskState.INPUT_REQUIRED
            with pytest.raises(InvalidParamsError, match="does not match") as info:
                await client.send_message("Paris", task_id=task.id, context_id="other")
            assert info.value.field == "message.contextId"
            resumed = as_task(await client.send_message("Paris", task_id=task.id))
            assert resumed.context_id == "ctx-1"
            assert resumed.history[-2].context_id == "ctx-1"  # the follow-up got it too
            assert resumed.status.state is TaskState.INPUT_REQUIRED
            same = as_task(await client.send_message("today", task_id=task.id, context_id="ctx-1"))
            assert same.status.state is TaskState.COMPLETED
            assert status_text(same) == "Paris today"


async def test_history_keeps_every_user_message_in_order_even_repeated_ids() -> None:
    with anyio.fail_after(5):
        async with Supervisor(ask_twice) as sup:
            client = InProcessClient(sup)

            def same_id(text: str) -> Message:
                return Message(message_id="tck-reused", role=Role.USER, parts=(Part(text=text),))

            task = as_task(await client.send_message(same_id("one")))
            await client.send_message(same_id("two"), task_id=task.id)
            done = as_task(await client.send_message(same_id("three"), task_id=task.id))
            assert texts(done) == [
                "one",
                "Which city?",
                "two",
                "When in two?",
                "three",
                "two three",
            ]
            user = [m for m in done.history if m.role is Role.USER]
            assert [m.message_id for m in user] == ["tck-reused"] * 3


async def test_message_to_a_working_task_is_refused_with_a_clear_reason() -> None:
    with anyio.fail_after(5):
        release = anyio.Event()

        async def busy(ctx: TaskContext) -> None:
            await ctx.update("working")
            await release.wait()

        async with Supervisor(busy) as sup:
            client = InProcessClient(sup)
            task = as_task(await client.send_message("go", return_immediately=True))
            await anyio.wait_all_tasks_blocked()
            with pytest.raises(
                UnsupportedOperationError,
                match=r"^task is still working; wait for input-required or a terminal state$",
            ):
                await client.send_message("more", task_id=task.id)
            release.set()


async def test_a_second_answer_before_the_first_is_taken_is_refused() -> None:
    with anyio.fail_after(5):
        async with Supervisor(ask_twice) as sup:
            client = InProcessClient(sup)
            task = as_task(await client.send_message("weather"))
            actor = sup.get_actor(task.id)
            assert actor is not None
            actor.deliver(user_message("Paris", task_id=task.id), frozenset())
            with pytest.raises(UnsupportedOperationError, match="still working"):
                await client.send_message("Rome", task_id=task.id)
            assert sup.statistics().mailbox_depth == 1


async def test_agent_role_message_is_refused_and_nothing_is_created() -> None:
    with anyio.fail_after(5):
        async with Supervisor(echo) as sup:
            bad = Message(message_id="m", role=Role.AGENT, parts=(Part(text="x"),))
            with pytest.raises(InvalidParamsError, match="ROLE_USER"):
                await InProcessClient(sup).send_message(bad)
            assert sup.statistics().live_tasks == 0
            assert (await sup.list_tasks(ListTasksRequest())).total_size == 0


async def test_return_immediately_gives_the_submitted_task() -> None:
    with anyio.fail_after(5):
        go = anyio.Event()

        async def slow(ctx: TaskContext) -> str:
            await go.wait()
            return "done"

        async with Supervisor(slow) as sup:
            client = InProcessClient(sup)
            task = as_task(await client.send_message("x", return_immediately=True))
            assert task.status.state is TaskState.SUBMITTED
            assert (await client.get_task(task.id)).status.state is TaskState.SUBMITTED
            go.set()
            async with client.subscribe(task.id) as events:
                states = [e.status_update.status.state async for e in events if e.status_update]
            assert states == [TaskState.COMPLETED]
            assert (await client.get_task(task.id)).status.state is TaskState.COMPLETED


async def test_blocking_send_returns_at_an_interrupted_state() -> None:
    with anyio.fail_after(5):

        async def needs_auth(ctx: TaskContext) -> str:
            await ctx.update("starting")
            token = await ctx.require_auth("Please sign in")
            return f"signed in as {token.text}"

        async with Supervisor(needs_auth) as sup:
            client = InProcessClient(sup)
            task = as_task(await client.send_message("x"))
            assert task.status.state is TaskState.AUTH_REQUIRED
            assert status_text(task) == "Please sign in"
            assert sup.statistics().interrupted == 1
            done = as_task(await client.send_message("bob", task_id=task.id))
            assert status_text(done) == "signed in as bob"


async def test_resume_with_return_immediately_returns_the_working_task() -> None:
    with anyio.fail_after(5):
        go = anyio.Event()

        async def asks_then_waits(ctx: TaskContext) -> None:
            await ctx.ask("?")
            await go.wait()

        async with Supervisor(asks_then_waits) as sup:
            client = InProcessClient(sup)
            task = as_task(await client.send_message("x"))
            resumed = as_task(
                await client.send_message("answer", task_id=task.id, return_immediately=True)
            )
            assert resumed.status.state is TaskState.WORKING
            assert texts(resumed) == ["x", "?", "answer"]
            go.set()


async def test_history_length_applies_on_every_read_path() -> None:
    with anyio.fail_after(5):
        async with Supervisor(ask_twice) as sup:
            client = InProcessClient(sup)
            task = as_task(await client.send_message("a", history_length=1))
            assert texts(task) == ["Which city?"]
            none = as_task(await client.send_message("b", task_id=task.id, history_length=0))
            assert none.history == ()
            assert texts(await client.get_task(task.id, history_length=2)) == ["b", "When in b?"]
            assert len((await client.get_task(task.id)).history) == 4
            listed = await client.list_tasks(ListTasksRequest(history_length=1))
            assert [texts(t) for t in listed.tasks] == [["When in b?"]]


async def test_requests_before_start_are_refused() -> None:
    with anyio.fail_after(5):
        sup = Supervisor(echo)
        with pytest.raises(ServerBusyError, match="not running"):
            await InProcessClient(sup).send_message("x")
