"""Test keys (ES256, RS256, EdDSA) made with ``cryptography``, their JWKS, tokens, and a
tiny real HTTP server that serves a JWKS (counting its fetches)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import jwt
from anyio.abc import SocketStream
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

ISSUER = "https://idp.example"
AUDIENCE = "a2a://agent"

PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey | ed25519.Ed25519PrivateKey


@dataclass(frozen=True)
class SigningKey:
    """A private key, its algorithm and its kid."""

    kid: str
    alg: str
    private: PrivateKey = field(repr=False)

    @classmethod
    def make(cls, kid: str, alg: str = "ES256") -> SigningKey:
        private: PrivateKey
        if alg == "ES256":
            private = ec.generate_private_key(ec.SECP256R1())
        elif alg == "RS256":
            private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        else:
            private = ed25519.Ed25519PrivateKey.generate()
        return cls(kid, alg, private)

    def jwk(self) -> dict[str, Any]:
        """The public JWK, with ``kid`` and ``use``."""
        public = self.private.public_key()
        found: Any
        if isinstance(public, ec.EllipticCurvePublicKey):
            found = ECAlgorithm.to_jwk(public, as_dict=True)
        elif isinstance(public, rsa.RSAPublicKey):
            found = RSAAlgorithm.to_jwk(public, as_dict=True)
        else:
            found = OKPAlgorithm.to_jwk(public, as_dict=True)
        return {**found, "kid": self.kid, "use": "sig"}

    def public_pem(self) -> bytes:
        return self.private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )

    def private_pem(self) -> bytes:
        return self.private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )

    def token(self, sub: str = "alice", *, kid: str | None = None, **claims: Any) -> str:
        """A token for ``sub`` (issuer, audience, exp in an hour unless overridden; a claim
        given as None is left out)."""
        now = int(time.time())
        payload: dict[str, Any] = {
            "sub": sub,
            "iss": ISSUER,
            "aud": AUDIENCE,
            "iat": now,
            "exp": now + 3600,
            **claims,
        }
        payload = {k: v for k, v in payload.items() if v is not None}
        headers = {"kid": self.kid if kid is None else kid}
        return jwt.encode(payload, self.private, algorithm=self.alg, headers=headers)


def jwks(*keys: SigningKey) -> dict[str, Any]:
    return {"keys": [key.jwk() for key in keys]}


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unsigned_token(sub: str = "alice", kid: str = "k1") -> str:
    """``alg: none``."""
    now = int(time.time())
    header = b64(json.dumps({"alg": "none", "typ": "JWT", "kid": kid}).encode())
    payload = {"sub": sub, "iss": ISSUER, "aud": AUDIENCE, "exp": now + 3600}
    return f"{header}.{b64(json.dumps(payload).encode())}."


def hmac_with_public_key(key: SigningKey, sub: str = "alice") -> str:
    """HS256 "signed" with the verifier's public key PEM (the algorithm-confusion attack)."""
    now = int(time.time())
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": key.kid}).encode())
    payload = {"sub": sub, "iss": ISSUER, "aud": AUDIENCE, "exp": now + 3600}
    signing_input = f"{header}.{b64(json.dumps(payload).encode())}"
    mac = hmac.new(key.public_pem(), signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{b64(mac)}"


def tampered(token: str, **changes: Any) -> str:
    """``token`` with its payload changed and its signature kept."""
    header, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims.update(changes)
    return f"{header}.{b64(json.dumps(claims).encode())}.{signature}"


class JSONServer:
    """A real HTTP/1.1 server on 127.0.0.1 answering every request with ``document`` (JSON),
    or with ``routes[path]`` for the paths it names."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.routes: dict[str, dict[str, Any]] = {}
        self.fetches = 0
        self.url = ""
        self.base_url = ""

    async def answer(self, stream: SocketStream) -> None:
        async with stream:
            data = b""
            with anyio.move_on_after(5):
                while b"\r\n\r\n" not in data:
                    chunk = await stream.receive()
                    data += chunk
            self.fetches += 1
            path = data.split(b" ", 2)[1].decode() if data.count(b" ") >= 2 else "/"
            body = json.dumps(self.routes.get(path, self.document)).encode()
            head = (
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            )
            await stream.send(head.encode() + body)


@asynccontextmanager
async def json_server(document: dict[str, Any]) -> AsyncIterator[JSONServer]:
    """Serve ``document`` for the block; ``server.url`` is its URL."""
    server = JSONServer(document)
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    server.url = f"http://127.0.0.1:{port}/jwks.json"
    server.base_url = f"http://127.0.0.1:{port}"
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, server.answer)
        try:
            yield server
        finally:
            tg.cancel_scope.cancel()
