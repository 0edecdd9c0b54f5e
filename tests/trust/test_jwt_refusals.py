"""JWT bearer tokens: a valid one names its caller; every hostile one is refused with 401,
``WWW-Authenticate: Bearer error="invalid_token"``, a reason in general terms that never
quotes the token, and nothing created (JSON-RPC and REST, both backends)."""

from __future__ import annotations

import json
import time
from typing import Any

import anyio
import pytest

from a2a_actors.server import ServerConfig
from a2a_actors.server._auth.credentials import Authenticator
from a2a_actors.server._config.trust import JWTOptions

from ..server.helpers import (
    JSON_HEADERS,
    TIMEOUT,
    envelope,
    post,
    rpc_result,
    running_app,
    send_params,
)
from .keys import (
    AUDIENCE,
    ISSUER,
    SigningKey,
    hmac_with_public_key,
    jwks,
    tampered,
    unsigned_token,
)

pytestmark = pytest.mark.anyio

ES = SigningKey.make("es-1", "ES256")
RS = SigningKey.make("rs-1", "RS256")
ED = SigningKey.make("ed-1", "EdDSA")
FOREIGN = SigningKey.make("es-1", "ES256")  # same kid, another key
OPTIONS = JWTOptions(jwks=jwks(ES, RS, ED), issuer=ISSUER, audience=AUDIENCE)
CONFIG = ServerConfig(jwt=OPTIONS)


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _hostile() -> list[tuple[str, dict[str, str], str]]:
    """(case, headers, expected reason fragment)."""
    now = int(time.time())
    valid = ES.token("alice")
    return [
        ("alg none", _bearer(unsigned_token("alice", ES.kid)), "algorithm"),
        ("HS256 with the public key", _bearer(hmac_with_public_key(ES)), "algorithm"),
        ("HS256 with the RSA public key", _bearer(hmac_with_public_key(RS)), "algorithm"),
        ("expired", _bearer(ES.token(exp=now - 3600)), "expired"),
        ("not yet valid", _bearer(ES.token(nbf=now + 3600)), "not valid yet"),
        ("wrong audience", _bearer(ES.token(aud="a2a://other")), "audience"),
        ("wrong issuer", _bearer(ES.token(iss="https://evil.example")), "issuer"),
        ("unknown kid", _bearer(ES.token(kid="nobody")), "key is unknown"),
        ("foreign key, known kid", _bearer(FOREIGN.token()), "signature"),
        ("tampered payload", _bearer(tampered(valid, sub="bob")), "signature"),
        ("no exp", _bearer(ES.token(exp=None)), "'exp'"),
        ("no sub", _bearer(ES.token(sub=None)), "'sub'"),  # type: ignore[arg-type]
        ("RS256 header on an EC key", _bearer(RS.token(kid=ES.kid)), "does not fit"),
        ("garbage", _bearer("not-a-jwt"), "malformed"),
        ("garbage with dots", _bearer("a.b.c"), "malformed"),
    ]


async def _rest_send(client: Any, headers: dict[str, str]) -> tuple[int, dict[str, str], Any]:
    response = await client.post(
        "/rest/message:send",
        data=json.dumps(send_params("hi")).encode(),
        headers={**JSON_HEADERS, **headers},
    )
    raw = await response.get_data(as_text=False)
    return response.status_code, dict(response.headers), json.loads(raw)


async def test_a_valid_token_names_its_subject_with_each_key_type() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=CONFIG) as client:
            for key, sub in ((ES, "alice"), (RS, "bob"), (ED, "carol")):
                result = await rpc_result(
                    client, "SendMessage", send_params("whoami"), headers=_bearer(key.token(sub))
                )
                assert result["message"]["parts"][0]["text"] == f"{sub}|"
            # clock skew within the leeway (30 s by default) is accepted
            skewed = ES.token("dave", exp=int(time.time()) - 10)
            result = await rpc_result(
                client, "SendMessage", send_params("whoami"), headers=_bearer(skewed)
            )
            assert result["message"]["parts"][0]["text"] == "dave|"


async def test_the_principal_claim_is_configurable() -> None:
    config = ServerConfig(jwt=JWTOptions(**{**_fields(OPTIONS), "principal_claim": "email"}))
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=config) as client:
            token = ES.token("alice", email="alice@example.com")
            result = await rpc_result(
                client, "SendMessage", send_params("whoami"), headers=_bearer(token)
            )
            assert result["message"]["parts"][0]["text"] == "alice@example.com|"
            status, _, raw = await post(
                client, "/", envelope("SendMessage", send_params("x")), _bearer(ES.token())
            )
            assert status == 401
            assert "'email'" in json.loads(raw)["error"]["message"]


def _fields(options: JWTOptions) -> dict[str, Any]:
    return {name: getattr(options, name) for name in options.__dataclass_fields__}


async def test_hostile_tokens_are_refused_and_create_nothing() -> None:
    with anyio.fail_after(TIMEOUT * 3):
        async with running_app(config=CONFIG) as client:
            for case, headers, reason in _hostile():
                token = headers["Authorization"].removeprefix("Bearer ")
                status, answer_headers, raw = await post(
                    client, "/", envelope("SendMessage", send_params("x")), headers
                )
                assert status == 401, case
                lower = {k.lower(): v for k, v in answer_headers.items()}
                assert lower["www-authenticate"] == 'Bearer realm="a2a", error="invalid_token"'
                error = json.loads(raw)["error"]
                assert error["code"] == -32051, case
                assert reason in error["message"], (case, error["message"])
                assert token not in raw.decode(), case
                status, rest_headers, body = await _rest_send(client, headers)
                assert status == 401, case
                lower = {k.lower(): v for k, v in rest_headers.items()}
                assert lower["www-authenticate"] == 'Bearer realm="a2a", error="invalid_token"'
                assert reason in body["error"]["message"], case
                assert token not in json.dumps(body), case
            # missing credentials: a bare challenge (RFC 6750 §3.1: no error code)
            for missing in ({}, {"Authorization": "Bearer "}, {"Authorization": "Basic eDp5"}):
                status, answer_headers, raw = await post(
                    client, "/", envelope("SendMessage", send_params("x")), missing
                )
                assert status == 401
                lower = {k.lower(): v for k, v in answer_headers.items()}
                assert lower["www-authenticate"] == 'Bearer realm="a2a"'
                status, _, _ = await _rest_send(client, missing)
                assert status == 401
            # nothing was created: alice (the hostile tokens' subject) has no task
            listed = await rpc_result(client, "ListTasks", {}, headers=_bearer(ES.token()))
            assert listed["tasks"] == []


async def test_the_card_declares_jwt_bearer_or_openid_connect() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=CONFIG) as client:
            card = await (await client.get("/.well-known/agent-card.json")).get_json()
            assert list(card["securitySchemes"]) == ["bearer"]
            assert card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"] == {
                "scheme": "Bearer",
                "bearerFormat": "JWT",
                "description": "JWT bearer token",
            }
            assert card["securityRequirements"] == [{"schemes": {"bearer": {}}}]
        discovery = "https://idp.example/.well-known/openid-configuration"
        oidc = ServerConfig(jwt=JWTOptions(**{**_fields(OPTIONS), "oidc_discovery": discovery}))
        async with running_app(config=oidc) as client:
            card = await (await client.get("/.well-known/agent-card.json")).get_json()
            scheme = card["securitySchemes"]["oidc"]["openIdConnectSecurityScheme"]
            assert scheme["openIdConnectUrl"] == discovery
            assert card["securityRequirements"] == [{"schemes": {"oidc": {}}}]


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"algorithms": ("HS256",)}, "never 'none' or HMAC"),
        ({"algorithms": ("none",)}, "never 'none' or HMAC"),
        ({"algorithms": ("ES256", "HS512")}, "'HS512' is refused"),
        ({"algorithms": ()}, "at least one"),
        ({"issuer": ""}, "issuer are required"),
        ({"jwks": None}, "issuer are required"),
        ({"audience": ""}, "audience is required"),
        ({"leeway": 3600}, "leeway"),
        ({"jwks": "http://idp.example/jwks"}, "https"),
        ({"oidc_discovery": "ftp://x"}, "https"),
    ],
)
def test_unsafe_options_are_refused_at_start(changes: dict[str, Any], said: str) -> None:
    with pytest.raises(ValueError, match=said):
        JWTOptions(**{**_fields(OPTIONS), **changes})


def test_a_jwks_without_usable_keys_is_refused_at_start(tmp_path: Any) -> None:
    hmac_only = {"keys": [{"kty": "oct", "k": "c2VjcmV0", "kid": "h"}]}
    with pytest.raises(ValueError, match="no usable public signing key"):
        Authenticator(ServerConfig(jwt=JWTOptions(**{**_fields(OPTIONS), "jwks": hmac_only})))
    bad = tmp_path / "jwks.json"
    bad.write_text("not json")
    with pytest.raises(ValueError, match="is not a JWKS"):
        Authenticator(ServerConfig(jwt=JWTOptions(**{**_fields(OPTIONS), "jwks": bad})))
    with pytest.raises(ValueError, match="choose one"):
        ServerConfig(jwt=OPTIONS, bearer_tokens={"t": "p"})


async def test_a2a_0_3_callers_get_the_same_refusals() -> None:
    expired = _bearer(ES.token(exp=int(time.time()) - 3600))
    legacy_send = {
        "message": {"kind": "message", "messageId": "m", "role": "user", "parts": []},
    }
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=CONFIG) as client:
            for path in ("/", "/message:send"):
                status, headers, raw = await post(
                    client, path, envelope("message/send", legacy_send), expired
                )
                assert status == 401, path
                lower = {k.lower(): v for k, v in headers.items()}
                assert lower["www-authenticate"] == 'Bearer realm="a2a", error="invalid_token"'
                assert "expired" in raw.decode()
