"""Accepted tokens are remembered: reused at the cost of a lookup, never past their expiry,
and checked again once the keys are reloaded; any other token string is checked in full."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from a2a_actors.server._auth.errors import InvalidTokenError
from a2a_actors.server._auth.jwt_auth import JWKSKeys, JWTValidator
from a2a_actors.server._config.trust import JWTOptions

from ..server.helpers import TIMEOUT
from .keys import AUDIENCE, ISSUER, SigningKey, json_server, jwks, tampered

KEY = SigningKey.make("k1", "ES256")
OTHER = SigningKey.make("k2", "ES256")


def _validator(jwks_source: Any, wall: list[float], mono: list[float]) -> JWTValidator:
    options = JWTOptions(
        jwks=jwks_source, issuer=ISSUER, audience=AUDIENCE, leeway=30, refresh_interval=0
    )
    return JWTValidator(options, JWKSKeys(options, clock=lambda: mono[0]), clock=lambda: wall[0])


def test_a_remembered_token_still_expires() -> None:
    now = time.time()
    wall, mono = [now], [0.0]
    validator = _validator(jwks(KEY), wall, mono)
    token = KEY.token("alice", exp=int(now) + 60)
    assert validator.principal(token) == "alice"
    assert validator.principal(token) == "alice"  # remembered
    with pytest.raises(InvalidTokenError, match="signature is invalid"):
        validator.principal(tampered(token, sub="mallory"))  # another string: full check
    wall[0] = int(now) + 60 + 29.9  # within the leeway
    assert validator.principal(token) == "alice"
    wall[0] = int(now) + 60 + 30  # expired, by the remembered expiry itself
    with pytest.raises(InvalidTokenError, match="has expired"):
        validator.principal(token)


@pytest.mark.anyio
async def test_a_remembered_token_is_checked_again_when_the_keys_change() -> None:
    wall, mono = [time.time()], [0.0]
    with anyio.fail_after(TIMEOUT):
        async with json_server(jwks(KEY)) as idp:
            validator = _validator(idp.url, wall, mono)
            token = KEY.token("alice")
            await validator.keys.wait_key(validator.kid_of(token))
            assert validator.principal(token) == "alice"
            idp.document = jwks(OTHER)  # the provider withdraws the key
            mono[0] += 300  # the set is too old: the next request refetches it
            assert validator.keys.wants_fetch(validator.kid_of(token))
            await validator.keys.wait_key(validator.kid_of(token))
            with pytest.raises(InvalidTokenError, match="signing key is unknown"):
                validator.principal(token)
