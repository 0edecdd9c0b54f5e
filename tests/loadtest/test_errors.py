"""Every answer is checked: misbehaving servers get their errors counted, by kind, with samples.

Each server here is a few lines of raw HTTP that answers fast but wrong, so that a fast
wrong server never wins: its operations count as errors, not as throughput.
"""

from __future__ import annotations

import json

import pytest
import trio

from .helpers import QUICK, TIMEOUT, Request, bench, http, raw_server, rpc_result, task

SSE = "text/event-stream"


def _stream(*events: object) -> bytes:
    body = "".join(
        f"data: {json.dumps({'jsonrpc': '2.0', 'id': 1, 'result': e})}\n\n" for e in events
    )
    return http(body, content_type=SSE)


async def _rpc_error(request: Request) -> bytes:
    error = {"code": -32001, "message": "Task not found"}
    return http(json.dumps({"jsonrpc": "2.0", "id": 1, "error": error}))


async def _failed_task(request: Request) -> bytes:
    return rpc_result({"task": task("FAILED")})


async def _server_error(request: Request) -> bytes:
    return http("oops", status="500 Internal Server Error", content_type="text/plain")


async def _not_json(request: Request) -> bytes:
    return http("<html>hello</html>", content_type="text/html")


async def _early_end(request: Request) -> bytes:
    working = {"statusUpdate": {"taskId": "t-1", "status": {"state": "TASK_STATE_WORKING"}}}
    return _stream({"task": task("SUBMITTED")}, working)


async def _stream_error(request: Request) -> bytes:
    body = (
        'data: {"jsonrpc":"2.0","id":1,"result":{"task":' + json.dumps(task("WORKING")) + "}}\n\n"
    )
    body += (
        'event: error\ndata: {"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}\n\n'
    )
    return http(body, content_type=SSE)


async def _cut(request: Request) -> bytes | None:
    return None  # close the connection without answering


async def _half(request: Request) -> bytes:
    return (
        http(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"task": task("COMPLETED")}}))[:-5]
        + b"\r\n"
    )


CASES = [
    pytest.param(_rpc_error, "send", "jsonrpc-error", "-32001: Task not found", id="jsonrpc-error"),
    pytest.param(_failed_task, "send", "wrong-state", "got TASK_STATE_FAILED", id="wrong-state"),
    pytest.param(_server_error, "send", "http-500", "oops", id="http-500"),
    pytest.param(_not_json, "send", "malformed", "<html>", id="malformed"),
    pytest.param(_early_end, "stream", "early-end", "TASK_STATE_WORKING", id="early-end"),
    pytest.param(_stream_error, "stream", "stream-error", "boom", id="stream-error"),
    pytest.param(_cut, "send", "closed", "closed", id="closed"),
    pytest.param(
        _failed_task,
        "multi-turn",
        "wrong-state",
        "expected TASK_STATE_INPUT_REQUIRED",
        id="multi-turn",
    ),
    pytest.param(_failed_task, "cancel", "wrong-state", "before the cancel", id="cancel"),
]


@pytest.mark.parametrize(("handler", "workload", "kind", "sample"), CASES)
async def test_wrong_answers_are_errors_with_samples(
    handler: object, workload: str, kind: str, sample: str
) -> None:
    with trio.fail_after(TIMEOUT):
        async with raw_server(handler) as url:  # type: ignore[arg-type]
            run = await bench(url, "--binding", "jsonrpc", "--workload", workload, "--json", *QUICK)
    assert run.status == 1, run  # some operations failed
    result = run.only()
    assert result["ops"] == 0
    assert result["errors"] > 0
    assert set(result["errors_by_kind"]) == {kind}, result["errors_by_kind"]
    samples = result["error_samples"][kind]
    assert 1 <= len(samples) <= 3
    assert sample in samples[0]
    assert result["histogram"]["count"] == 0  # failures never count as latency


async def test_a_response_cut_short_by_a_timeout_is_an_error() -> None:
    async def hang(request: Request) -> bytes:
        await trio.sleep_forever()
        raise AssertionError  # pragma: no cover

    with trio.fail_after(TIMEOUT):
        async with raw_server(hang) as url:
            run = await bench(
                url,
                "--binding",
                "jsonrpc",
                "--json",
                "--timeout",
                "0.2",
                "--duration",
                "1",
                "--warmup",
                "0",
                "--concurrency",
                "2",
            )
    result = run.only()
    assert result["errors_by_kind"].keys() == {"timeout"}
    assert result["error_samples"]["timeout"][0] == "no answer in 0.2 s"


async def test_the_table_lists_errors_by_kind_and_samples() -> None:
    answers = iter(range(10**6))

    async def mixed(request: Request) -> bytes:
        if next(answers) % 2:
            return await _rpc_error(request)
        return rpc_result({"task": task("COMPLETED")})

    with trio.fail_after(TIMEOUT):
        async with raw_server(mixed) as url:
            run = await bench(f"flaky={url}", "--binding", "jsonrpc", *QUICK)
    assert run.status == 1
    row = next(line for line in run.stdout.splitlines() if line.startswith("flaky "))
    assert "(jsonrpc-error " in row
    assert "flaky jsonrpc-error: -32001: Task not found" in run.stdout
