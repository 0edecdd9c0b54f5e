"""The SSE framing with ``id:``: golden bytes, every event of both bindings' streams, and the
official SDK's client reading such streams."""

from __future__ import annotations

import json
import re

import anyio
import httpx
import pytest

from a2a_actors.protocol._sse import SSEParser, encode_event, encode_json_event
from a2a_actors.server import ServerConfig
from a2a_actors.server._config.metrics import MetricsOptions
from a2a_actors.server._http.sse import resume_point
from tests.interop.sdk_server import sdk_client
from tests.interop.test_sdk_client_vs_our_server import collect, kinds, request, text_of
from tests.server.agents import CHUNKS, scenario_agent

from ..server.helpers import JSON_HEADERS, envelope, running_app, send_params, served, stream

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings(  # the SDK client's, as in tests/interop
        r"ignore:Async generator '(a2a\.client|httpx|httpcore)\..*' was garbage collected"
        r":ResourceWarning"
    ),
]

TIMEOUT = 15.0
#: A whole stream body: only blocks of one ``id:`` line and one ``data:`` line.
EVENT_BLOCKS = re.compile(rb"(?:id: (\d+)\ndata: [^\n]+\n\n)+")


def test_golden_event_with_id() -> None:
    data = b'{"jsonrpc":"2.0","id":1,"result":{"statusUpdate":{}}}'
    framed = encode_json_event(data, 7)
    assert framed == b'id: 7\ndata: {"jsonrpc":"2.0","id":1,"result":{"statusUpdate":{}}}\n\n'
    assert framed == encode_event(data, id="7")
    (event,) = SSEParser().feed(framed)
    assert (event.id, event.data, event.event) == ("7", data.decode(), "message")


def test_resume_point_reads_only_versions() -> None:
    assert resume_point(None) is None
    assert resume_point("") is None
    assert resume_point("  ") is None
    assert resume_point(" 12 ") == 12
    assert resume_point("0") == 0
    for bad in ("x", "-1", "+1", "1.0", "1e3", "0x1", "²", "1" * 19):
        with pytest.raises(Exception, match="Last-Event-ID must be the id of an event"):
            resume_point(bad)


def ids_of(body: bytes) -> list[int]:
    assert EVENT_BLOCKS.fullmatch(body), body
    return [int(event.id or "") for event in SSEParser().feed(body)]


async def test_every_event_of_both_bindings_carries_the_task_version() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            body = envelope("SendStreamingMessage", send_params("stream please"))
            _, headers, raw = await stream(client, "/", body)
            assert headers["content-type"] == "text/event-stream"
            jsonrpc_ids = ids_of(raw)
            rest_body = json.dumps(send_params("stream please")).encode()
            _, _, rest_raw = await stream(client, "/rest/message:stream", rest_body)
            rest_ids = ids_of(rest_raw)
            task = json.loads(SSEParser().feed(rest_raw)[0].data)["task"]
            # a subscription's snapshot carries the version it was taken at
            parked = await stream(client, "/", envelope("SendMessage", send_params("input")))
            parked_task = json.loads(parked[2])["result"]["task"]
            follow_up = envelope(
                "SendStreamingMessage", send_params("Ada", task_id=parked_task["id"])
            )
            _, _, resumed = await stream(client, "/", follow_up)
    # Task, WORKING, three chunks, COMPLETED: six versions in a row
    assert jsonrpc_ids == list(range(jsonrpc_ids[0], jsonrpc_ids[0] + 6))
    assert rest_ids == list(range(rest_ids[0], rest_ids[0] + 6))
    assert task["status"]["state"] == "TASK_STATE_SUBMITTED"
    resumed_ids = ids_of(resumed)
    assert resumed_ids == sorted(set(resumed_ids))


async def test_observed_streams_carry_ids_too() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=ServerConfig(metrics=MetricsOptions())) as client:
            body = envelope("SendStreamingMessage", send_params("stream please"))
            _, _, raw = await stream(client, "/", body)
    ids = ids_of(raw)
    assert ids == list(range(ids[0], ids[0] + 6))


async def test_a_rest_get_subscribe_resumes_after_last_event_id() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            body = json.dumps(send_params("stream please")).encode()
            _, _, raw = await stream(client, "/rest/message:stream", body)
            events = SSEParser().feed(raw)
            task_id = json.loads(events[0].data)["task"]["id"]
            resumed = await stream(
                client,
                f"/rest/tasks/{task_id}:subscribe",
                b"",
                {"Last-Event-ID": events[2].id or ""},
                method="GET",
            )
    status, headers, rest = resumed
    assert (status, headers["content-type"]) == (200, "text/event-stream")
    assert rest == b"".join(encode_event(e.data, id=e.id) for e in events[3:])


async def test_an_a2a_0_3_resubscribe_resumes_too() -> None:
    v03 = {"A2A-Version": "0.3"}
    message = {"kind": "message", "messageId": "m1", "role": "user"}
    params = {"message": {**message, "parts": [{"kind": "text", "text": "stream please"}]}}
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            call = {"jsonrpc": "2.0", "id": 1, "method": "message/stream", "params": params}
            _, _, raw = await stream(client, "/", json.dumps(call).encode(), v03)
            events = SSEParser().feed(raw)
            task_id = json.loads(events[0].data)["result"]["id"]
            again = {**call, "method": "tasks/resubscribe", "params": {"id": task_id}}
            headers = {**v03, "Last-Event-ID": events[2].id or ""}
            _, _, rest = await stream(client, "/", json.dumps(again).encode(), headers)
    assert rest == b"".join(encode_event(e.data, id=e.id) for e in events[3:])


async def test_the_sdk_client_reads_streams_with_ids(anyio_backend: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with served(scenario_agent) as url, httpx.AsyncClient(timeout=TIMEOUT) as http:
            raw = await http.post(
                "/".join((url, "")),
                content=envelope("SendStreamingMessage", send_params("stream please")),
                headers=JSON_HEADERS,
            )
            assert ids_of(raw.content)  # what the SDK client reads below carries ids
            for binding in ("JSONRPC", "HTTP+JSON"):
                client = await sdk_client(url, binding=binding, httpx_client=http)
                try:
                    events = await collect(client.send_message(request("stream please")))
                finally:
                    await client.close()
                assert kinds(events) == [
                    "task",
                    "status_update",
                    *["artifact_update"] * len(CHUNKS),
                    "status_update",
                ]
                chunks = "".join(text_of(e.artifact_update.artifact.parts) for e in events[2:-1])
                assert chunks == "".join(CHUNKS)
