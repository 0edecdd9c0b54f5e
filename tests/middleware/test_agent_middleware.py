"""Agent-side middleware (a2a_actors.runtime.middleware): order, refusal, changes, event
observation and failures, on a real Supervisor and over HTTP, on trio and asyncio."""

from __future__ import annotations

import dataclasses
import logging
from functools import partial

import anyio
import pytest

from a2a_actors.client import A2AClient
from a2a_actors.protocol import Message, Task, TaskState
from a2a_actors.runtime import Agent, InProcessClient, Supervisor, TaskContext, agent
from a2a_actors.runtime.middleware import (
    AgentMiddleware,
    AgentNext,
    HandlerChain,
    log_calls,
    watched,
)
from a2a_actors.server import ServerConfig, serve
from orchestrator.serving import serve as serve_orchestrated

pytestmark = pytest.mark.anyio


def as_task(result: Task | Message) -> Task:
    assert isinstance(result, Task), f"expected a Task, got {result!r}"
    return result


def status_text(task: Task) -> str:
    return task.status.message.text if task.status.message is not None else ""


def tracing(log: list[str], name: str):  # type: ignore[no-untyped-def]
    async def middleware(ctx: TaskContext, next: AgentNext) -> object:
        log.append(f"{name} in")
        result = await next(ctx)
        log.append(f"{name} out")
        return result

    return middleware


async def test_middleware_run_outermost_first_around_the_handler() -> None:
    log: list[str] = []

    async def handler(ctx: TaskContext) -> str:
        log.append("handler")
        return "done"

    echo = Agent(
        handler=handler, name="echo", middleware=[tracing(log, "outer"), tracing(log, "inner")]
    )
    with anyio.fail_after(5):
        async with Supervisor(echo) as sup:
            task = as_task(await InProcessClient(sup).send_message("x"))
    assert task.status.state is TaskState.COMPLETED
    assert log == ["outer in", "inner in", "handler", "inner out", "outer out"]


async def test_composed_once_and_replace_wraps_outside() -> None:
    log: list[str] = []

    @agent(name="a", middleware=[tracing(log, "first")])
    async def a(ctx: TaskContext) -> str:
        log.append("handler")
        return "ok"

    assert isinstance(a.handler, HandlerChain)
    assert a.middleware == ()
    renamed = dataclasses.replace(a, name="b")  # no second wrapping
    wrapped = dataclasses.replace(a, middleware=[tracing(log, "second")])
    with anyio.fail_after(5):
        async with Supervisor(renamed) as sup:
            await InProcessClient(sup).send_message("x")
        assert log == ["first in", "handler", "first out"]
        log.clear()
        async with Supervisor(wrapped) as sup:
            await InProcessClient(sup).send_message("x")
    assert log == ["second in", "first in", "handler", "first out", "second out"]


async def test_a_middleware_refuses_by_rejecting_without_calling_next() -> None:
    ran: list[str] = []

    async def only_alice(ctx: TaskContext, next: AgentNext) -> object:
        if ctx.text != "alice":
            await ctx.reject(f"{ctx.text} may not use this agent")
            return None
        return await next(ctx)

    async def handler(ctx: TaskContext) -> str:
        ran.append(ctx.text)
        return "welcome"

    gated = Agent(handler=handler, name="gated", middleware=[only_alice])
    with anyio.fail_after(5):
        async with Supervisor(gated) as sup:
            client = InProcessClient(sup)
            refused = as_task(await client.send_message("mallory"))
            allowed = as_task(await client.send_message("alice"))
    assert refused.status.state is TaskState.REJECTED
    assert status_text(refused) == "mallory may not use this agent"
    assert allowed.status.state is TaskState.COMPLETED
    assert status_text(allowed) == "welcome"
    assert ran == ["alice"]


async def test_a_middleware_changes_the_result() -> None:
    async def shout(ctx: TaskContext, next: AgentNext) -> object:
        result = await next(ctx)
        return str(result).upper()

    loud = Agent(handler=_echo, name="loud", middleware=[shout])
    with anyio.fail_after(5):
        async with Supervisor(loud) as sup:
            task = as_task(await InProcessClient(sup).send_message("hello"))
    assert status_text(task) == "HELLO"


async def _echo(ctx: TaskContext) -> str:
    return ctx.text


async def test_watched_reports_each_action_as_it_happens() -> None:
    seen: list[tuple[str, TaskState, int]] = []
    completed = anyio.Event()

    async def observe(ctx: TaskContext, next: AgentNext) -> object:
        def on_event(kind: str, task: Task) -> None:
            seen.append((kind, task.status.state, len(task.artifacts)))
            if kind == "complete":
                completed.set()

        return await next(watched(ctx, on_event))

    async def worker(ctx: TaskContext) -> None:
        await ctx.update("working on it")
        await ctx.artifact("part one", name="result")
        answer = await ctx.ask("more?")
        await ctx.complete(f"finished with {answer.text}")

    observed = Agent(handler=worker, name="worker", middleware=[observe])
    with anyio.fail_after(5):
        async with Supervisor(observed) as sup:
            client = InProcessClient(sup)
            first = as_task(await client.send_message("go"))
            assert first.status.state is TaskState.INPUT_REQUIRED
            last = as_task(await client.send_message("yes", task_id=first.id))
            await completed.wait()  # the caller may learn the outcome before the handler
    assert last.status.state is TaskState.COMPLETED
    assert seen == [
        ("update", TaskState.WORKING, 0),
        ("artifact", TaskState.WORKING, 1),
        ("ask", TaskState.WORKING, 1),
        ("complete", TaskState.COMPLETED, 1),
    ]


async def test_nested_watchers_each_see_every_action_outer_first() -> None:
    seen: list[str] = []
    done = anyio.Event()

    def watcher(label: str) -> AgentMiddleware:
        def on_event(kind: str, task: Task) -> None:
            seen.append(f"{label}:{kind}")
            if seen[-1] == "inner:complete":
                done.set()

        async def watch(ctx: TaskContext, next: AgentNext) -> object:
            return await next(watched(ctx, on_event))

        return watch

    async def worker(ctx: TaskContext) -> None:
        assert isinstance(ctx, TaskContext)  # a real context, not a stand-in
        await ctx.start()
        await ctx.complete("done")

    observed = Agent(handler=worker, name="worker", middleware=[watcher("outer"), watcher("inner")])
    with anyio.fail_after(5):
        async with Supervisor(observed) as sup:
            task = as_task(await InProcessClient(sup).send_message("go"))
            await done.wait()  # the caller may learn the outcome before the handler
    assert task.status.state is TaskState.COMPLETED
    assert seen == ["outer:start", "inner:start", "outer:complete", "inner:complete"]


async def test_a_middleware_that_raises_fails_only_its_task() -> None:
    release = anyio.Event()

    async def fragile(ctx: TaskContext, next: AgentNext) -> object:
        if ctx.text == "boom":
            raise RuntimeError("middleware broke")
        return await next(ctx)

    async def slow(ctx: TaskContext) -> str:
        await release.wait()
        return f"survived {ctx.text}"

    agent_ = Agent(handler=slow, name="slow", middleware=[fragile])
    calm: list[Task] = []
    with anyio.fail_after(5):
        async with Supervisor(agent_) as sup:
            client = InProcessClient(sup)

            async def send_calm() -> None:
                calm.append(as_task(await client.send_message("calm")))

            async with anyio.create_task_group() as tg:
                tg.start_soon(send_calm)
                failed = as_task(await client.send_message("boom"))
                assert failed.status.state is TaskState.FAILED
                assert status_text(failed) == "middleware broke"
                release.set()
            assert calm[0].status.state is TaskState.COMPLETED
            assert status_text(calm[0]) == "survived calm"
            again = as_task(await client.send_message("fine"))
    assert again.status.state is TaskState.COMPLETED


async def test_an_error_after_next_fails_the_task_and_cancel_reaches_the_middleware() -> None:
    cleaned: list[str] = []

    async def audit(ctx: TaskContext, next: AgentNext) -> object:
        try:
            result = await next(ctx)
        finally:
            cleaned.append(ctx.text)
        if ctx.text == "bad-result":
            raise ValueError("result refused by policy")
        return result

    async def handler(ctx: TaskContext) -> str:
        if ctx.text == "sleep":
            await anyio.sleep_forever()
        return "ok"

    audited = Agent(handler=handler, name="audited", middleware=[audit])
    with anyio.fail_after(5):
        async with Supervisor(audited) as sup:
            client = InProcessClient(sup)
            refused = as_task(await client.send_message("bad-result"))
            sleeping = as_task(await client.send_message("sleep", return_immediately=True))
            canceled = await client.cancel_task(sleeping.id)
    assert refused.status.state is TaskState.FAILED
    assert status_text(refused) == "result refused by policy"
    assert canceled.status.state is TaskState.CANCELED
    assert cleaned == ["bad-result", "sleep"]


async def test_log_calls_times_each_run(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="a2a_actors.middleware")

    async def handler(ctx: TaskContext) -> str:
        if ctx.text == "boom":
            raise KeyError("x")
        return "ok"

    logged = Agent(handler=handler, name="logged", middleware=[log_calls()])
    with anyio.fail_after(5):
        async with Supervisor(logged) as sup:
            ok = as_task(await InProcessClient(sup).send_message("fine"))
            bad = as_task(await InProcessClient(sup).send_message("boom"))
    lines = [r.getMessage() for r in caplog.records if r.name == "a2a_actors.middleware"]
    assert any(f"agent logged task {ok.id}: returned in" in line for line in lines)
    assert any(f"agent logged task {bad.id}: raised KeyError after" in line for line in lines)


def test_a_middleware_that_is_not_callable_is_refused_when_the_agent_is_built() -> None:
    with pytest.raises(TypeError, match="a middleware is an async callable"):
        Agent(handler=_echo, name="x", middleware=["not callable"])  # type: ignore[list-item]


async def test_served_with_config_middleware_over_http() -> None:
    log: list[str] = []

    async def tag(ctx: TaskContext, next: AgentNext) -> object:
        log.append(ctx.caller or "anonymous")
        return f"[{await next(ctx)}]"

    config = ServerConfig(middleware=(tag,))
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            url = await tg.start(
                lambda task_status: serve(_echo, config=config, task_status=task_status)
            )
            async with await A2AClient.connect(url) as client:
                task = as_task(await client.send_message("hi"))
            tg.cancel_scope.cancel()
    assert status_text(task) == "[hi]"
    assert log == ["anonymous"]


async def test_orchestrator_serve_applies_config_middleware() -> None:
    async def tag(ctx: TaskContext, next: AgentNext) -> object:
        return f"<{await next(ctx)}>"

    config = ServerConfig(middleware=(tag,))
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            url = await tg.start(partial(serve_orchestrated, _echo, config=config))
            async with await A2AClient.connect(url) as client:
                task = as_task(await client.send_message("hi"))
            tg.cancel_scope.cancel()
    assert status_text(task) == "<hi>"
