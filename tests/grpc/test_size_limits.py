"""A message past a size limit is a ``PayloadTooLargeError`` naming the limit, on every
binding, never a retryable ``ServerBusyError``: the same call fails again."""

from __future__ import annotations

import anyio
import pytest

from a2a_actors.client import A2AClient
from a2a_actors.protocol import PayloadTooLargeError, ServerBusyError
from a2a_actors.server import ServerConfig

from .server_helpers import TIMEOUT, grpc_served

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("binding", ["GRPC", "JSONRPC", "HTTP+JSON"])
async def test_a_message_past_the_server_s_limit_is_not_retryable(binding: str) -> None:
    config = ServerConfig(max_body_bytes=4096)
    with anyio.fail_after(TIMEOUT):
        async with grpc_served(config=config) as served:
            client = await A2AClient.connect(served.url, bindings=(binding,), card_cache=None)
            async with client:
                with pytest.raises(PayloadTooLargeError, match="4096") as info:
                    await client.send_message("x" * 5000)
                assert not isinstance(info.value, ServerBusyError)
                assert info.value.remote
                reply = await client.send_message("small")  # and the server still serves
                assert reply is not None
