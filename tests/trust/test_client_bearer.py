"""``bearer_token`` as a callable (sync or async): called for every request, so a client
sends a fresh JWT each time (JSON-RPC and REST, both backends)."""

from __future__ import annotations

import itertools

import anyio
import anyio.lowlevel
import pytest

from a2a_actors.client import A2AClient, text_message
from a2a_actors.protocol._errors import UnauthenticatedError
from a2a_actors.protocol._models import Message
from a2a_actors.server import ServerConfig
from a2a_actors.server._config.trust import JWTOptions

from ..server.helpers import TIMEOUT, served
from .keys import AUDIENCE, ISSUER, SigningKey, jwks

pytestmark = pytest.mark.anyio

KEY = SigningKey.make("k1", "ES256")
CONFIG = ServerConfig(jwt=JWTOptions(jwks=jwks(KEY), issuer=ISSUER, audience=AUDIENCE))


async def _whoami(client: A2AClient) -> str:
    reply = await client.send_message(text_message("whoami"))
    assert isinstance(reply, Message)
    return reply.parts[0].text or ""


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_a_token_callable_is_called_for_every_request(binding: str) -> None:
    counter = itertools.count()
    calls: list[str] = []

    def sync_token() -> str:
        sub = f"user-{next(counter)}"
        calls.append(sub)
        return KEY.token(sub)

    async def async_token() -> str:
        await anyio.lowlevel.checkpoint()
        return sync_token()

    with anyio.fail_after(TIMEOUT):
        async with served(config=CONFIG) as url:
            for source in (sync_token, async_token):
                async with await A2AClient.connect(
                    url, bindings=(binding,), bearer_token=source, card_cache=None
                ) as client:
                    first, second = await _whoami(client), await _whoami(client)
                    assert first != second  # a fresh token per request
                    assert f"{calls[-2]}|" == first
                    assert f"{calls[-1]}|" == second


async def test_a_failing_token_callable_fails_the_call() -> None:
    def broken() -> str:
        raise RuntimeError("the identity provider is down")

    def empty() -> str:
        return ""

    with anyio.fail_after(TIMEOUT):
        async with served(config=CONFIG) as url:
            async with await A2AClient.connect(url, bearer_token=broken, card_cache=None) as c:
                with pytest.raises(RuntimeError, match="identity provider is down"):
                    await _whoami(c)
            async with await A2AClient.connect(url, bearer_token=empty, card_cache=None) as c:
                with pytest.raises(TypeError, match="non-empty one-line str"):
                    await _whoami(c)
            async with await A2AClient.connect(url, card_cache=None) as c:
                with pytest.raises(UnauthenticatedError):
                    await _whoami(c)
