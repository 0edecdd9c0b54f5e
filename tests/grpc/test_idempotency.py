"""``idempotency-key`` gRPC metadata: a retried SendMessage returns the first task."""

from __future__ import annotations

import anyio
import grpc
import pytest
from a2a.types import a2a_pb2

from .server_helpers import TIMEOUT, V1, channel, grpc_served, raw_stream, raw_unary, send_request

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_the_metadata_key_replays_the_first_task() -> None:
    body = send_request("hello").SerializeToString()
    keyed = (*V1, ("idempotency-key", "g-1"))
    with anyio.fail_after(TIMEOUT):
        async with grpc_served() as served, channel(served.address) as opened:
            first = await raw_unary(opened, "SendMessage", body, keyed)
            again = await raw_unary(opened, "SendMessage", body, keyed)
            assert first.code == again.code == grpc.StatusCode.OK
            task = a2a_pb2.SendMessageResponse.FromString(first.messages[0]).task
            assert a2a_pb2.SendMessageResponse.FromString(again.messages[0]).task.id == task.id
            streamed = await raw_stream(opened, "SendStreamingMessage", body, keyed)
            (only,) = [a2a_pb2.StreamResponse.FromString(m) for m in streamed.messages]
            assert only.task.id == task.id  # the settled task, as one event
            other = await raw_unary(opened, "SendMessage", body, V1)  # no key: a new task
            assert a2a_pb2.SendMessageResponse.FromString(other.messages[0]).task.id != task.id
            changed = send_request("goodbye").SerializeToString()
            refused = await raw_unary(opened, "SendMessage", changed, keyed)
            assert (refused.code, refused.reason) == (
                grpc.StatusCode.INVALID_ARGUMENT,
                "INVALID_PARAMS",
            )
