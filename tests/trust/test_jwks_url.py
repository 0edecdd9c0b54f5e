"""A JWKS URL served by a real local HTTP server: fetched on first use, refetched on an
unknown ``kid`` (key rotation), at most once per refresh interval, on both backends."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest

from a2a_actors.server import ServerConfig
from a2a_actors.server._auth.jwt_auth import JWKSKeys
from a2a_actors.server._config.trust import JWTOptions

from ..server.helpers import TIMEOUT, served
from .keys import AUDIENCE, ISSUER, SigningKey, json_server, jwks

pytestmark = pytest.mark.anyio

OLD = SigningKey.make("2026-01", "ES256")
NEW = SigningKey.make("2026-02", "RS256")


def _options(url: str, **kw: Any) -> JWTOptions:
    return JWTOptions(jwks=url, issuer=ISSUER, audience=AUDIENCE, **kw)


async def _whoami(http: httpx.AsyncClient, url: str, token: str) -> tuple[int, str]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "whoami"}]}
        },
    }
    response = await http.post(
        f"{url}/",
        json=body,
        headers={"A2A-Version": "1.0", "Authorization": f"Bearer {token}"},
    )
    if response.status_code != 200:
        return response.status_code, response.json()["error"]["message"]
    return 200, response.json()["result"]["message"]["parts"][0]["text"]


async def test_a_rotated_key_is_picked_up_on_its_first_use() -> None:
    with anyio.fail_after(TIMEOUT * 2):
        async with json_server(jwks(OLD)) as idp:
            config = ServerConfig(jwt=_options(idp.url, refresh_interval=0))
            async with served(config=config) as url, httpx.AsyncClient() as http:
                assert idp.fetches == 0  # nothing fetched before a token needs it
                assert await _whoami(http, url, OLD.token("alice")) == (200, "alice|")
                assert await _whoami(http, url, OLD.token("bob")) == (200, "bob|")
                assert idp.fetches == 1  # a known kid: no refetch
                idp.document = jwks(OLD, NEW)  # the provider rotates a new key in
                assert await _whoami(http, url, NEW.token("carol")) == (200, "carol|")
                assert idp.fetches == 2
                idp.document = jwks(NEW)  # and the old one out
                status, said = await _whoami(http, url, OLD.token("alice", kid="gone"))
                assert (status, said) == (401, "The bearer token's signing key is unknown")
                assert idp.fetches == 3


async def test_unknown_kids_refetch_at_most_once_per_interval() -> None:
    with anyio.fail_after(TIMEOUT * 2):
        async with json_server(jwks(OLD)) as idp:
            config = ServerConfig(jwt=_options(idp.url, refresh_interval=3600))
            async with served(config=config) as url, httpx.AsyncClient() as http:
                assert await _whoami(http, url, OLD.token("alice")) == (200, "alice|")
                idp.document = jwks(OLD, NEW)
                # a flood of made-up kids, concurrently and in sequence: no refetch
                results: list[tuple[int, str]] = []

                async def attempt(kid: str) -> None:
                    results.append(await _whoami(http, url, OLD.token("x", kid=kid)))

                async with anyio.create_task_group() as tg:
                    for n in range(10):
                        tg.start_soon(attempt, f"made-up-{n}")
                assert {status for status, _ in results} == {401}
                status, _ = await _whoami(http, url, NEW.token("carol"))
                assert status == 401  # within the interval: the new key waits for it
                assert idp.fetches == 1


async def test_refetch_after_the_interval_and_when_too_old() -> None:
    now = [1000.0]
    with anyio.fail_after(TIMEOUT):
        async with json_server(jwks(OLD)) as idp:
            keys = JWKSKeys(
                _options(idp.url, refresh_interval=30, max_age=300), clock=lambda: now[0]
            )
            assert keys.wants_fetch(OLD.kid)
            await keys.wait_key(OLD.kid)
            assert keys.get(OLD.kid) is not None
            assert idp.fetches == 1
            idp.document = jwks(OLD, NEW)
            now[0] += 10
            assert not keys.wants_fetch(NEW.kid)  # rate-limited
            now[0] += 20
            assert keys.wants_fetch(NEW.kid)
            await keys.wait_key(NEW.kid)
            assert keys.get(NEW.kid) is not None
            assert idp.fetches == 2
            assert not keys.wants_fetch(OLD.kid)
            now[0] += 300  # the set is too old: refetched even for a known kid
            idp.document = jwks(NEW)
            assert keys.wants_fetch(OLD.kid)
            await keys.wait_key(OLD.kid)
            assert keys.get(OLD.kid) is None
            assert idp.fetches == 3


async def test_a_failed_fetch_keeps_the_keys_and_is_rate_limited() -> None:
    now = [0.0]
    with anyio.fail_after(TIMEOUT):
        async with json_server(jwks(OLD)) as idp:
            keys = JWKSKeys(_options(idp.url, refresh_interval=30), clock=lambda: now[0])
            await keys.wait_key(OLD.kid)
            idp.document = {"not": "a jwks"}
            now[0] += 60
            await keys.wait_key("other")
            assert idp.fetches == 2
            assert keys.get(OLD.kid) is not None  # kept
            assert not keys.wants_fetch("other")  # the failure counts against the interval
        # the provider is gone: the fetch fails within its timeout, the keys stay
        now[0] += 60
        await keys.wait_key("other")
        assert keys.fetches == 3
        assert keys.get(OLD.kid) is not None
