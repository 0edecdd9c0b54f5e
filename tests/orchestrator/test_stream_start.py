"""How a remote child is started: one SendStreamingMessage for an orchestrated agent,
``returnImmediately`` then SubscribeToTask for any other; cancellable either way."""

from __future__ import annotations

import dataclasses
import json

import anyio
import httpx
import pytest

from a2a_actors.protocol._card import AgentExtension
from a2a_actors.protocol._models import Task, TaskState
from a2a_actors.runtime import Agent, Supervisor, TaskContext
from a2a_actors.server import serve as serve_plain
from orchestrator import CORRELATION_URI, Orchestrator, delegate, orchestrated

from .helpers import TIMEOUT, Journal, get_task, record_of, send, served


def _method(request: httpx.Request) -> str | None:
    """The JSON-RPC method of ``request`` (None for anything else, e.g. the card)."""
    if request.method != "POST":
        return None
    try:
        body = json.loads(request.content)
    except ValueError:
        return request.url.path
    return body.get("method") if isinstance(body, dict) else None


def leaf(name: str, journal: Journal) -> Agent:
    async def handle(ctx: TaskContext) -> str:
        with journal.running(ctx):
            return f"{name}({ctx.text})"

    return Agent(handler=handle, name=name)


def stuck(name: str, journal: Journal, entered: anyio.Event | None = None) -> Agent:
    """An agent that blocks before emitting anything."""

    async def handle(ctx: TaskContext) -> None:
        with journal.running(ctx):
            if entered is not None:
                entered.set()
            await anyio.sleep_forever()

    return Agent(handler=handle, name=name)


def root_to(url: str) -> Agent:
    async def root(ctx: TaskContext) -> str:
        return (await delegate(ctx, url, ctx.text)).text

    return orchestrated(Agent(handler=root, name="root"))


async def test_an_orchestrated_remote_child_is_one_streaming_call_others_start_then_follow() -> (
    None
):
    journal = Journal()
    methods: list[str | None] = []

    async def on_request(request: httpx.Request) -> None:
        methods.append(_method(request))

    with anyio.fail_after(TIMEOUT):
        async with (
            served(leaf("orch", journal)) as [orch_url],
            anyio.create_task_group() as tg,
        ):
            plain_url = await tg.start(serve_plain, leaf("plain", journal))
            # declares the extension but not startsAtOnce: its first event may wait too
            unsaid = dataclasses.replace(
                leaf("unsaid", journal),
                extensions=(AgentExtension(uri=CORRELATION_URI, description="no params"),),
            )
            unsaid_url = await tg.start(serve_plain, unsaid)
            async with (
                httpx.AsyncClient(event_hooks={"request": [on_request]}) as http,
                Orchestrator(http_client=http) as orch,
            ):
                cases = ((orch_url, "orch(x)"), (plain_url, "plain(x)"), (unsaid_url, "unsaid(x)"))
                for url, expected in cases:
                    methods.clear()
                    async with Supervisor(root_to(url), delegator=orch) as sup:
                        task = await send(sup, "x")
                    assert task.status.state is TaskState.COMPLETED
                    assert task.status.message is not None
                    assert task.status.message.text == expected
                    (entry,) = record_of(task).children
                    assert entry.state == "TASK_STATE_COMPLETED"
                    calls = [m for m in methods if m is not None]
                    if url == orch_url:
                        assert calls == ["SendStreamingMessage"]
                    else:  # its card does not say it starts at once: its first event may wait
                        assert calls[:2] == ["SendMessage", "SubscribeToTask"]
                        assert "SendStreamingMessage" not in calls
            tg.cancel_scope.cancel()


async def test_a_cancel_while_the_streaming_start_is_in_flight_still_cancels_the_child() -> None:
    journal = Journal()
    held, release = anyio.Event(), anyio.Event()

    async def on_response(response: httpx.Response) -> None:
        if _method(response.request) == "SendStreamingMessage" and not held.is_set():
            held.set()
            await release.wait()  # the start is in flight: the child's id is not known yet

    with anyio.fail_after(TIMEOUT):
        async with (
            served(stuck("c", journal)) as [c_url],
            httpx.AsyncClient(event_hooks={"response": [on_response]}) as http,
            Orchestrator(http_client=http) as orch,
            Supervisor(root_to(c_url), delegator=orch) as sup,
        ):
            root = await send(sup, "x", immediately=True)
            await held.wait()
            canceled: list[Task] = []

            async def cancel() -> None:
                canceled.append(await sup.cancel_task(root.id))

            async with anyio.create_task_group() as tg:
                tg.start_soon(cancel)
                # Once every task is blocked, the cancel has been requested (nothing awaits
                # before it does) and everything it could set off has run: the root still
                # works, shielded until the child is known (only ``release`` moves it on).
                await anyio.wait_all_tasks_blocked()
                assert canceled == []
                still = await sup.get_task(root.id)
                assert still.status.state is TaskState.WORKING
                release.set()
            (task,) = canceled
            assert task.status.state is TaskState.CANCELED
            assert journal.still_running() == []
            (entry,) = record_of(task).children
            assert (entry.agent, entry.state) == ("c", "TASK_STATE_CANCELED")
            assert record_of(task).canceled_children == [entry.task_id]
            child = await get_task(c_url, entry.task_id)
            assert child.status.state is TaskState.CANCELED


async def test_a_blocked_non_orchestrated_remote_child_is_cancelled_with_its_parent() -> None:
    journal = Journal()
    entered = anyio.Event()
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            url = await tg.start(serve_plain, stuck("plain", journal, entered))
            async with (
                Orchestrator() as orch,
                Supervisor(root_to(url), delegator=orch) as sup,
            ):
                root = await send(sup, "x", immediately=True)
                await entered.wait()  # blocked before emitting: its stream shows nothing
                task = await sup.cancel_task(root.id)
            assert task.status.state is TaskState.CANCELED
            assert journal.still_running() == []
            (entry,) = record_of(task).children
            assert (entry.agent, entry.state) == ("plain", "TASK_STATE_CANCELED")
            child = await get_task(url, entry.task_id)
            assert child.status.state is TaskState.CANCELED
            tg.cancel_scope.cancel()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_both_starts_are_cancellable_on_asyncio(anyio_backend: str) -> None:
    await test_a_cancel_while_the_streaming_start_is_in_flight_still_cancels_the_child()
    await test_a_blocked_non_orchestrated_remote_child_is_cancelled_with_its_parent()
