"""Delegation across three real servers on loopback: correlation, cancel, failure, input.

Every chain is ``a -> b -> c``, each agent on its own server (``orchestrator.serve``), the
root called by our A2A client. Agents record entry and exit in a :class:`Journal`, so
"no agent code is still running" is an assertion, not a hope.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest

from a2a_actors.client import A2AClient, RemoteAgent, text_message
from a2a_actors.protocol._models import Task, TaskState
from a2a_actors.protocol._requests import SendMessageRequest
from a2a_actors.runtime import Agent, Supervisor, TaskContext
from orchestrator import (
    CORRELATION_URI,
    CycleError,
    DelegationError,
    DepthLimitError,
    Orchestrator,
    delegate,
    fetch_tree,
    orchestrated,
    traceparent,
)
from orchestrator._correlation import parse_traceparent

from .helpers import TIMEOUT, Journal, get_task, record_of, served

Targets = dict[str, str]


def relay(name: str, journal: Journal, targets: Targets, nxt: str) -> Agent:
    """An agent that hands its text to ``nxt`` and wraps the answer: ``name[answer]``."""

    async def handle(ctx: TaskContext) -> str:
        with journal.running(ctx):
            result = await delegate(ctx, targets[nxt], ctx.text)
            return f"{name}[{result.text}]"

    return Agent(handler=handle, name=name)


def leaf(name: str, journal: Journal) -> Agent:
    """An agent that answers ``name(text)``."""

    async def handle(ctx: TaskContext) -> str:
        with journal.running(ctx):
            return f"{name}({ctx.text})"

    return Agent(handler=handle, name=name)


def state_of(task: Task | object) -> TaskState:
    assert isinstance(task, Task), task
    return task.status.state


async def test_three_hops_share_the_trace_and_link_parents_and_children() -> None:
    journal = Journal()
    targets: Targets = {}
    trace = "4bf92f3577b34da6a3ce929d0e0e4736"
    with anyio.fail_after(TIMEOUT):
        agents = (
            relay("a", journal, targets, "b"),
            relay("b", journal, targets, "c"),
            leaf("c", journal),
        )
        async with served(*agents) as urls:
            targets.update(zip("abc", urls, strict=True))
            http = httpx.AsyncClient(headers={"traceparent": traceparent(trace)})
            async with http, await A2AClient.connect(targets["a"], http_client=http) as client:
                card = client.card
                assert card is not None
                assert CORRELATION_URI in {e.uri for e in card.capabilities.extensions}
                root = await client.send_message("hi")
            assert isinstance(root, Task)
            assert root.status.state is TaskState.COMPLETED
            assert root.status.message is not None
            assert root.status.message.text == "a[b[c(hi)]]"

            b_task = await get_task(targets["b"], journal.visit("b").task_id)
            c_task = await get_task(targets["c"], journal.visit("c").task_id)
            hops = {"a": record_of(root), "b": record_of(b_task), "c": record_of(c_task)}
            tasks = {"a": root, "b": b_task, "c": c_task}

            # one trace, depth + 1 per hop, the path grows by one agent per hop
            assert {r.trace_id for r in hops.values()} == {trace}
            assert [hops[n].depth for n in "abc"] == [0, 1, 2]
            assert [hops[n].path for n in "abc"] == [("a",), ("a", "b"), ("a", "b", "c")]
            # parent -> child (recorded by the parent) and child -> parent (carried to it)
            for parent, child in (("a", "b"), ("b", "c")):
                (entry,) = hops[parent].children
                assert entry.agent == child
                assert entry.task_id == tasks[child].id
                assert entry.context_id == tasks[child].context_id
                assert entry.state == "TASK_STATE_COMPLETED"
                assert entry.depth == hops[child].depth
                assert entry.url == targets[child]
                assert hops[child].parent_task_id == tasks[parent].id
                assert hops[child].parent_context_id == tasks[parent].context_id
                assert hops[child].parent_agent == parent
                assert hops[child].parent_url == targets[parent]
                assert hops[child].url == targets[child]
            assert hops["c"].children == []
            # the correlation travelled in message.metadata, activated as an extension,
            # and the W3C traceparent reached every hop with the same trace id
            for name in "abc":
                seen = journal.visit(name)
                parsed = parse_traceparent(seen.traceparent)
                assert parsed is not None, name
                assert parsed[0] == trace
                if name != "a":
                    assert seen.correlation is not None
                    assert seen.correlation["traceId"] == trace
                    assert seen.correlation["depth"] == hops[name].depth
                    assert CORRELATION_URI in seen.extensions
            assert journal.still_running() == []

            # and the tree can be rebuilt from any hop
            tree = await fetch_tree(targets["c"], tasks["c"].id)
            assert [(h.agent, h.task_id, h.depth) for h in tree.walk()] == [
                (n, tasks[n].id, i) for i, n in enumerate("abc")
            ]


async def test_cancel_at_the_root_cancels_every_hop_and_stops_all_agent_code() -> None:
    journal = Journal()
    targets: Targets = {}
    started = anyio.Event()

    async def blocked(ctx: TaskContext) -> None:
        with journal.running(ctx):
            started.set()
            await anyio.sleep_forever()

    with anyio.fail_after(TIMEOUT):
        agents = (
            relay("a", journal, targets, "b"),
            relay("b", journal, targets, "c"),
            Agent(handler=blocked, name="c"),
        )
        async with served(*agents) as urls:
            targets.update(zip("abc", urls, strict=True))
            async with await A2AClient.connect(targets["a"]) as client:
                root = await client.send_message("work", return_immediately=True)
                assert isinstance(root, Task)
                await started.wait()
                assert journal.still_running() == ["a", "b", "c"]

                canceled = await client.cancel_task(root.id)

            # by the time CancelTask answers, the whole chain is canceled and no agent runs
            assert journal.still_running() == []
            assert canceled.status.state is TaskState.CANCELED
            b_id, c_id = journal.visit("b").task_id, journal.visit("c").task_id
            b_task = await get_task(targets["b"], b_id)
            c_task = await get_task(targets["c"], c_id)
            assert b_task.status.state is TaskState.CANCELED
            assert c_task.status.state is TaskState.CANCELED
            # each canceled parent reports which children it canceled
            a_hop, b_hop = record_of(canceled), record_of(b_task)
            assert [(e.agent, e.task_id, e.state) for e in a_hop.children] == [
                ("b", b_id, "TASK_STATE_CANCELED")
            ]
            assert a_hop.canceled_children == [b_id]
            assert [(e.agent, e.task_id, e.state) for e in b_hop.children] == [
                ("c", c_id, "TASK_STATE_CANCELED")
            ]
            assert b_hop.canceled_children == [c_id]
            tree = await fetch_tree(targets["b"], b_id)
            assert {h.state for h in tree.walk()} == {"TASK_STATE_CANCELED"}
            assert [h.agent for h in tree.walk()] == ["a", "b", "c"]


async def test_a_failure_at_the_deepest_hop_reaches_the_root_with_origin_and_relay() -> None:
    journal = Journal()
    targets: Targets = {}
    caught: list[DelegationError] = []

    async def root(ctx: TaskContext) -> str:
        with journal.running(ctx):
            try:
                await delegate(ctx, targets["b"], ctx.text)
            except DelegationError as error:
                caught.append(error)
                raise
            return "unreachable"

    async def broken(ctx: TaskContext) -> None:
        with journal.running(ctx):
            raise RuntimeError("disk on fire")

    with anyio.fail_after(TIMEOUT):
        agents = (
            Agent(handler=root, name="a"),
            relay("b", journal, targets, "c"),
            Agent(handler=broken, name="c"),
        )
        async with served(*agents) as urls:
            targets.update(zip("abc", urls, strict=True))
            async with await A2AClient.connect(targets["a"]) as client:
                task = await client.send_message("go")
            c_id = journal.visit("c").task_id

            # the root agent got a typed error naming the origin and who relayed it
            (error,) = caught
            assert type(error) is DelegationError
            assert (error.origin_agent, error.origin_task_id) == ("c", c_id)
            assert error.state == "TASK_STATE_FAILED"
            assert error.reason == "disk on fire"
            assert error.relay == ("b",)
            assert error.path == ("a", "b", "c")

            # and the root's caller sees the same, relayed once more by the root
            assert state_of(task) is TaskState.FAILED
            assert isinstance(task, Task)
            assert task.status.message is not None
            assert task.status.message.text == (
                f"disk on fire [FAILED at c task {c_id}, relayed by b -> a]"
            )
            data = record_of(task).error
            assert data is not None
            assert data == {
                "type": "DelegationError",
                "reason": "disk on fire",
                "originAgent": "c",
                "originTaskId": c_id,
                "state": "TASK_STATE_FAILED",
                "relay": ["b", "a"],
                "path": ["a", "b", "c"],
            }
            assert record_of(task).children[0].state == "TASK_STATE_FAILED"
            assert journal.still_running() == []


async def test_input_required_at_hop_three_is_answered_by_the_roots_client() -> None:
    journal = Journal()
    targets: Targets = {}

    async def asks(ctx: TaskContext) -> str:
        with journal.running(ctx):
            answer = await ctx.ask("Which city?")
            return f"weather in {answer.text}"

    with anyio.fail_after(TIMEOUT):
        agents = (
            relay("a", journal, targets, "b"),
            relay("b", journal, targets, "c"),
            Agent(handler=asks, name="c"),
        )
        async with served(*agents) as urls:
            targets.update(zip("abc", urls, strict=True))
            async with await A2AClient.connect(targets["a"]) as client:
                question = await client.send_message("forecast")
                assert isinstance(question, Task)
                assert question.status.state is TaskState.INPUT_REQUIRED
                assert question.status.message is not None
                assert question.status.message.text == "Which city?"

                done = await client.send_message(
                    text_message("Paris", task_id=question.id, context_id=question.context_id)
                )
            assert isinstance(done, Task)
            assert done.id == question.id
            assert done.status.state is TaskState.COMPLETED
            assert done.status.message is not None
            assert done.status.message.text == "a[b[weather in Paris]]"
            # the answer went down to the same task at every hop: one child each, no retries
            c_task = await get_task(targets["c"], journal.visit("c").task_id)
            assert [m.text for m in c_task.history if m.role.value == "ROLE_USER"] == [
                "forecast",
                "Paris",
            ]
            b_task = await get_task(targets["b"], journal.visit("b").task_id)
            assert [e.task_id for e in record_of(b_task).children] == [c_task.id]
            assert [e.state for e in record_of(done).children] == ["TASK_STATE_COMPLETED"]
            assert journal.still_running() == []


async def test_depth_limit_and_cycle_are_refused_before_any_agent_runs() -> None:
    journal = Journal()
    targets: Targets = {}
    refusals: list[DelegationError] = []

    async def loop_back(ctx: TaskContext) -> str:
        """b: delegates to the target named in the text ("a" makes a cycle)."""
        with journal.running(ctx):
            result = await delegate(ctx, targets[ctx.text], "again")
            return result.text

    async def root(ctx: TaskContext) -> str:
        with journal.running(ctx):
            try:
                return (await delegate(ctx, targets["b"], ctx.text)).text
            except DelegationError as error:
                refusals.append(error)
                raise

    with anyio.fail_after(TIMEOUT):
        agents = (
            Agent(handler=root, name="a"),
            Agent(handler=loop_back, name="b"),
            leaf("c", journal),
        )
        async with served(*agents, orchestrator=lambda: Orchestrator(max_depth=1)) as urls:
            targets.update(zip("abc", urls, strict=True))
            async with await A2AClient.connect(targets["a"]) as client:
                too_deep = await client.send_message("c")  # a -> b -> c is depth 2 > 1
                cycle = await client.send_message("a")  # a -> b -> a

            assert journal.entered("c") == 0  # refused at b, before anything was sent
            assert journal.entered("a") == 2  # the two roots; a never ran as b's child
            depth_error, cycle_error = refusals
            assert isinstance(depth_error, DepthLimitError)
            assert depth_error.reason == (
                "delegation to 'c' refused: it would reach depth 2 (max 1)"
            )
            assert depth_error.path == ("a", "b", "c")
            assert isinstance(cycle_error, CycleError)
            assert cycle_error.reason == (
                "delegation to 'a' refused: it would revisit it (path a -> b -> a)"
            )
            for task in (too_deep, cycle):
                assert state_of(task) is TaskState.FAILED
            assert journal.still_running() == []

            # a hop that arrives too deep, or on a path that already visited the receiver,
            # is refused by the receiver: REJECTED, and the agent never runs
            async with await A2AClient.connect(targets["c"]) as client:
                forged: list[dict[str, Any]] = [
                    {"traceId": "1" * 32, "depth": 2, "path": ["x", "y", "c"]},
                    {"traceId": "1" * 32, "depth": 1, "path": ["c", "c"]},
                ]
                replies = [
                    await client.send_message(
                        text_message("hi", metadata={CORRELATION_URI: correlation}),
                        extensions=(CORRELATION_URI,),
                    )
                    for correlation in forged
                ]
            texts = []
            for reply in replies:
                assert isinstance(reply, Task)
                assert reply.status.state is TaskState.REJECTED
                assert reply.status.message is not None
                texts.append(reply.status.message.text)
            assert texts[0].startswith("hop refused by 'c': it arrived at depth 2 (max 1)")
            assert texts[1].startswith("hop refused by 'c': it is already on the path c -> c")
            assert journal.entered("c") == 0


@pytest.mark.parametrize("streaming", [True, False])
async def test_a_remote_agent_target_streaming_or_blocking(streaming: bool) -> None:
    journal = Journal()
    with anyio.fail_after(TIMEOUT):
        async with served(leaf("b", journal)) as [b_url]:
            async with await A2AClient.connect(b_url) as client, Orchestrator() as orch:
                remote = RemoteAgent(client, streaming=streaming)
                root = await run_root(orch, remote, "x")
            assert root.status.message is not None
            assert root.status.message.text == "b(x)"
            (entry,) = record_of(root).children
            assert (entry.agent, entry.state, entry.url) == ("b", "TASK_STATE_COMPLETED", b_url)
            assert entry.task_id == journal.visit("b").task_id


async def run_root(orch: Orchestrator, target: object, text: str) -> Task:
    """Delegate ``text`` to ``target`` from a root task of a fresh local supervisor."""

    async def root(ctx: TaskContext) -> str:
        return (await delegate(ctx, target, ctx.text)).text

    async with Supervisor(orchestrated(root), delegator=orch) as sup:
        reply = await sup.send_message(SendMessageRequest(message=text_message(text)))
    assert isinstance(reply, Task)
    return reply


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_cancel_cascade_and_input_relay_on_asyncio(anyio_backend: str) -> None:
    await test_cancel_at_the_root_cancels_every_hop_and_stops_all_agent_code()
    await test_input_required_at_hop_three_is_answered_by_the_roots_client()
