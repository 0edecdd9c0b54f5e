"""A remote child whose agent does not stream: started with ``returnImmediately``, then
polled with GetTask, so it is known, and cancellable, before it settles."""

from __future__ import annotations

import functools
import json
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel
import httpx
import pytest

from a2a_actors.client import text_message
from a2a_actors.protocol._models import Task, TaskState
from a2a_actors.protocol._requests import SendMessageRequest
from a2a_actors.runtime import Agent, Supervisor, TaskContext
from a2a_actors.server import ServerConfig, serve as serve_plain
from orchestrator import Orchestrator, delegate, orchestrated, serve, stream_delegate
from orchestrator._start import shielded_at_first

from .helpers import TIMEOUT, Journal, get_task, record_of, send, status_text

FAST_POLL = 0.05  # max_poll_interval: these tests wait for the child to end


def _body(request: httpx.Request) -> dict[str, Any]:
    """The JSON-RPC body of ``request`` ({} for anything else, e.g. the card)."""
    if request.method != "POST":
        return {}
    try:
        body = json.loads(request.content)
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


class Calls:
    """The JSON-RPC methods sent, each SendMessage's ``returnImmediately``, and whether a
    GetTask was sent (``polled``)."""

    def __init__(self) -> None:
        self.methods: list[str] = []
        self.immediately: list[bool] = []
        self.polled = anyio.Event()

    async def __call__(self, request: httpx.Request) -> None:
        body = _body(request)
        method = body.get("method")
        if not isinstance(method, str):
            return
        self.methods.append(method)
        if method == "SendMessage":
            config = body["params"].get("configuration") or {}
            self.immediately.append(bool(config.get("returnImmediately")))
        elif method == "GetTask":
            self.polled.set()

    def assert_polled_only(self) -> None:
        """Started with returnImmediately, never subscribed to (its agent cannot stream)."""
        assert self.methods[0] == "SendMessage"
        assert self.immediately
        assert all(self.immediately)
        assert "SubscribeToTask" not in self.methods
        assert "SendStreamingMessage" not in self.methods


class IgnoresReturnImmediately(httpx.AsyncBaseTransport):
    """Removes ``returnImmediately`` from every SendMessage on its way to the server, as
    a server that ignores it behaves: it answers once the child settled."""

    def __init__(self) -> None:
        self._inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = _body(request)
        if body.get("method") == "SendMessage":
            (body["params"].get("configuration") or {}).pop("returnImmediately", None)
            headers = [(k, v) for k, v in request.headers.multi_items() if k != "content-length"]
            request = httpx.Request(
                request.method,
                request.url,
                headers=headers,
                content=json.dumps(body).encode(),
                extensions=request.extensions,
            )
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


async def serve_non_streaming(
    tg: anyio.abc.TaskGroup, agent: Agent, *, orchestrated_child: bool
) -> str:
    """Serve ``agent`` on loopback without the streaming methods; its base URL."""
    config = ServerConfig(streaming=False)
    run = serve if orchestrated_child else serve_plain
    url: str = await tg.start(functools.partial(run, agent, config=config))
    return url


def watching_root(url: str, working: anyio.Event) -> Agent:
    """A root that delegates to ``url`` and sets ``working`` once it saw the child WORKING
    (its hop record is written by then)."""

    async def root(ctx: TaskContext) -> str:
        async with stream_delegate(ctx, url, ctx.text) as events:
            async for _ in events:
                task = events.task
                if task is not None and task.status.state is TaskState.WORKING:
                    working.set()
            return events.result().text

    return orchestrated(Agent(handler=root, name="root"))


@pytest.mark.parametrize("orchestrated_child", [False, True])
async def test_a_working_non_streaming_child_is_cancelled_with_its_root(
    orchestrated_child: bool,
) -> None:
    journal = Journal()
    calls = Calls()
    working = anyio.Event()

    async def busy(ctx: TaskContext) -> None:
        with journal.running(ctx):
            await ctx.update("busy")
            await anyio.sleep_forever()

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            agent = Agent(handler=busy, name="busy")
            url = await serve_non_streaming(tg, agent, orchestrated_child=orchestrated_child)
            async with (
                httpx.AsyncClient(event_hooks={"request": [calls]}) as http,
                Orchestrator(http_client=http) as orch,
                Supervisor(watching_root(url, working), delegator=orch) as sup,
            ):
                root = await send(sup, "x", immediately=True)
                await working.wait()
                await calls.polled.wait()  # it is being polled (it never ends by itself)
                (entry,) = record_of(await sup.get_task(root.id)).children
                assert (entry.agent, entry.state) == ("busy", "TASK_STATE_WORKING")
                assert journal.still_running() == ["busy"]

                task = await sup.cancel_task(root.id)

            # by the time the root's cancel returns, the child is CANCELED on its server
            assert task.status.state is TaskState.CANCELED
            assert journal.still_running() == []
            (entry,) = record_of(task).children
            assert (entry.agent, entry.state) == ("busy", "TASK_STATE_CANCELED")
            assert record_of(task).canceled_children == [entry.task_id]
            assert entry.task_id == journal.visit("busy").task_id
            child = await get_task(url, entry.task_id)
            assert child.status.state is TaskState.CANCELED
            calls.assert_polled_only()
            assert calls.methods.count("CancelTask") == 1
            tg.cancel_scope.cancel()


async def test_a_non_streaming_child_that_completes_returns_its_result() -> None:
    journal = Journal()
    calls = Calls()
    working, release = anyio.Event(), anyio.Event()

    async def slow(ctx: TaskContext) -> str:
        with journal.running(ctx):
            await ctx.update("busy")
            await release.wait()
            return f"slow({ctx.text})"

    async def release_once_seen_working() -> None:
        await working.wait()  # so the parent has to poll to see it complete
        release.set()

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            url = await serve_non_streaming(
                tg, Agent(handler=slow, name="slow"), orchestrated_child=False
            )
            async with (
                httpx.AsyncClient(event_hooks={"request": [calls]}) as http,
                Orchestrator(http_client=http, max_poll_interval=FAST_POLL) as orch,
                Supervisor(watching_root(url, working), delegator=orch) as sup,
            ):
                tg.start_soon(release_once_seen_working)
                task = await send(sup, "x")
            assert task.status.state is TaskState.COMPLETED
            assert status_text(task) == "slow(x)"
            (entry,) = record_of(task).children
            assert (entry.agent, entry.state) == ("slow", "TASK_STATE_COMPLETED")
            assert entry.task_id == journal.visit("slow").task_id
            calls.assert_polled_only()
            assert "GetTask" in calls.methods
            assert journal.still_running() == []
            tg.cancel_scope.cancel()


async def test_a_non_streaming_child_that_asks_is_relayed_and_answered() -> None:
    journal = Journal()
    calls = Calls()

    async def asks(ctx: TaskContext) -> str:
        with journal.running(ctx):
            answer = await ctx.ask("Which city?")
            return f"weather in {answer.text}"

    async def root(ctx: TaskContext) -> str:
        return (await delegate(ctx, url, ctx.text)).text

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            url = await serve_non_streaming(
                tg, Agent(handler=asks, name="asks"), orchestrated_child=True
            )
            async with (
                httpx.AsyncClient(event_hooks={"request": [calls]}) as http,
                Orchestrator(http_client=http, max_poll_interval=FAST_POLL) as orch,
                Supervisor(orchestrated(Agent(handler=root, name="root")), delegator=orch) as sup,
            ):
                question = await send(sup, "forecast")
                assert question.status.state is TaskState.INPUT_REQUIRED
                assert status_text(question) == "Which city?"
                done = await sup.send_message(
                    SendMessageRequest(
                        message=text_message(
                            "Paris", task_id=question.id, context_id=question.context_id
                        )
                    )
                )
            assert isinstance(done, Task)
            assert done.status.state is TaskState.COMPLETED
            assert status_text(done) == "weather in Paris"
            # the answer went to the same child task
            (entry,) = record_of(done).children
            assert entry.state == "TASK_STATE_COMPLETED"
            child = await get_task(url, entry.task_id)
            assert [m.text for m in child.history if m.role.value == "ROLE_USER"] == [
                "forecast",
                "Paris",
            ]
            calls.assert_polled_only()
            assert calls.immediately == [True, True]
            assert journal.still_running() == []
            tg.cancel_scope.cancel()


async def test_a_server_that_ignores_return_immediately_still_works() -> None:
    journal = Journal()
    calls = Calls()

    async def answers(ctx: TaskContext) -> str:
        with journal.running(ctx):
            if ctx.text == "ask":
                return f"asked {(await ctx.ask('Who?')).text}"
            return f"answers({ctx.text})"

    async def root(ctx: TaskContext) -> str:
        return (await delegate(ctx, url, ctx.text)).text

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            url = await serve_non_streaming(
                tg, Agent(handler=answers, name="answers"), orchestrated_child=False
            )
            async with (
                httpx.AsyncClient(
                    transport=IgnoresReturnImmediately(), event_hooks={"request": [calls]}
                ) as http,
                Orchestrator(http_client=http) as orch,
                Supervisor(orchestrated(Agent(handler=root, name="root")), delegator=orch) as sup,
            ):
                task = await send(sup, "x")
                assert task.status.state is TaskState.COMPLETED
                assert status_text(task) == "answers(x)"
                (entry,) = record_of(task).children
                assert (entry.agent, entry.state) == ("answers", "TASK_STATE_COMPLETED")

                question = await send(sup, "ask")
                assert question.status.state is TaskState.INPUT_REQUIRED
                assert status_text(question) == "Who?"
                done = await sup.send_message(
                    SendMessageRequest(
                        message=text_message(
                            "Ada", task_id=question.id, context_id=question.context_id
                        )
                    )
                )
            assert isinstance(done, Task)
            assert status_text(done) == "asked Ada"
            # every reply was already settled: nothing had to be polled
            calls.assert_polled_only()
            assert calls.methods == ["SendMessage"] * 3, calls.methods
            assert journal.still_running() == []
            tg.cancel_scope.cancel()


async def test_a_start_is_shielded_at_first_then_cancellable() -> None:
    async def answers() -> int:
        await anyio.lowlevel.checkpoint()
        return 1

    with anyio.fail_after(TIMEOUT):
        with anyio.CancelScope() as outer:
            outer.cancel()
            assert await shielded_at_first(answers, 60) == 1  # the cancel waited
        assert not outer.cancelled_caught
        with anyio.CancelScope() as outer:
            outer.cancel()
            await shielded_at_first(anyio.sleep_forever, 0)  # no longer shielded: cancelled
        assert outer.cancelled_caught


def test_poll_intervals_are_checked() -> None:
    with pytest.raises(ValueError, match="poll"):
        Orchestrator(poll_interval=0)
    with pytest.raises(ValueError, match="poll"):
        Orchestrator(poll_interval=1.0, max_poll_interval=0.5)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_polled_cancel_and_the_shielded_start_on_asyncio(anyio_backend: str) -> None:
    await test_a_working_non_streaming_child_is_cancelled_with_its_root(orchestrated_child=True)
    await test_a_start_is_shielded_at_first_then_cancellable()
