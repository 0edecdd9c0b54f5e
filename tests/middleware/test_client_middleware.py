"""Caller-side middleware (a2a_actors.client.middleware) around A2AClient, RemoteAgent and
delegation, against real servers on 127.0.0.1 port 0, on trio and asyncio."""

from __future__ import annotations

import dataclasses
import logging
import socket

import anyio
import msgspec
import pytest

from a2a_actors.client import A2AClient, A2AConnectionError, RemoteAgent
from a2a_actors.client._transports.transport import current_request_headers, request_headers
from a2a_actors.client.middleware import (
    ClientCall,
    ClientNext,
    log_calls,
    observed,
    retry_reads,
    retry_sends,
)
from a2a_actors.protocol import Message, StreamResponse, Task, TaskState
from a2a_actors.protocol._errors import InvalidParamsError, TaskNotFoundError
from a2a_actors.protocol._requests import GetTaskRequest, SendMessageRequest
from a2a_actors.runtime import TaskContext
from orchestrator import Orchestrator, sequence
from orchestrator.serving import serve as serve_orchestrated
from tests.registry.helpers import reverser, served, upper

pytestmark = pytest.mark.anyio


def tracing(log: list[str], name: str):  # type: ignore[no-untyped-def]
    async def middleware(call: ClientCall, next: ClientNext) -> object:
        log.append(f"{name} {call.method}")
        result = await next(call)
        log.append(f"{name} done")
        return result

    return middleware


def as_task(result: Task | Message) -> Task:
    assert isinstance(result, Task), f"expected a Task, got {result!r}"
    return result


async def test_order_outermost_first_including_the_card_fetch() -> None:
    log: list[str] = []
    with anyio.fail_after(10):
        async with served(upper) as url:
            chain = [tracing(log, "outer"), tracing(log, "inner")]
            async with await A2AClient.connect(url, middleware=chain) as client:
                task = as_task(await client.send_message("hi"))
    assert task.status.message is not None
    assert task.status.message.text == "HI"
    assert log == [
        "outer GetAgentCard",
        "inner GetAgentCard",
        "inner done",
        "outer done",
        "outer SendMessage",
        "inner SendMessage",
        "inner done",
        "outer done",
    ]


async def test_a_middleware_refuses_a_call_before_it_is_sent() -> None:
    sent: list[str] = []

    async def read_only(call: ClientCall, next: ClientNext) -> object:
        if call.method in ("SendMessage", "SendStreamingMessage"):
            raise InvalidParamsError(f"{call.method} is not allowed from here")
        return await next(call)

    async def count(call: ClientCall, next: ClientNext) -> object:
        sent.append(call.method)
        return await next(call)

    with anyio.fail_after(10):
        async with (
            served(upper) as url,
            await A2AClient.connect(url, middleware=[read_only, count]) as client,
        ):
            with pytest.raises(InvalidParamsError, match="SendMessage is not allowed"):
                await client.send_message("hi")
            with pytest.raises(InvalidParamsError):
                async with client.stream_message("hi"):
                    pass
            page = await client.list_tasks()
    assert page.tasks == ()  # nothing reached the agent
    assert sent == ["GetAgentCard", "ListTasks"]


async def test_a_middleware_changes_the_call() -> None:
    async def prefix(call: ClientCall, next: ClientNext) -> object:
        if isinstance(call.params, SendMessageRequest):
            message = call.params.message
            part = msgspec.structs.replace(message.parts[0], text="changed: " + message.text)
            changed = msgspec.structs.replace(message, parts=(part,))
            params = msgspec.structs.replace(call.params, message=changed)
            call = dataclasses.replace(call, params=params)
        return await next(call)

    with anyio.fail_after(10):
        async with (
            served(upper) as url,
            await A2AClient.connect(url, middleware=[prefix]) as client,
        ):
            task = as_task(await client.send_message("hi"))
    assert task.status.message is not None
    assert task.status.message.text == "CHANGED: HI"


async def test_stream_events_are_observed_and_the_end_is_reported() -> None:
    events: list[str] = []
    ended: list[BaseException | None] = []

    async def watch(call: ClientCall, next: ClientNext) -> object:
        result = await next(call)
        if not call.streaming:
            return result

        def on_event(event: StreamResponse) -> None:
            events.append("task" if event.task else "status" if event.status_update else "other")

        return observed(result, on_event, ended.append)  # type: ignore[arg-type]

    async def chatty(ctx: TaskContext) -> str:
        await ctx.update("step 1")
        await ctx.update("step 2")
        return "done"

    with anyio.fail_after(10):
        async with (
            served(chatty) as url,
            await A2AClient.connect(url, middleware=[watch]) as client,
            client.stream_message("go") as stream,
        ):
            received = [event async for event in stream]
    assert len(events) == len(received) >= 3
    assert events[0] == "task"
    assert events[-1] == "status"
    assert stream.state is TaskState.COMPLETED


async def test_retry_reads_repeats_idempotent_reads_only() -> None:
    attempts: list[str] = []
    failures = {"GetTask": 2, "SendMessage": 1}

    async def flaky(call: ClientCall, next: ClientNext) -> object:
        attempts.append(call.method)
        if failures.get(call.method, 0) > 0:
            failures[call.method] -= 1
            raise A2AConnectionError(f"connection to {call.url} reset")
        return await next(call)

    with anyio.fail_after(10):
        async with served(upper) as url:
            middleware = [retry_reads(3, backoff=0.0), flaky]
            async with await A2AClient.connect(url, middleware=middleware) as client:
                with pytest.raises(A2AConnectionError):
                    await client.send_message("hi")  # never repeated
                task = as_task(await client.send_message("hi"))
                again = await client.get_task(task.id)
                with pytest.raises(TaskNotFoundError):  # an error of the agent: not retried
                    await client.get_task("no-such-task")
    assert again.id == task.id
    assert attempts == [
        "GetAgentCard",
        "SendMessage",
        "SendMessage",
        "GetTask",
        "GetTask",
        "GetTask",
        "GetTask",
    ]


async def test_retry_reads_gives_up_after_its_attempts_on_a_dead_server() -> None:
    tries: list[str] = []

    async def count(call: ClientCall, next: ClientNext) -> object:
        tries.append(call.method)
        return await next(call)

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    with anyio.fail_after(10):
        with pytest.raises(A2AConnectionError):
            await A2AClient.connect(url, middleware=[retry_reads(3, backoff=0.01), count])
        async with A2AClient(url, middleware=[retry_reads(2, backoff=0.0), count]) as client:
            with pytest.raises(A2AConnectionError):
                await client.transport.call("GetTask", GetTaskRequest(id="t"), Task)
    assert tries == ["GetAgentCard"] * 3 + ["GetTask"] * 2


async def test_retry_sends_repeats_a_lost_answer_and_the_server_runs_it_once() -> None:
    keys: list[str] = []
    lost = {"SendMessage": 1, "SendStreamingMessage": 1}

    async def answer_lost(call: ClientCall, next: ClientNext) -> object:
        if call.method == "GetAgentCard":
            return await next(call)
        keys.append((current_request_headers() or {}).get("Idempotency-Key", ""))
        result = await next(call)  # the server has applied it...
        if lost.get(call.method, 0) > 0:
            lost[call.method] -= 1  # ...and the answer never reaches the caller
            raise A2AConnectionError(f"connection to {call.url} reset")
        return result

    with anyio.fail_after(10):
        async with served(upper) as url:
            middleware = [retry_sends(3, backoff=0.0), answer_lost]
            async with await A2AClient.connect(url, middleware=middleware) as client:
                task = as_task(await client.send_message("hi"))
                async with client.stream_message("again") as stream:
                    streamed = [event async for event in stream]
                with request_headers({"Idempotency-Key": "mine"}):
                    mine = as_task(await client.send_message("third"))
                page = await client.list_tasks()
    assert task.status.message is not None
    assert task.status.message.text == "HI"
    assert streamed
    assert stream.state is TaskState.COMPLETED
    assert len(page.tasks) == 3  # one task per send, however many tries
    assert keys[0] == keys[1] != keys[2] == keys[3]  # a fresh key per send, kept on retry
    assert len(keys[0]) == 32
    assert keys[4] == "mine"  # a key the caller set is the one sent
    assert mine.id != task.id


async def test_retry_sends_leaves_other_calls_alone() -> None:
    seen: list[tuple[str, str | None]] = []

    async def record(call: ClientCall, next: ClientNext) -> object:
        seen.append((call.method, (current_request_headers() or {}).get("Idempotency-Key")))
        return await next(call)

    with anyio.fail_after(10):
        async with served(upper) as url:
            middleware = [retry_sends(), record]
            async with await A2AClient.connect(url, middleware=middleware) as client:
                task = as_task(await client.send_message("hi"))
                await client.get_task(task.id)
    assert [method for method, _ in seen] == ["GetAgentCard", "SendMessage", "GetTask"]
    assert seen[0][1] is None
    assert seen[2][1] is None
    assert seen[1][1]


def test_retry_sends_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="attempts"):
        retry_sends(0)
    with pytest.raises(ValueError, match="backoff"):
        retry_sends(backoff=float("nan"))


def test_retry_reads_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="attempts"):
        retry_reads(0)
    with pytest.raises(ValueError, match="backoff"):
        retry_reads(backoff=-1)


async def test_log_calls_times_unary_calls_and_streams(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="a2a_actors.client.middleware")
    with anyio.fail_after(10):
        async with (
            served(upper) as url,
            await A2AClient.connect(url, middleware=[log_calls()]) as client,
        ):
            await client.send_message("hi")
            async with client.stream_message("hi") as stream:
                async for _ in stream:
                    pass
    lines = [r.getMessage() for r in caplog.records]
    assert any(line.startswith(f"GetAgentCard {url}: ok in ") for line in lines)
    assert any(line.startswith("SendMessage ") and ": ok in " in line for line in lines)
    assert any("SendStreamingMessage" in line and "stream open in" in line for line in lines)
    assert any("stream ended after" in line and "events in" in line for line in lines)


async def test_a_middleware_that_is_not_callable_is_refused() -> None:
    with pytest.raises(TypeError, match="client middleware is an async callable"):
        A2AClient("http://127.0.0.1:1", middleware=[42])  # type: ignore[list-item]


async def test_remote_agent_and_delegation_go_through_the_chain() -> None:
    log: list[str] = []
    with anyio.fail_after(20):
        async with served(upper) as up, served(reverser) as rev:
            remote = await RemoteAgent.connect(up, middleware=[tracing(log, "remote")])
            async with remote:
                result = await remote.call("abc")
            assert result.text == "ABC"
            assert "remote GetAgentCard" in log
            assert log[-1] == "remote done"
            log.clear()

            pipeline = sequence(up, rev, name="pipeline")
            orch = Orchestrator(middleware=[tracing(log, "delegation")])
            async with orch, anyio.create_task_group() as tg:
                url = await tg.start(
                    lambda task_status: serve_orchestrated(
                        pipeline, orchestrator=orch, task_status=task_status
                    )
                )
                async with await A2AClient.connect(url) as client:
                    task = as_task(await client.send_message("abc"))
                tg.cancel_scope.cancel()
    assert task.status.message is not None
    assert task.status.message.text == "CBA"
    cards = [line for line in log if line == "delegation GetAgentCard"]
    assert len(cards) == 2  # one connection per remote agent, through the chain
    sends = ("delegation SendMessage", "delegation SendStreamingMessage")
    assert sum(line.startswith(sends) for line in log) == 2, log
