"""``--oidc-discovery URL`` alone (with an audience): the discovery document, served by a real
local HTTP server, supplies the JWKS URL and the issuer on first use (both backends)."""

from __future__ import annotations

import anyio
import httpx
import pytest

from a2a_actors.server import ServerConfig
from a2a_actors.server._config.trust import JWTOptions

from ..server.helpers import TIMEOUT, served
from .keys import AUDIENCE, SigningKey, json_server, jwks
from .test_jwks_url import _whoami

pytestmark = pytest.mark.anyio

KEY = SigningKey.make("oidc-1", "RS256")
WELL_KNOWN = "/.well-known/openid-configuration"


async def test_the_discovery_document_supplies_keys_and_issuer() -> None:
    with anyio.fail_after(TIMEOUT * 2):
        async with json_server({}) as idp:
            issuer = idp.base_url
            idp.routes[WELL_KNOWN] = {"issuer": issuer, "jwks_uri": f"{issuer}/keys"}
            idp.routes["/keys"] = jwks(KEY)
            options = JWTOptions(audience=AUDIENCE, oidc_discovery=issuer + WELL_KNOWN)
            async with served(config=ServerConfig(jwt=options)) as url, httpx.AsyncClient() as http:
                card = (await http.get(f"{url}/.well-known/agent-card.json")).json()
                scheme = card["securitySchemes"]["oidc"]["openIdConnectSecurityScheme"]
                assert scheme["openIdConnectUrl"] == issuer + WELL_KNOWN
                assert idp.fetches == 0
                assert await _whoami(http, url, KEY.token("alice", iss=issuer)) == (200, "alice|")
                assert idp.fetches == 2  # the document, then the keys
                assert await _whoami(http, url, KEY.token("bob", iss="https://idp.example")) == (
                    401,
                    "The bearer token's issuer is not trusted",
                )
                assert idp.fetches == 2


async def test_a_document_naming_another_issuer_is_not_trusted() -> None:
    with anyio.fail_after(TIMEOUT * 2):
        async with json_server({}) as idp:
            evil = "https://evil.example"
            idp.routes[WELL_KNOWN] = {"issuer": evil, "jwks_uri": f"{idp.base_url}/keys"}
            idp.routes["/keys"] = jwks(KEY)
            options = JWTOptions(audience=AUDIENCE, oidc_discovery=idp.base_url + WELL_KNOWN)
            async with served(config=ServerConfig(jwt=options)) as url, httpx.AsyncClient() as http:
                status, said = await _whoami(http, url, KEY.token("alice", iss=evil))
                assert (status, said) == (401, "The bearer token's signing key is unknown")
                assert idp.fetches == 1  # the document only: its issuer is refused
