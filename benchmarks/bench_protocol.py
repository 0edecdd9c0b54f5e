"""Microbenchmarks of the sans-I/O protocol core (no I/O, no event loop).

What is measured, each as ops/s with per-call p50/p99 in microseconds:

* ``protocol.decode_request.send_message``: a SendMessage JSON-RPC body (two text parts, a
  data part, metadata, configuration) from bytes to a typed Call (both phases);
* ``protocol.encode_request.send_message``: the same request from its Struct to bytes;
* ``protocol.encode_result.task`` / ``protocol.decode_response.task``: a GetTask response
  whose Task has 10 history messages and 3 artifacts, to bytes and back;
* ``protocol.sse.encode`` / ``protocol.sse.parse``: one streamed statusUpdate as a JSON-RPC
  SSE event, encoded; and parsed (per event, fed in 4 KiB chunks);
* ``protocol.state.transition``: TaskMachine changes (user message, WORKING, artifact
  chunk, COMPLETED), per change, including the snapshot a reader takes after each one;
* ``sdk.*``: when a2a-sdk is importable, the same payloads through the SDK's own path
  (``json`` plus ``google.protobuf.json_format.ParseDict``/``MessageToDict``), for
  comparison.

Usage::

    python benchmarks/bench_protocol.py            # full run
    python benchmarks/bench_protocol.py --quick --json

With ``--json`` each result is one JSON object per line: ``name``, ``backend`` (always
``"none"``), ``ops_per_s``, ``p50_us``, ``p99_us``, ``iterations`` and ``versions``.
"""

from __future__ import annotations

import datetime as dt
import gc
import importlib
import json
import time
from collections.abc import Callable
from typing import Any

from _common import emit, make_parser, percentile, versions

from a2a_actors.protocol import (
    Artifact,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskMachine,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    _jsonrpc as jsonrpc,
    codec,
)
from a2a_actors.protocol._sse import SSEParser, encode_event

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def measure(
    name: str, fn: Callable[[], object], iterations: int, ops_per_call: int = 1
) -> dict[str, Any]:
    """Time ``fn`` ``iterations`` times (after a warm-up), one sample per call."""
    for _ in range(max(10, iterations // 20)):
        fn()
    samples: list[float] = []
    clock = time.perf_counter_ns
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        start = clock()
        for _ in range(iterations):
            t = clock()
            fn()
            samples.append((clock() - t) / 1000 / ops_per_call)
        total = (clock() - start) / 1e9
    finally:
        if gc_was_enabled:
            gc.enable()
    return {
        "name": name,
        "backend": "none",
        "ops_per_s": iterations * ops_per_call / total,
        "p50_us": percentile(samples, 0.50),
        "p99_us": percentile(samples, 0.99),
        "iterations": iterations * ops_per_call,
    }


# -- payloads --------------------------------------------------------------------------------


def send_request() -> SendMessageRequest:
    return SendMessageRequest(
        message=Message(
            message_id="9f0c5a53-4f5e-4a6e-9d1e-8e7b6c5d4e3f",
            role=Role.USER,
            parts=(
                Part(text="What is the weather in Paris tomorrow?"),
                Part(text="Answer in Celsius, please.", media_type="text/plain"),
                Part(data={"city": "Paris", "days": [1, 2, 3]}),
            ),
            context_id="ctx-0b1c",
            metadata={"trace": "abc-123", "hop": 1},
        ),
        configuration=SendMessageConfiguration(
            accepted_output_modes=("text/plain", "application/json"), history_length=5
        ),
    )


def big_task() -> Task:
    history = tuple(
        Message(
            message_id=f"m-{i}",
            role=Role.USER if i % 2 == 0 else Role.AGENT,
            parts=(Part(text=f"turn {i}: " + "lorem ipsum dolor sit amet " * 3),),
            context_id="ctx-0b1c",
            task_id="task-7d2e",
        )
        for i in range(10)
    )
    artifacts = tuple(
        Artifact(
            artifact_id=f"art-{i}",
            name=f"result {i}",
            parts=(Part(text="forecast " * 20), Part(data={"t": [12.5, 13.0, 9.5], "i": i})),
        )
        for i in range(3)
    )
    return Task(
        id="task-7d2e",
        context_id="ctx-0b1c",
        status=TaskStatus(state=TaskState.COMPLETED, timestamp=T0),
        history=history,
        artifacts=artifacts,
        metadata={"cost": 0.002},
    )


# -- benchmarks ------------------------------------------------------------------------------


def bench_ours(n: int) -> list[dict[str, Any]]:
    request = send_request()
    request_body = jsonrpc.encode_request("req-1", "SendMessage", request)
    task = big_task()
    task_body = jsonrpc.encode_result("req-2", task)
    assert jsonrpc.decode_response(task_body, Task) == task
    call = jsonrpc.decode_request(request_body)
    assert isinstance(call, jsonrpc.Call)
    assert call.params == request

    update = StreamResponse(
        status_update=TaskStatusUpdateEvent(
            task_id="task-7d2e",
            context_id="ctx-0b1c",
            status=TaskStatus(state=TaskState.WORKING, timestamp=T0),
        )
    )
    events_per_stream = 200
    stream = b"".join(
        encode_event(jsonrpc.encode_result("s-1", update)) for _ in range(events_per_stream)
    )
    chunks = [stream[i : i + 4096] for i in range(0, len(stream), 4096)]

    def parse_stream() -> None:
        parser = SSEParser()
        count = 0
        for chunk in chunks:
            count += len(parser.feed(chunk))
        assert count == events_per_stream

    user = Message(message_id="u", role=Role.USER, parts=(Part(text="go"),))
    chunk = Artifact(artifact_id="a", parts=(Part(text="x" * 64),))

    def lifecycle() -> None:
        m = TaskMachine("t", "c", timestamp=T0)
        m.add_user_message(user)
        m.snapshot()
        m.set_status(TaskState.WORKING, timestamp=T0)
        m.snapshot()
        m.add_artifact(chunk, last_chunk=True)
        m.snapshot()
        m.set_status(TaskState.COMPLETED, timestamp=T0)
        m.snapshot()

    return [
        measure(
            "protocol.decode_request.send_message", lambda: jsonrpc.decode_request(request_body), n
        ),
        measure(
            "protocol.encode_request.send_message",
            lambda: jsonrpc.encode_request("req-1", "SendMessage", request),
            n,
        ),
        measure("protocol.encode_result.task", lambda: jsonrpc.encode_result("req-2", task), n),
        measure(
            "protocol.decode_response.task", lambda: jsonrpc.decode_response(task_body, Task), n
        ),
        measure(
            "protocol.sse.encode", lambda: encode_event(jsonrpc.encode_result("s-1", update)), n
        ),
        measure(
            "protocol.sse.parse", parse_stream, max(1, n // events_per_stream), events_per_stream
        ),
        measure("protocol.state.transition", lifecycle, max(1, n // 4), 4),
    ]


def bench_sdk(n: int) -> list[dict[str, Any]]:
    """The SDK's own path for the same payloads: json + protobuf json_format."""
    try:
        sdk: Any = importlib.import_module("a2a.types")
        json_format: Any = importlib.import_module("google.protobuf.json_format")
    except ImportError:
        return []
    request_body = jsonrpc.encode_request("req-1", "SendMessage", send_request())
    task_body = jsonrpc.encode_result("req-2", big_task())
    sdk_request = json_format.Parse(codec.encode(send_request()), sdk.SendMessageRequest())
    sdk_task = json_format.Parse(codec.encode(big_task()), sdk.Task())

    def decode_request() -> object:
        body = json.loads(request_body)  # as the SDK's JSON-RPC dispatcher does
        return json_format.ParseDict(body["params"], sdk.SendMessageRequest())

    def encode_request() -> bytes:
        params = json_format.MessageToDict(sdk_request)
        return json.dumps(
            {"jsonrpc": "2.0", "id": "req-1", "method": "SendMessage", "params": params}
        ).encode()

    def encode_result() -> bytes:
        result = json_format.MessageToDict(sdk_task)
        return json.dumps({"jsonrpc": "2.0", "id": "req-2", "result": result}).encode()

    def decode_response() -> object:
        return json_format.ParseDict(json.loads(task_body)["result"], sdk.Task())

    return [
        measure("sdk.decode_request.send_message", decode_request, n),
        measure("sdk.encode_request.send_message", encode_request, n),
        measure("sdk.encode_result.task", encode_result, n),
        measure("sdk.decode_response.task", decode_response, n),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = make_parser(__doc__.split("\n\n", 1)[0] if __doc__ else "protocol benchmarks")
    parser.add_argument("--iterations", type=int, default=None, help="calls per benchmark")
    args = parser.parse_args(argv)
    n = args.iterations or (2_000 if args.quick else 50_000)
    env = versions()
    sdk_env = versions("a2a-sdk", "protobuf")
    for result in bench_ours(n):
        emit({**result, "versions": env}, args.json)
    for result in bench_sdk(n):
        emit({**result, "versions": sdk_env}, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
