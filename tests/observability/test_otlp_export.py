"""The examples export their traces when the standard OTEL_* variables say so.

Each example runs in a subprocess, configured only through the environment, against a real
OTLP/HTTP receiver started here (an HTTP server on 127.0.0.1 that records the protobuf
POSTs to /v1/traces). Without the variables, or with OTEL_SDK_DISABLED=true, a served app
imports nothing of OpenTelemetry and serves the plain methods.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path

import anyio
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from a2a_actors.runtime import _tracing as tracing
from tests.observability.otlp import (
    Exported,
    attributes,
    clean_environment,
    exported_spans,
    otlp_environment,
)
from tests.push.receiver import receiver

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60.0


async def _run_example(args: list[str], env: dict[str, str]) -> str:
    done = await anyio.run_process([sys.executable, "-m", *args], env=env, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode()


def _one_rooted_trace(exported: list[Exported], trace_id: str) -> list[Span]:
    trace = [e.span for e in exported if e.span.trace_id.hex() == trace_id]
    ids = {span.span_id for span in trace}
    roots = [span for span in trace if not span.parent_span_id]
    assert len(roots) == 1, [span.name for span in roots]
    for span in trace:
        assert not span.parent_span_id or span.parent_span_id in ids, span.name
    return trace


async def test_the_multihop_demo_exports_one_trace_over_otlp_http() -> None:
    with anyio.fail_after(TIMEOUT):
        async with receiver() as collector:
            env = otlp_environment(collector.base_url, "multihop-demo")
            out = await _run_example(["examples.multihop", "--json", "--step", "0.01"], env)
            requests = list(collector.requests)
    tree = json.loads(out)
    exported = exported_spans(requests)
    assert exported
    assert {e.service for e in exported} == {"multihop-demo"}
    trace = _one_rooted_trace(exported, tree["traceId"])
    servers = [s for s in trace if s.kind == Span.SpanKind.SPAN_KIND_SERVER]
    clients = [s for s in trace if s.kind == Span.SpanKind.SPAN_KIND_CLIENT]
    tasks = [s for s in trace if s.name == "a2a.task"]
    assert len(servers) == 6
    assert len(clients) == 8
    assert len(tasks) == 9

    def task_ids(node: Mapping[str, object]) -> set[object]:
        children = node["children"]
        assert isinstance(children, list)
        return {node["taskId"]}.union(*(task_ids(child) for child in children))

    assert {attributes(s)["a2a.task.id"] for s in tasks} == task_ids(tree)
    (root,) = [s for s in trace if not s.parent_span_id]
    assert root.name == "lf.a2a.v1.A2AService/SendMessage"
    assert attributes(root)["a2a.task.state"] == "TASK_STATE_COMPLETED"


async def test_the_pipeline_example_exports_its_trace() -> None:
    with anyio.fail_after(TIMEOUT):
        async with receiver() as collector:
            env = otlp_environment(collector.base_url, "pipeline-example")
            out = await _run_example(["examples.pipeline", "the tea is good"], env)
            requests = list(collector.requests)
    assert out.startswith("COMPLETED")
    exported = exported_spans(requests)
    sends = [e.span for e in exported if e.span.name == "lf.a2a.v1.A2AService/SendMessage"]
    assert len(sends) == 1  # the call to the pipeline (its steps are streamed)
    trace = _one_rooted_trace(exported, sends[0].trace_id.hex())
    delegated = {
        attributes(s)["a2a.delegation.target"]
        for s in trace
        if s.kind == Span.SpanKind.SPAN_KIND_CLIENT
    }
    assert {"clean", "translate-and-count", "translator", "count"} <= delegated
    translator = [
        s for s in trace if s.kind == Span.SpanKind.SPAN_KIND_SERVER and s is not sends[0]
    ]
    assert len(translator) == 1  # the remote step, continued from its CLIENT span
    parent = {s.span_id: s for s in trace}[translator[0].parent_span_id]
    assert parent.kind == Span.SpanKind.SPAN_KIND_CLIENT


_PROBE = """
import sys
if sys.argv[1:] == ["no-extra"]:  # as if the otel extra were not installed
    sys.modules["opentelemetry"] = None
import anyio
from functools import partial
from a2a_actors.client import A2AClient
from a2a_actors.server import serve, service_of, create_app
from a2a_actors.server._methods import Methods
from examples.echo import agent

async def main():
    app = create_app(agent)
    async with anyio.create_task_group() as tg:
        url = await tg.start(partial(serve, app))
        async with await A2AClient.connect(url) as client:
            await client.send_message("hi")
        assert type(service_of(app).methods) is Methods, type(service_of(app).methods)
        tg.cancel_scope.cancel()
    loaded = [m for m, mod in sys.modules.items() if m.startswith("opentelemetry") and mod]
    print("loaded:", loaded)
    assert not loaded

anyio.run(main)
"""


async def test_tracing_off_imports_nothing_and_serves_the_plain_methods() -> None:
    """Off: no variables; OTEL_SDK_DISABLED=true with an endpoint; an endpoint without
    the extra (one warning says what to install)."""
    with anyio.fail_after(TIMEOUT):
        async with receiver() as collector:
            url = collector.base_url
            wanted = clean_environment(OTEL_EXPORTER_OTLP_ENDPOINT=url)
            for env, extra in (
                (clean_environment(), ""),
                (clean_environment(OTEL_SDK_DISABLED="true", OTEL_EXPORTER_OTLP_ENDPOINT=url), ""),
                (wanted, "no-extra"),
            ):
                done = await anyio.run_process(
                    [sys.executable, "-c", _PROBE, *([extra] if extra else [])],
                    env=env,
                    cwd=ROOT,
                    check=False,
                )
                assert done.returncode == 0, done.stderr.decode()
                warned = "pip install 'a2a-actors[otel]'" in done.stderr.decode()
                assert warned == (extra == "no-extra")  # asked for traces without the extra
            assert collector.requests == []


def test_the_environment_asks_for_traces_the_standard_way() -> None:
    assert not tracing.wanted({})
    assert not tracing.wanted({"OTEL_SERVICE_NAME": "x"})
    assert tracing.wanted({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
    assert tracing.wanted({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"})
    assert tracing.wanted({"OTEL_TRACES_EXPORTER": "console"})
    assert not tracing.wanted({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "x"})
    for disabled in ("true", "TRUE", " true "):
        assert not tracing.wanted({"OTEL_SDK_DISABLED": disabled, "OTEL_TRACES_EXPORTER": "otlp"})
    assert tracing.wanted({"OTEL_SDK_DISABLED": "false", "OTEL_TRACES_EXPORTER": "otlp"})
