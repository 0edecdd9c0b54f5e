"""What agents do to their tasks: failures, replies, artifacts, metadata, delegation."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from a2a_actors.protocol import (
    Artifact,
    IllegalTransitionError,
    Message,
    Part,
    Role,
    StreamResponse,
    TaskState,
    UnsupportedOperationError,
)
from a2a_actors.runtime import InProcessClient, Supervisor, TaskContext
from a2a_actors.stores import MemoryTaskStore, StoredTask

from .helpers import Recorder, as_task, state_of, status_text

pytestmark = pytest.mark.anyio


async def test_an_agent_exception_fails_only_its_task(caplog: pytest.LogCaptureFixture) -> None:
    with anyio.fail_after(5):

        async def fragile(ctx: TaskContext) -> str:
            if ctx.text == "boom":
                await ctx.update("about to fail")
                raise ValueError("the widget is broken")
            return "fine"

        async with Supervisor(fragile) as sup:
            client = InProcessClient(sup)
            failed = as_task(await client.send_message("boom"))
            assert failed.status.state is TaskState.FAILED
            assert status_text(failed) == "the widget is broken"
            assert as_task(await client.send_message("ok")).status.state is TaskState.COMPLETED
        records = [r for r in caplog.records if r.name == "a2a_actors.runtime"]
        assert any(
            r.levelno == logging.ERROR
            and failed.id in r.getMessage()
            and r.exc_info is not None
            and isinstance(r.exc_info[1], ValueError)
            for r in records
        )


async def test_emitting_after_completion_is_logged_and_the_task_stays_completed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with anyio.fail_after(5):

        async def eager(ctx: TaskContext) -> None:
            await ctx.complete("all done")
            await ctx.update("one more thing")

        async with Supervisor(eager) as sup:
            task = as_task(await InProcessClient(sup).send_message("x"))
            await anyio.wait_all_tasks_blocked()
            task = await sup.get_task(task.id)
            assert task.status.state is TaskState.COMPLETED
            assert status_text(task) == "all done"
        warned = [r for r in caplog.records if "after the task ended" in r.getMessage()]
        assert warned
        assert warned[0].exc_info is not None
        assert isinstance(warned[0].exc_info[1], IllegalTransitionError)


async def test_an_illegal_emission_fails_the_task_not_the_runtime() -> None:
    with anyio.fail_after(5):

        async def sloppy(ctx: TaskContext) -> None:
            await ctx.artifact("more", artifact_id="never-created", append=True)

        async with Supervisor(sloppy) as sup:
            client = InProcessClient(sup)
            task = as_task(await client.send_message("x"))
            assert task.status.state is TaskState.FAILED
            assert "cannot append to unknown artifact" in status_text(task)
            again = as_task(await client.send_message("y"))
            assert again.status.state is TaskState.FAILED  # the runtime is still serving


async def test_closed_artifacts_refuse_more_chunks() -> None:
    with anyio.fail_after(5):

        async def chunker(ctx: TaskContext) -> None:
            aid = await ctx.artifact("a", name="doc")
            await ctx.artifact([Part(text="b"), Part(text="c")], artifact_id=aid, append=True)
            await ctx.artifact(Part(text="d"), artifact_id=aid, append=True, last_chunk=True)
            with pytest.raises(IllegalTransitionError, match="closed by lastChunk"):
                await ctx.artifact("e", artifact_id=aid, append=True)
            with pytest.raises(ValueError, match="artifact_id"):
                await ctx.artifact("f", append=True)
            await ctx.complete()

        async with Supervisor(chunker) as sup:
            task = as_task(await InProcessClient(sup).send_message("x"))
            assert task.status.state is TaskState.COMPLETED
            assert [p.text for p in task.artifacts[0].parts] == ["a", "b", "c", "d"]
            assert task.artifacts[0].name == "doc"


@pytest.mark.parametrize(
    ("value", "state", "text", "artifacts"),
    [
        (None, TaskState.COMPLETED, "", 0),
        ("text", TaskState.COMPLETED, "text", 0),
        (Artifact(artifact_id="a", parts=(Part(text="x"),)), TaskState.COMPLETED, "", 1),
        (
            [Artifact(artifact_id=f"a{i}", parts=(Part(text="x"),)) for i in range(2)],
            TaskState.COMPLETED,
            "",
            2,
        ),
        (42, TaskState.FAILED, "agent returned an unsupported value of type int", 0),
    ],
)
async def test_return_values(value: object, state: TaskState, text: str, artifacts: int) -> None:
    with anyio.fail_after(5):

        async def returns(ctx: TaskContext) -> object:
            return value

        async with Supervisor(returns) as sup:
            task = as_task(await InProcessClient(sup).send_message("x"))
            assert task.status.state is state
            assert status_text(task).startswith(text)
            assert len(task.artifacts) == artifacts


async def test_terminal_actions() -> None:
    with anyio.fail_after(5):

        async def decide(ctx: TaskContext) -> None:
            if ctx.text == "fail":
                await ctx.fail("nope")
            elif ctx.text == "reject":
                await ctx.reject("will not")
            else:
                await ctx.complete(Message(message_id="m1", role=ctx.message.role, parts=ctx.parts))

        async with Supervisor(decide) as sup:
            client = InProcessClient(sup)
            failed = as_task(await client.send_message("fail"))
            rejected = as_task(await client.send_message("reject"))
            done = as_task(await client.send_message("done"))
            assert (failed.status.state, status_text(failed)) == (TaskState.FAILED, "nope")
            assert (rejected.status.state, status_text(rejected)) == (
                TaskState.REJECTED,
                "will not",
            )
            assert done.status.message is not None
            assert done.status.message.message_id == "m1"


# --- replying with a Message ------------------------------------------------------------


async def chat(ctx: TaskContext) -> None:
    if ctx.text == "task first":
        await ctx.update("let me see")
    await ctx.reply(f"answer to {ctx.text}")


async def test_a_first_reply_is_a_message_and_the_task_is_discarded() -> None:
    with anyio.fail_after(5):
        store = MemoryTaskStore()
        recorder = Recorder()
        async with Supervisor(chat, store=store, observers=[recorder]) as sup:
            client = InProcessClient(sup)
            reply = await client.send_message("hello", context_id="ctx-9")
            assert isinstance(reply, Message)
            assert (reply.text, reply.context_id, reply.task_id) == ("answer to hello", "ctx-9", "")
            async with client.stream("streamed") as events:
                streamed = [e async for e in events]
            assert len(streamed) == 1
            assert streamed[0].message is not None
            assert streamed[0].message.text == "answer to streamed"
            assert len(store) == 0
            assert recorder.events == []
            assert sup.statistics().live_tasks == 0


async def test_a_reply_after_the_commit_completes_the_task() -> None:
    with anyio.fail_after(5):
        async with Supervisor(chat) as sup:
            client = InProcessClient(sup)
            task = as_task(await client.send_message("task first"))
            assert task.status.state is TaskState.COMPLETED
            assert status_text(task) == "answer to task first"
            committed = as_task(await client.send_message("hello", return_immediately=True))
            assert committed.status.state is TaskState.SUBMITTED
            await anyio.wait_all_tasks_blocked()
            later = await client.get_task(committed.id)
            assert (later.status.state, status_text(later)) == (
                TaskState.COMPLETED,
                "answer to hello",
            )


async def test_emitting_after_a_reply_is_refused(caplog: pytest.LogCaptureFixture) -> None:
    with anyio.fail_after(5):

        async def chatty(ctx: TaskContext) -> None:
            await ctx.reply("hi")
            await ctx.update("and another thing")

        async with Supervisor(chatty) as sup:
            reply = await InProcessClient(sup).send_message("x")
            assert isinstance(reply, Message)
            await anyio.wait_all_tasks_blocked()
            assert sup.statistics().live_tasks == 0
        assert any("after the task ended" in r.getMessage() for r in caplog.records)


# --- context --------------------------------------------------------------------------


async def test_the_context_exposes_the_request() -> None:
    with anyio.fail_after(5):
        seen: dict[str, Any] = {}

        async def inspect(ctx: TaskContext) -> None:
            seen.update(
                task_id=ctx.task_id,
                context_id=ctx.context_id,
                text=ctx.text,
                parts=ctx.parts,
                metadata=ctx.metadata,
                request_metadata=ctx.request_metadata,
                extensions=ctx.extensions,
                caller=ctx.caller,
                supervisor=ctx.supervisor,
                history=ctx.history,
            )
            await ctx.set_task_metadata(children=["c1"])
            await ctx.update_task_metadata({"trace": "t1"})
            seen["task_metadata"] = ctx.task_metadata
            seen["task"] = ctx.task

        async with Supervisor(inspect) as sup:
            client = InProcessClient(sup, caller="alice", extensions=frozenset({"urn:x"}))
            message = Message(
                message_id="m",
                role=Role.USER,
                parts=(Part(text="hel"), Part(text="lo")),
                metadata={"k": 1},
            )
            task = as_task(await client.send_message(message, metadata={"r": 2}))
            assert (seen["task_id"], seen["context_id"]) == (task.id, task.context_id)
            assert seen["text"] == "hello"
            assert len(seen["parts"]) == 2
            assert (seen["metadata"], seen["request_metadata"]) == ({"k": 1}, {"r": 2})
            assert (seen["extensions"], seen["caller"]) == (frozenset({"urn:x"}), "alice")
            assert seen["supervisor"] is sup
            assert len(seen["history"]) == 1
            assert seen["task_metadata"] == {"children": ["c1"], "trace": "t1"}
            assert task.metadata == {"children": ["c1"], "trace": "t1"}


async def test_delegation_goes_through_the_configured_delegator() -> None:
    with anyio.fail_after(5):

        class Fake:
            def __init__(self) -> None:
                self.calls: list[tuple[str, object, str | Message, dict[str, object]]] = []

            async def delegate(
                self, ctx: TaskContext, target: object, message: str | Message, **options: object
            ) -> object:
                self.calls.append((ctx.task_id, target, message, options))
                return "delegated"

        async def delegating(ctx: TaskContext) -> object:
            return await ctx.delegate("http://elsewhere", "do it", timeout=3)

        fake = Fake()
        async with Supervisor(delegating, delegator=fake) as sup:
            task = as_task(await InProcessClient(sup).send_message("x"))
            assert status_text(task) == "delegated"
            assert fake.calls == [(task.id, "http://elsewhere", "do it", {"timeout": 3})]
        async with Supervisor(delegating) as sup:
            failed = as_task(await InProcessClient(sup).send_message("x"))
            assert failed.status.state is TaskState.FAILED
            assert "delegation is not configured" in status_text(failed)

        async def checks(ctx: TaskContext) -> str:
            with pytest.raises(UnsupportedOperationError):
                await ctx.delegate("x", "y")
            return "checked"

        async with Supervisor(checks) as sup:
            assert status_text(as_task(await InProcessClient(sup).send_message("x"))) == "checked"


class CountingStore(MemoryTaskStore):
    """A memory store that records the state of every record it is asked to save."""

    def __init__(self) -> None:
        super().__init__()
        self.saved: list[TaskState] = []

    async def save(self, record: StoredTask) -> None:
        self.saved.append(record.task.status.state)
        await super().save(record)


async def test_returned_artifacts_are_stored_once_with_the_completion() -> None:
    with anyio.fail_after(5):

        async def agent(ctx: TaskContext) -> list[Artifact]:
            return [
                Artifact(artifact_id=name, parts=(Part(text=f"{name} {ctx.text}"),))
                for name in ("first", "second")
            ]

        store = CountingStore()
        async with Supervisor(agent, store=store) as sup:
            client = InProcessClient(sup)
            task = as_task(await client.send_message("x"))
            assert task.status.state is TaskState.COMPLETED
            assert [a.artifact_id for a in task.artifacts] == ["first", "second"]
            assert store.saved == [TaskState.COMPLETED]  # one write for three changes
            async with client.stream("y") as events:
                streamed = [e async for e in events]
            # Subscribers still get every change, in order, after the one write.
            assert [kind(e) for e in streamed] == ["task", "first", "second", "COMPLETED"]
            assert store.saved == [TaskState.COMPLETED, TaskState.COMPLETED]


def kind(event: StreamResponse) -> str:
    if event.artifact_update is not None:
        return event.artifact_update.artifact.artifact_id
    if event.status_update is not None:
        return event.status_update.status.state.name
    return "task" if event.task is not None else "message"


# --- robustness -------------------------------------------------------------------------


class FlakyStore(MemoryTaskStore):
    """Refuses to store completed tasks (while ``refuse``)."""

    refuse = True

    async def save(self, record: StoredTask) -> None:
        if self.refuse and record.task.status.state is TaskState.COMPLETED:
            raise OSError("disk full")
        await super().save(record)


@pytest.mark.parametrize("returns", ["nothing", "an artifact"])
async def test_a_first_write_the_store_refuses_fails_the_task(
    returns: str, caplog: pytest.LogCaptureFixture
) -> None:
    # The handler's first change is its completion (and what it returned): when the store
    # refuses that write, the task was never stored, and the caller learns it FAILED.
    with anyio.fail_after(5):

        async def agent(ctx: TaskContext) -> Artifact | None:
            if returns == "nothing":
                return None
            return Artifact(artifact_id="a", parts=(Part(text=ctx.text),))

        store = FlakyStore()
        async with Supervisor(agent, store=store) as sup:
            client = InProcessClient(sup)
            task = as_task(await client.send_message("x"))
            assert task.status.state is TaskState.FAILED
            assert task.artifacts == ()
            stored = await store.get(task.id)
            assert stored is not None
            assert stored.task.status.state is TaskState.FAILED
            assert sup.statistics().live_tasks == 0


async def test_a_failing_store_fails_the_task_and_keeps_the_runtime(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with anyio.fail_after(5):

        async def agent(ctx: TaskContext) -> str:
            await ctx.update("working")
            return "done"

        store = FlakyStore()
        async with Supervisor(agent, store=store) as sup:
            client = InProcessClient(sup)
            for _ in range(2):
                task = as_task(await client.send_message("x"))
                # The caller is told the truth: the task did not complete, it failed.
                assert task.status.state is TaskState.FAILED
                assert (await client.get_task(task.id)).status.state is TaskState.FAILED
                stored = await store.get(task.id)
                assert stored is not None
                assert stored.task.status.state is TaskState.FAILED
            assert sup.statistics().live_tasks == 0
            # The runtime goes on: a task the store accepts still works.
            store.refuse = False
            done = as_task(await client.send_message("y"))
            assert done.status.state is TaskState.COMPLETED
        assert any("disk full" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)


async def test_a_failing_observer_is_logged_and_ignored(caplog: pytest.LogCaptureFixture) -> None:
    with anyio.fail_after(5):

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

        async def agent(ctx: TaskContext) -> str:
            await ctx.update("working")
            return "done"

        recorder = Recorder()
        async with Supervisor(agent, observers=[Broken(), recorder]) as sup:
            task = as_task(await InProcessClient(sup).send_message("x"))
            assert task.status.state is TaskState.COMPLETED
        assert [state_of(e) for e in recorder.for_task(task.id)] == [
            TaskState.SUBMITTED,
            TaskState.WORKING,
            TaskState.COMPLETED,
        ]
        assert any("observer failed" in r.getMessage() for r in caplog.records)
