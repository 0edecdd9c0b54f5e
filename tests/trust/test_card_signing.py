"""Signed agent cards: ours verified by the official SDK's verifier and by our client, the
SDK's signed card verified by our client, and every card that is not signed by a trusted
key refused (both backends)."""

from __future__ import annotations

import copy
import json
from typing import Any

import anyio
import httpx
import pytest
from a2a.client.card_resolver import parse_agent_card
from a2a.server.routes import create_agent_card_routes
from a2a.types.a2a_pb2 import AgentCard as SdkAgentCard
from a2a.utils.signing import (
    InvalidSignaturesError,
    create_agent_card_signer,
    create_signature_verifier,
)
from jwt.api_jwk import PyJWK
from starlette.applications import Starlette

from a2a_actors.client import A2AClient, CardKeys, CardSignatureError
from a2a_actors.client._discovery import parse_card
from a2a_actors.protocol._jose import decode_protected
from a2a_actors.server import CardSigningOptions, ExtendedCard, JWTOptions, ServerConfig, create_app

from ..interop.sdk_server import build_agent_card
from ..server.agents import scenario_agent
from ..server.helpers import TIMEOUT, served
from .keys import SigningKey, json_server, jwks

pytestmark = pytest.mark.anyio

KEYS = {alg: SigningKey.make(f"card-{alg}", alg) for alg in ("ES256", "RS256", "EdDSA")}
OTHER = SigningKey.make("other", "ES256")
V1 = {"A2A-Version": "1.0"}


def _config(key: SigningKey, **kw: Any) -> ServerConfig:
    return ServerConfig(
        card_signing=CardSigningOptions(key=key.private_pem(), kid=key.kid, **kw),
        extended_card=ExtendedCard(name="extended"),
        extended_card_requires_auth=False,
    )


def _sdk_verifier(*keys: SigningKey) -> Any:
    by_kid = {key.kid: key.jwk() for key in keys}

    def key_provider(kid: str | None, jku: str | None) -> PyJWK:
        return PyJWK(by_kid[kid or ""])

    return create_signature_verifier(key_provider, ["ES256", "RS256", "EdDSA"])


@pytest.mark.parametrize("alg", sorted(KEYS))
async def test_our_signed_cards_verify_with_the_sdk_and_with_our_client(alg: str) -> None:
    key = KEYS[alg]
    jku = "https://keys.example/jwks.json"
    with anyio.fail_after(TIMEOUT):
        async with served(config=_config(key, jku=jku)) as url, httpx.AsyncClient() as http:
            public = (await http.get(f"{url}/.well-known/agent-card.json")).json()
            extended = (await http.get(f"{url}/rest/extendedAgentCard", headers=V1)).json()
            assert extended["name"] == "extended"
            for document in (public, extended):
                (signature,) = document["signatures"]
                assert decode_protected(signature["protected"]) == {
                    "alg": alg,
                    "kid": key.kid,
                    "typ": "JOSE",
                    "jku": jku,
                }
                _sdk_verifier(key)(parse_agent_card(copy.deepcopy(document)))
                ours = parse_card(json.dumps(document).encode())
                assert CardKeys(jwks(key)).verify(ours) == key.kid
            async with await A2AClient.connect(url, verify_card=jwks(key), card_cache=None) as c:
                assert c.card is not None
                assert c.card.name == public["name"]


async def test_the_signed_card_is_signed_once_and_stays_cacheable() -> None:
    with anyio.fail_after(TIMEOUT):
        async with served(config=_config(KEYS["ES256"])) as url, httpx.AsyncClient() as http:
            first = await http.get(f"{url}/.well-known/agent-card.json")
            second = await http.get(f"{url}/.well-known/agent-card.json")
            assert first.content == second.content  # ECDSA differs per signing: signed once
            assert first.headers["etag"] == second.headers["etag"]
            again = await http.get(
                f"{url}/.well-known/agent-card.json",
                headers={"If-None-Match": first.headers["etag"]},
            )
            assert again.status_code == 304
            cards = [
                (await http.get(f"{url}/rest/extendedAgentCard", headers=V1)).content for _ in "ab"
            ]
            assert cards[0] == cards[1]


def _sdk_app(card: SdkAgentCard, key: SigningKey) -> Starlette:
    signer = create_agent_card_signer(
        key.private_pem(), {"alg": key.alg, "kid": key.kid, "typ": "JOSE", "jku": None}
    )

    async def signed(served: SdkAgentCard) -> SdkAgentCard:
        fresh = SdkAgentCard()
        fresh.CopyFrom(served)
        return signer(fresh)

    return Starlette(routes=create_agent_card_routes(card, card_modifier=signed))


def _rich_sdk_card(base: str) -> SdkAgentCard:
    card = build_agent_card(base)
    card.provider.organization = "Example Org"
    card.provider.url = "https://example.org"
    card.documentation_url = "https://example.org/docs"
    card.security_schemes["bearer"].http_auth_security_scheme.scheme = "Bearer"
    card.security_schemes["bearer"].http_auth_security_scheme.bearer_format = "JWT"
    card.security_requirements.add().schemes["bearer"].SetInParent()
    extension = card.capabilities.extensions.add()
    extension.uri = "https://example.org/ext/v1"
    extension.description = "Ünïcode and numbers"
    extension.params.update({"depth": 2, "ratio": 0.5, "name": "é", "nested": {"list": [1, "x"]}})
    return card


@pytest.mark.parametrize("alg", sorted(KEYS))
async def test_the_sdk_signed_card_verifies_with_our_client(alg: str) -> None:
    key = KEYS[alg]
    base = "http://sdk.test"
    app = _sdk_app(_rich_sdk_card(base), key)
    transport = httpx.ASGITransport(app=app)
    with anyio.fail_after(TIMEOUT):
        async with httpx.AsyncClient(transport=transport) as http:
            async with await A2AClient.connect(
                base, http_client=http, verify_card=jwks(key), card_cache=None
            ) as client:
                assert client.card is not None
                assert client.card.name == "sdk-interop-agent"
            with pytest.raises(CardSignatureError, match=f"kid '{key.kid}' is not a trusted key"):
                await A2AClient.connect(
                    base, http_client=http, verify_card=jwks(OTHER), card_cache=None
                )


async def test_cards_not_signed_by_a_trusted_key_are_refused() -> None:
    key = KEYS["ES256"]
    impostor = SigningKey.make(key.kid, "ES256")  # the trusted kid, another key
    with anyio.fail_after(TIMEOUT * 2):
        async with served(config=_config(key)) as url, httpx.AsyncClient() as http:
            signed = (await http.get(f"{url}/.well-known/agent-card.json")).json()
        altered = {**signed, "description": "altered after signing"}
        moved = copy.deepcopy(signed)
        moved["supportedInterfaces"][0]["url"] = "https://evil.example/"
        unsigned = {k: v for k, v in signed.items() if k != "signatures"}
        cases: list[tuple[dict[str, Any], dict[str, Any], str]] = [
            (altered, jwks(key), "does not match the card"),
            (moved, jwks(key), "does not match the card"),
            (signed, jwks(OTHER), "is not a trusted key"),
            (signed, jwks(impostor), "does not match the card"),
            (unsigned, jwks(key), "is not signed"),
        ]
        for document, trusted, said in cases:
            async with json_server(document) as fake:
                with pytest.raises(CardSignatureError, match=said):
                    await A2AClient.connect(fake.base_url, verify_card=trusted, card_cache=None)
                # without verification the same card is accepted as before
                async with await A2AClient.connect(fake.base_url, card_cache=None):
                    pass
        with pytest.raises(InvalidSignaturesError):  # the SDK agrees on the altered card
            _sdk_verifier(key)(parse_agent_card(copy.deepcopy(altered)))


async def test_keys_from_a_jwks_url_and_a_pem(tmp_path: Any) -> None:
    key = KEYS["EdDSA"]
    with anyio.fail_after(TIMEOUT):
        async with json_server(jwks(key)) as keys, served(config=_config(key)) as url:
            async with await A2AClient.connect(url, verify_card=keys.url, card_cache=None):
                pass
            path = tmp_path / "jwks.json"
            path.write_text(json.dumps(jwks(key)))
            async with await A2AClient.connect(url, verify_card=path, card_cache=None):
                pass
            pem = CardKeys.from_pem(key.public_pem(), key.kid)
            async with await A2AClient.connect(url, verify_card=pem, card_cache=None):
                pass
            with pytest.raises(ValueError, match="no usable public key"):
                await A2AClient.connect(url, verify_card={"keys": []}, card_cache=None)


def test_unusable_signing_keys_are_refused_when_the_app_is_created() -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa

    short = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    curve = ec.generate_private_key(ec.SECP256K1())
    encrypted = KEYS["ES256"].private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"pw"),
    )

    def pem(private: Any) -> bytes:
        return private.private_bytes(  # type: ignore[no-any-return]
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )

    for key, said in (
        (pem(short), "too short"),
        (pem(curve), "not supported"),
        (encrypted, "unencrypted PEM"),
        (b"not a key", "unencrypted PEM"),
        (KEYS["ES256"].public_pem(), "unencrypted PEM"),
    ):
        config = ServerConfig(card_signing=CardSigningOptions(key=key, kid="k"))
        with pytest.raises(ValueError, match=said):
            create_app(scenario_agent, config)
    with pytest.raises(ValueError, match="kid"):
        CardSigningOptions(key=b"x", kid="")
    with pytest.raises(ValueError, match="https"):
        CardSigningOptions(key=b"x", kid="k", jku="http://keys.example/jwks")


@pytest.mark.parametrize("oidc", [None, "https://idp.example/.well-known/openid-configuration"])
async def test_a_signed_card_with_security_schemes_verifies_with_the_sdk(oidc: str | None) -> None:
    """The dual 0.3/1.0 form of the schemes (which the SDK's parser rewrites) is unsigned:
    what the SDK reads back is the signed 1.0 card."""
    key = KEYS["ES256"]
    idp = SigningKey.make("idp", "RS256")
    config = _config(key).replace(
        api_keys={"k": "p"},
        jwt=JWTOptions(
            jwks=jwks(idp), issuer="https://idp.example", audience="a", oidc_discovery=oidc
        ),
    )
    with anyio.fail_after(TIMEOUT):
        async with served(config=config) as url, httpx.AsyncClient() as http:
            document = (await http.get(f"{url}/.well-known/agent-card.json")).json()
            assert len(document["securitySchemes"]) == 2
            assert "type" in document["securitySchemes"]["apiKey"]  # the 0.3 form too
            _sdk_verifier(key)(parse_agent_card(copy.deepcopy(document)))
            assert CardKeys(jwks(key)).verify(parse_card(json.dumps(document).encode()))


async def test_the_extended_card_is_verified_too() -> None:
    key = KEYS["ES256"]
    with anyio.fail_after(TIMEOUT):
        async with served(config=_config(key)) as url, httpx.AsyncClient() as http:
            async with await A2AClient.connect(url, verify_card=jwks(key), card_cache=None) as c:
                assert (await c.get_extended_card()).name == "extended"
            public = (await http.get(f"{url}/.well-known/agent-card.json")).json()
            extended = (await http.get(f"{url}/rest/extendedAgentCard", headers=V1)).json()
        # a fake agent: the signed public card, and an extended card altered after signing
        async with json_server(public) as fake:
            public["supportedInterfaces"] = [
                {
                    "url": f"{fake.base_url}/rest",
                    "protocolBinding": "HTTP+JSON",
                    "protocolVersion": "1.0",
                }
            ]
            fake.document = _resigned(public, key)
            fake.routes["/rest/extendedAgentCard"] = {**extended, "name": "altered"}
            async with await A2AClient.connect(
                fake.base_url, verify_card=jwks(key), card_cache=None
            ) as client:
                before = client.card
                with pytest.raises(CardSignatureError, match="does not match the card"):
                    await client.get_extended_card()
                assert client.card is before  # the verified card is kept


def _resigned(document: dict[str, Any], key: SigningKey) -> dict[str, Any]:
    """``document`` signed again by ``key`` (after the test changed it)."""
    from a2a_actors.protocol import codec
    from a2a_actors.server._auth.card_signing import CardSigner

    signer = CardSigner(CardSigningOptions(key=key.private_pem(), kid=key.kid))
    card = parse_card(json.dumps({k: v for k, v in document.items() if k != "signatures"}).encode())
    signed: dict[str, Any] = codec.to_builtins(signer.sign(card))
    return signed


async def test_a_client_built_from_a_card_verifies_it() -> None:
    key = KEYS["RS256"]
    with anyio.fail_after(TIMEOUT):
        async with served(config=_config(key)) as url, httpx.AsyncClient() as http:
            document = (await http.get(f"{url}/.well-known/agent-card.json")).json()
    card = parse_card(json.dumps(document).encode())
    async with A2AClient(card=card, verify_card=CardKeys(jwks(key))) as client:
        assert client.card is card
    with pytest.raises(CardSignatureError, match="is not a trusted key"):
        A2AClient(card=card, verify_card=CardKeys(jwks(OTHER)))
