"""``request_headers``: per-task extra headers on every request (e.g. W3C trace context)."""

from __future__ import annotations

import anyio
import httpx

from a2a_actors.client import A2AClient, request_headers
from a2a_actors.protocol import codec
from a2a_actors.protocol._models import Task, TaskState, TaskStatus

TASK = Task(id="t1", context_id="c1", status=TaskStatus(state=TaskState.COMPLETED))


async def test_headers_ride_on_requests_of_this_task_only() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        body = b'{"jsonrpc":"2.0","id":"x","result":' + codec.encode(TASK) + b"}"
        return httpx.Response(200, content=body, headers={"Content-Type": "application/json"})

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        client = A2AClient("http://agent.test/", http_client=http)
        with anyio.fail_after(5):
            with request_headers({"traceparent": "00-a-b-01"}):
                with request_headers({"tracestate": "k=v"}):
                    await client.get_task("t1")
                await client.get_task("t1")

            async def elsewhere() -> None:
                await client.get_task("t1")

            with request_headers({"traceparent": "00-c-d-01"}):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(elsewhere)  # inherits the context it was started in
            await client.get_task("t1")
    assert [(r.headers.get("traceparent"), r.headers.get("tracestate")) for r in seen] == [
        ("00-a-b-01", "k=v"),
        ("00-a-b-01", None),
        ("00-c-d-01", None),
        (None, None),
    ]
    assert all(r.headers["A2A-Version"] == "1.0" for r in seen)
