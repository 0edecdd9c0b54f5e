"""How streams are framed on a real Hypercorn (server/_http/sse.py), and how bodies are read
(server/_http/asgi.py).

A stream that is over before its answer starts (a short task) goes out as one body with a
``Content-Length``, on either binding; a stream that still waits for events is chunked and
sent as it goes.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from a2a_actors.protocol._sse import SSEParser
from a2a_actors.server._http.asgi import BodyReader

from .helpers import (
    HTTPX_EARLY_EXIT,
    JSON_HEADERS,
    TIMEOUT,
    envelope,
    message,
    send_params,
    served,
    sse_lines,
)

pytestmark = pytest.mark.anyio


def _request(body: bytes, path: str = "/") -> bytes:
    head = (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Accept: text/event-stream\r\nA2A-Version: 1.0\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def _answer(sock: Any, buffered: bytes) -> tuple[dict[bytes, bytes], bytes, bytes]:
    """One answer with a Content-Length read from ``sock``: headers, body, bytes after it."""
    while b"\r\n\r\n" not in buffered:
        buffered += await sock.receive()
    head, _, rest = buffered.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0].startswith(b"HTTP/1.1 200"), lines[0]
    headers = dict(line.lower().split(b": ", 1) for line in lines[1:])
    assert b"content-length" in headers, headers
    length = int(headers[b"content-length"])
    while len(rest) < length:
        rest += await sock.receive()
    return headers, rest[:length], rest[length:]


async def test_a_stream_over_before_its_answer_starts_is_sent_whole() -> None:
    requests = [
        *(_request(envelope("SendStreamingMessage", send_params(text))) for text in ("a", "b")),
        _request(json.dumps({"message": message("c")}).encode(), "/rest/message:stream"),
    ]
    with anyio.fail_after(TIMEOUT):
        async with served() as url:
            port = int(url.rsplit(":", 1)[1])
            async with await anyio.connect_tcp("127.0.0.1", port) as sock:
                rest = b""
                for request in requests:  # on the same connection: framed right
                    await sock.send(request)
                    headers, payload, rest = await _answer(sock, rest)
                    assert headers[b"content-type"] == b"text/event-stream"
                    assert b"transfer-encoding" not in headers
                    assert b"server" not in headers  # serve() does not advertise Hypercorn
                    events = SSEParser().feed(payload)
                    results = [json.loads(event.data) for event in events]
                    results = [result.get("result", result) for result in results]
                    assert "task" in results[0]
                    assert results[-1]["statusUpdate"]["status"]["state"] == (
                        "TASK_STATE_COMPLETED"
                    )
                assert rest == b""


@HTTPX_EARLY_EXIT
async def test_a_stream_still_waiting_is_chunked_and_sent_as_it_goes() -> None:
    with anyio.fail_after(TIMEOUT):
        async with served() as url, httpx.AsyncClient(base_url=url, timeout=TIMEOUT) as http:
            body = envelope("SendStreamingMessage", send_params("sleep"))
            async with (
                http.stream("POST", "/", content=body, headers=JSON_HEADERS) as response,
                sse_lines(response) as lines,
            ):
                assert response.headers["transfer-encoding"] == "chunked"
                assert "content-length" not in response.headers
                task_id = None
                async for line in lines:  # these events come before the task ends
                    if line.startswith("data: "):
                        result = json.loads(line.removeprefix("data: "))["result"]
                        task_id = task_id or result["task"]["id"]
                        if "TASK_STATE_WORKING" in line:
                            break
                cancel = envelope("CancelTask", {"id": task_id})
                answer = await http.post("/", content=cancel, headers=JSON_HEADERS)
                assert answer.json()["result"]["status"]["state"] == "TASK_STATE_CANCELED"
                rest = [line async for line in lines]
            assert any("TASK_STATE_CANCELED" in line for line in rest)


async def test_the_body_reader_stops_at_the_content_length() -> None:
    messages = [
        {"type": "http.request", "body": b"abc", "more_body": True},
        {"type": "http.request", "body": b"de", "more_body": True},
        {"type": "http.request", "body": b"", "more_body": False},
    ]
    queue = list(messages)

    async def receive() -> dict[str, Any]:
        return queue.pop(0)

    reader = BodyReader(receive, expected=5)
    assert [chunk async for chunk in reader] == [b"abc", b"de"]
    assert queue == messages[2:]  # the closing message is left where it was
    assert not reader.disconnected

    queue[:] = messages  # without a length: up to the closing message
    reader = BodyReader(receive)
    assert [chunk async for chunk in reader] == [b"abc", b"de", b""]
    assert queue == []

    queue[:] = [messages[0], {"type": "http.disconnect"}]  # the client left half-way
    reader = BodyReader(receive, expected=5)
    assert [chunk async for chunk in reader] == [b"abc"]
    assert reader.disconnected
