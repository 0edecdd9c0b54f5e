"""Delegation inside one supervisor: local children are task actors of the same runtime."""

from __future__ import annotations

import socket

import anyio
import anyio.lowlevel
import pytest

from a2a_actors.client import text_message
from a2a_actors.protocol._errors import UnsupportedOperationError
from a2a_actors.protocol._models import Task, TaskState
from a2a_actors.protocol._requests import SendMessageRequest
from a2a_actors.runtime import Agent, Supervisor, TaskContext, agent
from orchestrator import (
    CORRELATION_URI,
    CycleError,
    DelegationError,
    DelegationResult,
    InputRequired,
    Orchestrator,
    delegate,
    orchestrated,
    stream_delegate,
    supervisor_tree,
)
from orchestrator._correlation import parse_traceparent

from .helpers import TIMEOUT, Journal, record_of, running, send, status_text


async def test_local_children_are_correlated_actors_of_the_same_supervisor() -> None:
    journal = Journal()

    @agent(name="c")
    async def c(ctx: TaskContext) -> str:
        with journal.running(ctx):
            return f"c({ctx.text})"

    @agent(name="b")
    async def b(ctx: TaskContext) -> str:
        with journal.running(ctx):
            result = await ctx.delegate(c, ctx.text)  # the runtime's spelling
            assert isinstance(result, DelegationResult)
            return f"b[{result.text}]"

    @agent(name="a")
    async def a(ctx: TaskContext) -> str:
        with journal.running(ctx):
            return f"a[{(await delegate(ctx, b, ctx.text)).text}]"

    with anyio.fail_after(TIMEOUT):
        async with running(a) as sup:
            root = await send(sup, "x")
            assert status_text(root) == "a[b[c(x)]]"
            tree = await supervisor_tree(sup, root.id)
            hops = list(tree.walk())
            assert [(h.agent, h.depth, h.state) for h in hops] == [
                ("a", 0, "TASK_STATE_COMPLETED"),
                ("b", 1, "TASK_STATE_COMPLETED"),
                ("c", 2, "TASK_STATE_COMPLETED"),
            ]
            assert len({h.trace_id for h in hops}) == 1
            assert [h.parent_task_id for h in hops] == ["", hops[0].task_id, hops[1].task_id]
            (entry,) = record_of(root).children
            assert entry.local
            assert entry.url == ""
            for name in "bc":
                parsed = parse_traceparent(journal.visit(name).traceparent)
                assert parsed is not None
                assert parsed[0] == hops[0].trace_id
            assert journal.still_running() == []


async def test_cancel_cascades_through_local_children() -> None:
    journal = Journal()
    started = anyio.Event()

    @agent(name="c")
    async def c(ctx: TaskContext) -> None:
        with journal.running(ctx):
            started.set()
            await anyio.sleep_forever()

    @agent(name="b")
    async def b(ctx: TaskContext) -> str:
        with journal.running(ctx):
            return (await delegate(ctx, c, ctx.text)).text

    @agent(name="a")
    async def a(ctx: TaskContext) -> str:
        with journal.running(ctx):
            return (await delegate(ctx, b, ctx.text)).text

    with anyio.fail_after(TIMEOUT):
        async with running(a) as sup:
            root = await send(sup, "x", immediately=True)
            await started.wait()
            canceled = await sup.cancel_task(root.id)
            assert journal.still_running() == []
            assert canceled.status.state is TaskState.CANCELED
            tree = await supervisor_tree(sup, root.id)
            assert [(h.agent, h.state) for h in tree.walk()] == [
                ("a", "TASK_STATE_CANCELED"),
                ("b", "TASK_STATE_CANCELED"),
                ("c", "TASK_STATE_CANCELED"),
            ]
            assert record_of(canceled).canceled_children == [tree.children[0].task_id]


async def test_stream_delegate_yields_the_childs_events() -> None:
    @agent(name="words")
    async def words(ctx: TaskContext) -> None:
        artifact = None
        for i, word in enumerate(ctx.text.split()):
            artifact = await ctx.artifact(word, artifact_id=artifact, append=i > 0)
        await ctx.complete("done")

    kinds: list[str] = []
    chunks: list[str] = []

    @agent(name="reader")
    async def reader(ctx: TaskContext) -> str:
        async with stream_delegate(ctx, words, ctx.text) as events:
            async for event in events:
                kinds.append(
                    "task"
                    if event.task is not None
                    else "status"
                    if event.status_update is not None
                    else "artifact"
                )
                if event.artifact_update is not None:
                    chunks.append(event.artifact_update.artifact.parts[0].text or "")
            result = events.result()
        return f"{result.text} / {result.message.text if result.message else ''}"

    with anyio.fail_after(TIMEOUT):
        async with running(reader) as sup:
            root = await send(sup, "one two three")
    assert status_text(root) == "onetwothree / done"
    # The Task (SUBMITTED), WORKING (the wrapper's ctx.start()), the chunks, COMPLETED.
    assert kinds == ["task", "status", "artifact", "artifact", "artifact", "status"]
    assert chunks == ["one", "two", "three"]


async def test_leaving_a_stream_early_cancels_the_child() -> None:
    journal = Journal()

    @agent(name="talker")
    async def talker(ctx: TaskContext) -> None:
        with journal.running(ctx):
            await ctx.update("first words")
            await anyio.sleep_forever()

    seen: list[str] = []

    @agent(name="impatient")
    async def impatient(ctx: TaskContext) -> str:
        async with stream_delegate(ctx, talker, "go") as events:
            async for event in events:
                if event.status_update is not None:
                    seen.append(events.task_id)
                    break
        return "left early"

    with anyio.fail_after(TIMEOUT):
        async with running(impatient) as sup:
            root = await send(sup, "x")
            assert status_text(root) == "left early"
            (entry,) = record_of(root).children
            assert entry.state == "TASK_STATE_CANCELED"
            assert seen == [entry.task_id]
            child = await sup.get_task(entry.task_id)
            assert child.status.state is TaskState.CANCELED
    assert journal.still_running() == []


async def test_a_question_can_be_handed_to_the_agent_and_answered_there() -> None:
    @agent(name="asker")
    async def asker(ctx: TaskContext) -> str:
        city = await ctx.ask("Which city?")
        unit = await ctx.ask("Celsius or Fahrenheit?")
        return f"{city.text} in {unit.text}"

    questions: list[tuple[str, str]] = []

    @agent(name="decider")
    async def decider(ctx: TaskContext) -> str:
        answers = iter(["Oslo", "Celsius"])
        try:
            await delegate(ctx, asker, "weather", relay_input=False)
        except InputRequired as question:
            questions.append((question.task_id, question.text))
            try:
                result = await question.answer(next(answers))
            except InputRequired as again:
                questions.append((again.task_id, again.text))
                result = await again.answer(next(answers))
        return result.text

    with anyio.fail_after(TIMEOUT):
        async with running(decider) as sup:
            root = await send(sup, "x")
    assert root.status.state is TaskState.COMPLETED
    assert status_text(root) == "Oslo in Celsius"
    (child,) = record_of(root).children  # both questions came from the same child task
    assert child.state == "TASK_STATE_COMPLETED"
    assert questions == [
        (child.task_id, "Which city?"),
        (child.task_id, "Celsius or Fahrenheit?"),
    ]


async def test_an_unanswered_question_is_canceled_when_the_parent_ends() -> None:
    journal = Journal()

    @agent(name="asker")
    async def asker(ctx: TaskContext) -> str:
        with journal.running(ctx):
            return (await ctx.ask("Really?")).text

    @agent(name="quitter")
    async def quitter(ctx: TaskContext) -> str:
        try:
            await delegate(ctx, asker, "x", relay_input=False)
        except InputRequired:
            return "never mind"
        return "unreachable"

    with anyio.fail_after(TIMEOUT):
        async with running(quitter) as sup:
            root = await send(sup, "x")
            assert status_text(root) == "never mind"
            (entry,) = record_of(root).children
            assert entry.state == "TASK_STATE_CANCELED"
            assert record_of(root).canceled_children == [entry.task_id]
    assert journal.still_running() == []


async def test_concurrent_delegations_record_every_child() -> None:
    @agent(name="square")
    async def square(ctx: TaskContext) -> str:
        await anyio.lowlevel.checkpoint()
        return str(int(ctx.text) ** 2)

    @agent(name="many")
    async def many(ctx: TaskContext) -> str:
        results: dict[int, str] = {}

        async def one(n: int) -> None:
            results[n] = (await delegate(ctx, square, str(n))).text

        async with anyio.create_task_group() as tg:
            for n in range(6):
                tg.start_soon(one, n)
        return ",".join(results[n] for n in range(6))

    with anyio.fail_after(TIMEOUT):
        async with running(many) as sup:
            root = await send(sup, "x")
    assert status_text(root) == "0,1,4,9,16,25"
    children = record_of(root).children
    assert len(children) == 6
    assert {c.state for c in children} == {"TASK_STATE_COMPLETED"}
    assert len({c.task_id for c in children}) == 6


async def test_a_rejected_local_child_and_a_local_cycle() -> None:
    @agent(name="grumpy")
    async def grumpy(ctx: TaskContext) -> None:
        await ctx.reject("not today")

    errors: list[DelegationError] = []

    @agent(name="boss")
    async def boss(ctx: TaskContext) -> str:
        for target in (grumpy, boss_again):
            try:
                await delegate(ctx, target, "x")
            except DelegationError as error:
                errors.append(error)
        return "ok"

    boss_again = Agent(handler=grumpy.handler, name="boss")  # same name: a cycle

    with anyio.fail_after(TIMEOUT):
        async with running(boss) as sup:
            root = await send(sup, "x")
    assert status_text(root) == "ok"
    rejected, cycle = errors
    assert type(rejected) is DelegationError
    assert (rejected.origin_agent, rejected.state, rejected.reason) == (
        "grumpy",
        "TASK_STATE_REJECTED",
        "not today",
    )
    assert rejected.origin_task_id == record_of(root).children[0].task_id
    assert isinstance(cycle, CycleError)
    assert len(record_of(root).children) == 1  # the cycle never started a task


async def test_delegation_needs_an_orchestrator() -> None:
    @agent(name="lonely")
    async def lonely(ctx: TaskContext) -> str:
        return str(await ctx.delegate(lonely, "x"))

    with anyio.fail_after(TIMEOUT):
        async with Supervisor(lonely) as sup:
            task = await send(sup, "x")
    assert task.status.state is TaskState.FAILED
    assert "delegation is not configured" in status_text(task)

    @agent(name="typed")
    async def typed(ctx: TaskContext) -> str:
        return (await delegate(ctx, lonely, "x")).text

    with anyio.fail_after(TIMEOUT):
        async with Supervisor(typed, delegator=_NotAnOrchestrator()) as sup:
            task = await send(sup, "x")
    assert task.status.state is TaskState.FAILED
    assert status_text(task).startswith("delegation needs an Orchestrator")


class _NotAnOrchestrator:
    async def delegate(
        self, ctx: TaskContext, target: object, message: object, **options: object
    ) -> object:
        return None


async def test_unreachable_targets_and_names() -> None:
    with socket.socket() as probe:  # a port that nobody listens on
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    errors: list[Exception] = []

    @agent(name="echo")
    async def echo(ctx: TaskContext) -> str:
        return ctx.text

    @agent(name="caller")
    async def caller(ctx: TaskContext) -> str:
        for target in (dead, "nobody"):
            try:
                await delegate(ctx, target, "x")
            except (DelegationError, UnsupportedOperationError) as error:
                errors.append(error)
        return (await delegate(ctx, "echo", "by name")).text

    with anyio.fail_after(TIMEOUT):
        async with running(caller, Orchestrator(resolver={"echo": echo})) as sup:
            root = await send(sup, "x")
    assert status_text(root) == "by name"
    unreachable, unknown = errors
    assert isinstance(unreachable, DelegationError)
    assert unreachable.origin_agent == dead
    assert unreachable.reason.startswith(f"could not reach the agent at {dead}")
    assert isinstance(unknown, UnsupportedOperationError)
    assert "unknown delegation target 'nobody'" in str(unknown)


async def test_a_message_reply_and_metadata_reach_the_parent() -> None:
    @agent(name="polite")
    async def polite(ctx: TaskContext) -> None:
        assert ctx.metadata is not None
        await ctx.reply(f"{ctx.text} / {ctx.metadata['topic']}")

    @agent(name="asking")
    async def asking(ctx: TaskContext) -> str:
        result = await delegate(ctx, polite, "hello", metadata={"topic": "tea"})
        assert result.ok
        assert result.state is TaskState.COMPLETED
        return result.text

    with anyio.fail_after(TIMEOUT):
        async with running(asking) as sup:
            root = await send(sup, "x")
    assert status_text(root) == "hello / tea"
    assert CORRELATION_URI in (root.metadata or {})


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_cancel_cascade_on_asyncio(anyio_backend: str) -> None:
    await test_cancel_cascades_through_local_children()


async def test_cancel_while_a_relayed_question_waits_cancels_the_chain() -> None:
    journal = Journal()

    @agent(name="c")
    async def c(ctx: TaskContext) -> str:
        with journal.running(ctx):
            return (await ctx.ask("Sure?")).text

    @agent(name="b")
    async def b(ctx: TaskContext) -> str:
        with journal.running(ctx):
            return (await delegate(ctx, c, ctx.text)).text

    @agent(name="a")
    async def a(ctx: TaskContext) -> str:
        with journal.running(ctx):
            return (await delegate(ctx, b, ctx.text)).text

    with anyio.fail_after(TIMEOUT):
        async with running(a) as sup:
            root = await send(sup, "x")
            assert root.status.state is TaskState.INPUT_REQUIRED
            assert status_text(root) == "Sure?"
            canceled = await sup.cancel_task(root.id)
            assert canceled.status.state is TaskState.CANCELED
            tree = await supervisor_tree(sup, root.id)
            assert [(h.agent, h.state) for h in tree.walk()] == [
                ("a", "TASK_STATE_CANCELED"),
                ("b", "TASK_STATE_CANCELED"),
                ("c", "TASK_STATE_CANCELED"),
            ]
    assert journal.still_running() == []


async def test_an_agent_that_is_not_orchestrated_still_records_its_children() -> None:
    @agent(name="leaf")
    async def leaf(ctx: TaskContext) -> str:
        return ctx.text * 2

    @agent(name="plain")
    async def plain(ctx: TaskContext) -> str:
        first = await delegate(ctx, leaf, "a")
        second = await delegate(ctx, leaf, "b")
        return first.text + second.text

    with anyio.fail_after(TIMEOUT):
        async with Orchestrator() as orch, Supervisor(plain, delegator=orch) as sup:
            root = await send(sup, "x")
            assert len(orch.hops) == 0  # nothing left open
    assert status_text(root) == "aabb"
    record = record_of(root)
    assert (record.agent, record.depth, record.path) == ("plain", 0, ("plain",))
    assert [(c.agent, c.state) for c in record.children] == [
        ("leaf", "TASK_STATE_COMPLETED"),
        ("leaf", "TASK_STATE_COMPLETED"),
    ]


async def test_auth_required_is_relayed_like_a_question() -> None:
    @agent(name="vault")
    async def vault(ctx: TaskContext) -> str:
        token = await ctx.require_auth("Token please")
        return f"opened with {token.text}"

    @agent(name="front")
    async def front(ctx: TaskContext) -> str:
        return (await delegate(ctx, vault, ctx.text)).text

    with anyio.fail_after(TIMEOUT):
        async with running(front) as sup:
            root = await send(sup, "open")
            assert root.status.state is TaskState.AUTH_REQUIRED
            assert status_text(root) == "Token please"
            done = await sup.send_message(
                SendMessageRequest(
                    message=text_message("s3cret", task_id=root.id, context_id=root.context_id)
                )
            )
    assert isinstance(done, Task)
    assert status_text(done) == "opened with s3cret"


async def test_a_local_chain_deeper_than_max_running_completes() -> None:
    @agent(name="leaf")
    async def leaf(ctx: TaskContext) -> str:
        return f"leaf({ctx.text})"

    @agent(name="mid")
    async def mid(ctx: TaskContext) -> str:
        return f"mid[{(await delegate(ctx, leaf, ctx.text)).text}]"

    @agent(name="top")
    async def top(ctx: TaskContext) -> str:
        return f"top[{(await delegate(ctx, mid, ctx.text)).text}]"

    with anyio.fail_after(TIMEOUT):
        async with (
            Orchestrator() as orch,
            Supervisor(orchestrated(top), delegator=orch, max_running=1) as sup,
        ):
            root = await send(sup, "x")
            assert status_text(root) == "top[mid[leaf(x)]]"
            assert sup.statistics().running_handlers == 0
