"""OpenTelemetry traces of real servers on loopback, into an in-memory exporter.

The multi-hop demo (five servers, two local hops) must be one trace with one root whose
spans form the hop tree, under the correlation extension's trace id; single requests show
their attributes, error codes and task state events.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from functools import partial

import anyio
import httpx
import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode, format_span_id, format_trace_id

from a2a_actors.client import A2AClient, RemoteAgent, request_headers
from a2a_actors.protocol._errors import TaskNotFoundError
from a2a_actors.protocol._models import Task, TaskState
from a2a_actors.runtime import Agent, TaskContext
from a2a_actors.server import GrpcOptions, MetricsOptions, ServerConfig, create_app, serve
from examples.multihop.agents import REMOTE
from examples.multihop.demo import run_demo
from orchestrator import CORRELATION_URI, HopNode, orchestrated
from orchestrator._correlation import hop_record

TIMEOUT = 30.0
SERVICE = "lf.a2a.v1.A2AService"


def _attr(span: ReadableSpan, key: str) -> object:
    return (span.attributes or {}).get(key)


def _nodes(node: HopNode) -> list[HopNode]:
    found = [node]
    for child in node.children:
        found.extend(_nodes(child))
    return found


def _trace_hex(span: ReadableSpan) -> str:
    assert span.context is not None
    return format_trace_id(span.context.trace_id)


def _id(span: ReadableSpan) -> int:
    assert span.context is not None
    return int(span.context.span_id)


def _only(spans: Sequence[ReadableSpan], **attributes: object) -> ReadableSpan:
    found = [s for s in spans if all(_attr(s, k) == v for k, v in attributes.items())]
    assert len(found) == 1, (attributes, [s.name for s in found])
    return found[0]


async def test_the_multihop_demo_is_one_trace_shaped_like_its_hop_tree(
    spans: InMemorySpanExporter,
) -> None:
    with anyio.fail_after(TIMEOUT):
        run = await run_demo(step=0.01)
    assert run.task.status.state is TaskState.COMPLETED
    nodes = _nodes(run.tree)
    assert len(nodes) == 9
    trace_id = run.tree.trace_id
    assert {node.trace_id for node in nodes} == {trace_id}  # the correlation's, on every hop

    trace = [s for s in spans.get_finished_spans() if _trace_hex(s) == trace_id]
    by_id = {_id(s): s for s in trace}
    roots = [s for s in trace if s.parent is None]
    assert len(roots) == 1
    (root,) = roots
    assert root.kind is SpanKind.SERVER
    assert root.name == f"{SERVICE}/SendMessage"
    assert _attr(root, "a2a.task.id") == run.task.id
    assert _attr(root, "a2a.task.state") == "TASK_STATE_COMPLETED"
    for span in trace:  # every parent is in the trace: no dangling link
        assert span.parent is None or span.parent.span_id in by_id, span.name

    task_spans = {str(_attr(s, "a2a.task.id")): s for s in trace if s.name == "a2a.task"}
    assert set(task_spans) == {node.task_id for node in nodes}
    server_spans = [s for s in trace if s.kind is SpanKind.SERVER]
    remote = [node for node in nodes if node.agent in REMOTE]
    assert len(server_spans) == len(remote) == 6  # a SERVER span per hop over HTTP
    for node in remote:
        server = _only(server_spans, **{"a2a.task.id": node.task_id})
        parent = task_spans[node.task_id].parent
        assert parent is not None
        assert parent.span_id == _id(server)
    client_spans = [s for s in trace if s.kind is SpanKind.CLIENT]
    assert len(client_spans) == len(nodes) - 1  # a CLIENT span per delegation
    assert {_attr(s, "a2a.delegation.outcome") for s in client_spans} == {"completed"}

    def task_parent(span: ReadableSpan) -> str | None:
        """The task whose span is the nearest task-span ancestor of ``span``."""
        parent = span.parent
        while parent is not None:
            above = by_id[parent.span_id]
            if above.name == "a2a.task":
                return str(_attr(above, "a2a.task.id"))
            parent = above.parent
        return None

    for node in nodes:  # the parent links are the hop tree's
        for child in node.children:
            assert task_parent(task_spans[child.task_id]) == node.task_id, child.agent
            delegation = _only(client_spans, **{"a2a.task.id": child.task_id})
            assert _attr(delegation, "a2a.delegation.target") == child.agent
            assert task_parent(delegation) == node.task_id
    for node in nodes:  # state changes as events, the final state as attribute
        span = task_spans[node.task_id]
        states = [(e.attributes or {}).get("a2a.task.state") for e in span.events]
        assert "TASK_STATE_WORKING" in states
        assert len(states) == len(set(states))  # changes only, each once
        assert states[-1] == "TASK_STATE_COMPLETED"
        assert _attr(span, "a2a.task.state") == "TASK_STATE_COMPLETED"
        assert _attr(span, "a2a.context.id") == node.context_id
        assert _attr(span, "a2a.agent") == node.agent  # local children: their own agent


@asynccontextmanager
async def _serving(agent: object) -> AsyncIterator[str]:
    async with anyio.create_task_group() as tg:
        url = await tg.start(partial(serve, agent))
        try:
            yield url
        finally:
            tg.cancel_scope.cancel()


async def _failing(ctx: TaskContext) -> str:
    await ctx.start()
    raise RuntimeError("disk on fire")


@pytest.mark.anyio
async def test_errors_show_on_the_server_span_and_failures_on_the_task_span(
    spans: InMemorySpanExporter,
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with _serving(Agent(handler=_failing, name="failing")) as url:
            async with await A2AClient.connect(url) as client:
                with pytest.raises(TaskNotFoundError):
                    await client.get_task("no-such-task")
                task = await client.send_message("go")
            async with httpx.AsyncClient() as http:
                answer = await http.get(
                    f"{url}/rest/tasks/no-such-task", headers={"A2A-Version": "1.0"}
                )
                assert answer.status_code == 404
    finished = spans.get_finished_spans()
    missing = [s for s in finished if s.name == f"{SERVICE}/GetTask"]
    assert [_attr(s, "a2a.binding") for s in missing] == ["jsonrpc", "rest"]
    for span in missing:
        assert span.kind is SpanKind.SERVER
        assert _attr(span, "rpc.system") == "a2a"
        assert _attr(span, "rpc.method") == "GetTask"
        assert _attr(span, "rpc.jsonrpc.error_code") == -32001
        assert _attr(span, "error.type") == "TASK_NOT_FOUND"
        assert _attr(span, "a2a.task.id") == "no-such-task"
        assert span.status.status_code is StatusCode.ERROR
    assert isinstance(task, Task)
    assert task.status.state is TaskState.FAILED
    sent = _only([s for s in finished if s.name == f"{SERVICE}/SendMessage"])
    assert _attr(sent, "a2a.task.state") == "TASK_STATE_FAILED"
    assert sent.status.status_code is StatusCode.UNSET  # the call succeeded; the task failed
    task_span = _only([s for s in finished if s.name == "a2a.task"])
    assert task_span.parent is not None
    assert task_span.parent.span_id == _id(sent)
    assert _attr(task_span, "a2a.task.state") == "TASK_STATE_FAILED"
    assert task_span.status.status_code is StatusCode.ERROR


@pytest.mark.anyio
async def test_an_incoming_traceparent_is_continued_and_becomes_the_root_correlation(
    spans: InMemorySpanExporter,
) -> None:
    seen: list[str] = []

    async def root(ctx: TaskContext) -> str:
        seen.append(ctx.headers.get("traceparent", ""))
        return "ok"

    caller_trace, caller_span = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    with anyio.fail_after(TIMEOUT):
        async with (
            _serving(orchestrated(Agent(handler=root, name="root"))) as url,
            await A2AClient.connect(url) as client,
        ):
            with request_headers({"traceparent": f"00-{caller_trace}-{caller_span}-01"}):
                task = await client.send_message("hi")
    assert isinstance(task, Task)
    record = hop_record(task.metadata)
    assert record is not None
    assert record.correlation.trace_id == caller_trace
    assert CORRELATION_URI in (task.metadata or {})
    server = _only(
        [s for s in spans.get_finished_spans() if s.kind is SpanKind.SERVER],
        **{"rpc.method": "SendMessage"},
    )
    assert _trace_hex(server) == caller_trace
    assert server.parent is not None
    assert format_span_id(server.parent.span_id) == caller_span
    # the agent sees the server span as its parent, not the caller's span
    assert seen == [f"00-{caller_trace}-{format_span_id(_id(server))}-01"]


@pytest.mark.anyio
async def test_a_remote_agent_call_is_a_client_span_continued_by_the_server(
    spans: InMemorySpanExporter,
) -> None:
    async def echo(ctx: TaskContext) -> str:
        return ctx.text

    with anyio.fail_after(TIMEOUT):
        async with (
            _serving(Agent(handler=echo, name="echo")) as url,
            await RemoteAgent.connect(url) as agent,
        ):
            result = await agent.call("hello")
    assert result.text == "hello"
    finished = spans.get_finished_spans()
    call = _only([s for s in finished if s.kind is SpanKind.CLIENT])
    assert call.name == "a2a.call echo"
    assert _attr(call, "a2a.task.state") == "TASK_STATE_COMPLETED"
    server = _only([s for s in finished if s.kind is SpanKind.SERVER])
    assert server.parent is not None
    assert server.parent.span_id == _id(call)
    assert _trace_hex(server) == _trace_hex(call)
    assert _attr(call, "a2a.task.id") == _attr(server, "a2a.task.id")


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # gRPC is served on asyncio only
async def test_grpc_calls_are_observed_and_continue_the_metadata_trace_context(
    spans: InMemorySpanExporter,
) -> None:
    async def echo(ctx: TaskContext) -> str:
        return ctx.text

    caller_trace, caller_span = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
    config = ServerConfig(grpc=GrpcOptions(port=0), metrics=MetricsOptions())
    app = create_app(Agent(handler=echo, name="echo"), config)
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            url = await tg.start(partial(serve, app))
            async with await A2AClient.connect(url, bindings=("GRPC",)) as client:
                with request_headers({"traceparent": f"00-{caller_trace}-{caller_span}-01"}):
                    task = await client.send_message("over grpc")
            async with httpx.AsyncClient() as http:
                scraped = (await http.get(f"{url}/metrics")).text
            tg.cancel_scope.cancel()
    assert isinstance(task, Task)
    server = _only([s for s in spans.get_finished_spans() if s.kind is SpanKind.SERVER])
    assert server.name == f"{SERVICE}/SendMessage"
    assert _attr(server, "a2a.binding") == "grpc"
    assert _attr(server, "a2a.task.id") == task.id
    assert _trace_hex(server) == caller_trace
    assert server.parent is not None
    assert format_span_id(server.parent.span_id) == caller_span
    sent = 'a2a_requests_total{binding="grpc",code="OK",method="SendMessage"} 1.0'
    assert sent in scraped
