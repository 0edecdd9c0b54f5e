"""The generator's parts on their own: the histogram, the response reader, the checks."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, strategies as st

from a2a_actors.loadtest._histogram import Histogram
from a2a_actors.loadtest._http1 import ProtocolError, ResponseReader
from a2a_actors.loadtest._replies import Failure, Reply, check_send, check_stream, check_task


@given(st.lists(st.integers(min_value=0, max_value=10**9), min_size=1, max_size=300))
def test_histogram_percentiles_are_within_a_thousandth(values: list[int]) -> None:
    histogram = Histogram()
    for value in values:
        histogram.record(value)
    ordered = sorted(values)
    for percent in (0.0, 50.0, 90.0, 99.0, 99.9, 100.0):
        exact = ordered[max(0, math.ceil(percent * len(values) / 100) - 1)]
        got = histogram.percentile(percent)
        assert exact <= got <= exact + exact / 1024 + 1, (percent, exact, got)
    assert (histogram.min_us, histogram.max_us, histogram.count) == (
        ordered[0],
        ordered[-1],
        len(values),
    )


@given(
    st.lists(st.integers(min_value=0, max_value=10**7), max_size=100),
    st.lists(st.integers(min_value=0, max_value=10**7), max_size=100),
)
def test_histograms_merge_and_survive_json(a: list[int], b: list[int]) -> None:
    left, right, both = Histogram(), Histogram(), Histogram()
    for value in a:
        left.record(value)
        both.record(value)
    for value in b:
        right.record(value)
        both.record(value)
    left.merge(Histogram.from_json(json.loads(json.dumps(right.to_json()))))
    assert left.to_json() == both.to_json()
    assert sum(n for _, _, n in both.to_json()["buckets"]) == len(a) + len(b)


def _feed_bytewise(data: bytes) -> list[tuple[int, bytes, bool, bool]]:
    reader = ResponseReader()
    out = []
    for i in range(len(data)):
        response = reader.feed(data[i : i + 1], float(i))
        if response is not None:
            out.append(
                (
                    response.status,
                    response.body,
                    response.event_stream,
                    bool(response.first_event_at),
                )
            )
    return out


def test_reader_handles_lengths_chunks_and_split_reads() -> None:
    plain = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: application/json\r\n\r\nhello"
    chunked = (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
        b"9\r\ndata: a\n\n\r\n9\r\ndata: b\n\n\r\n0\r\n\r\n"
    )
    assert _feed_bytewise(plain + chunked) == [
        (200, b"hello", False, False),
        (200, b"data: a\n\ndata: b\n\n", True, True),
    ]


def test_reader_notes_the_first_event_when_it_arrives() -> None:
    reader = ResponseReader()
    head = (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    )
    assert reader.feed(head + b"9\r\ndata: a\n\n\r\n", 1.0) is None
    done = reader.feed(b"9\r\ndata: b\n\n\r\n0\r\n\r\n", 2.0)
    assert done is not None
    assert done.first_event_at == 1.0


def test_reader_reads_a_body_delimited_by_the_close() -> None:
    reader = ResponseReader()
    assert (
        reader.feed(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: x\n\n", 1.0)
        is None
    )
    response = reader.eof(2.0)
    assert response is not None
    assert (response.body, response.close, response.first_event_at) == (b"data: x\n\n", True, 1.0)


def test_reader_says_when_a_response_was_cut() -> None:
    reader = ResponseReader()
    assert reader.feed(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc", 1.0) is None
    assert reader.eof(2.0) is None


@pytest.mark.parametrize(
    "data",
    [
        b"SSH-2.0-OpenSSH\r\n\r\n",
        b"HTTP/1.1 abc\r\n\r\n",
        b"HTTP/1.1 200 OK\r\ncontent-length: x\r\n\r\n",
    ],
)
def test_reader_refuses_what_is_not_http(data: bytes) -> None:
    with pytest.raises(ProtocolError):
        ResponseReader().feed(data, 0.0)


def kind(result: Reply | Failure) -> str:
    assert isinstance(result, Failure), result
    return result.kind


def _rpc(obj: object) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, **obj}).encode()  # type: ignore[dict-item]


TASK = {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}


def test_checks_of_unary_answers() -> None:
    assert check_send("jsonrpc", 200, _rpc({"result": {"task": TASK}})) == Reply(
        "t", "TASK_STATE_COMPLETED"
    )
    assert check_send("rest", 200, json.dumps({"message": {"messageId": "m"}}).encode()) == Reply(
        "", "message"
    )
    assert check_send(
        "jsonrpc", 200, _rpc({"error": {"code": -32001, "message": "nope"}})
    ) == Failure("jsonrpc-error", "-32001: nope")
    assert kind(check_send("rest", 404, b'{"error":{}}')) == "http-404"
    assert kind(check_send("jsonrpc", 200, b"not json")) == "malformed"
    assert kind(check_send("jsonrpc", 200, _rpc({"result": {}}))) == "malformed"
    assert (
        kind(check_send("jsonrpc", 200, json.dumps({"result": {"task": TASK}}).encode()))
        == "malformed"
    )
    assert check_task("rest", 200, json.dumps(TASK).encode()) == Reply("t", "TASK_STATE_COMPLETED")
    assert kind(check_task("jsonrpc", 200, _rpc({"result": {"id": "t"}}))) == "malformed"


def _sse(*events: object, name: str = "") -> bytes:
    prefix = f"event: {name}\r\n" if name else ""
    return b"".join(f"{prefix}data: {json.dumps(e)}\r\n\r\n".encode() for e in events)


def test_checks_of_streams() -> None:
    working = {"statusUpdate": {"taskId": "t", "status": {"state": "TASK_STATE_WORKING"}}}
    done = {"statusUpdate": {"taskId": "t", "status": {"state": "TASK_STATE_COMPLETED"}}}
    assert check_stream(
        "rest",
        200,
        True,
        _sse({"task": TASK | {"status": {"state": "TASK_STATE_SUBMITTED"}}}, working, done),
    ) == Reply("t", "TASK_STATE_COMPLETED")
    assert kind(check_stream("rest", 200, True, _sse(working))) == "early-end"
    assert kind(check_stream("rest", 200, True, b"")) == "early-end"
    assert (
        kind(
            check_stream(
                "jsonrpc",
                200,
                True,
                _sse(
                    {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "x"}},
                    name="error",
                ),
            )
        )
        == "stream-error"
    )
    assert kind(check_stream("rest", 200, True, _sse({"error": {"code": 500}}))) == "stream-error"
    assert (
        kind(
            check_stream("jsonrpc", 200, False, _rpc({"error": {"code": -32004, "message": "no"}}))
        )
        == "jsonrpc-error"
    )
    assert (
        kind(check_stream("jsonrpc", 200, False, _rpc({"result": {"task": TASK}}))) == "malformed"
    )
