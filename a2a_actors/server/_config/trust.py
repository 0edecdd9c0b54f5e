"""Options of the trust features: JWT bearer validation and signed agent cards.

Two frozen values, each one field of :class:`~a2a_actors.server._config.config.ServerConfig`
(``jwt`` and ``card_signing``). They are checked when built and do no I/O; the keys they
name are read when the app is created (docs/trust.md). Nothing here imports PyJWT, so a
server without the ``jwt``/``signing`` extras imports this module too.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from a2a_actors.protocol._jose import ASYMMETRIC_ALGORITHMS

__all__ = ("CardSigningOptions", "JWTOptions", "check_key_url")

#: The most clock skew a deployment may allow, in seconds.
MAX_LEEWAY = 300.0


def check_key_url(url: str, what: str) -> None:
    """Refuse a key URL that a network attacker could answer: only ``https``, or ``http``
    to a loopback address (a sidecar, a test).

    Raises:
        ValueError: Another scheme, no host, or ``http`` to a host that is not loopback.
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme == "https" and host:
        return
    if parts.scheme == "http" and host:
        if host == "localhost":
            return
        try:
            if ipaddress.ip_address(host).is_loopback:
                return
        except ValueError:
            pass
        raise ValueError(f"{what} must be https (http only to a loopback address): {url!r}")
    raise ValueError(f"{what} must be an https URL or a file: {url!r}")


def _is_url(source: str) -> bool:
    return source.startswith(("http://", "https://"))


@dataclass(frozen=True, slots=True, kw_only=True)
class JWTOptions:
    """JWT bearer tokens from an identity provider (docs/trust.md).

    A request's ``Authorization: Bearer <JWT>`` is accepted when its signature verifies
    with the JWKS key its ``kid`` names, its ``alg`` is in ``algorithms`` and fits that key,
    it has ``exp`` (and is not expired), its ``nbf`` has passed, its ``iss`` is ``issuer``
    and its ``aud`` names ``audience``, all give or take ``leeway`` seconds. Its caller is
    the string value of ``principal_claim``.

    Attributes:
        jwks: The keys: an ``https://`` URL (fetched, and refetched on an unknown ``kid``),
            a JSON file (read once when the app is created), or a JWKS object. None: the
            ``jwks_uri`` of the ``oidc_discovery`` document.
        issuer: The required ``iss``. None: the ``issuer`` of the ``oidc_discovery`` document.
        audience: The accepted ``aud`` values (one is enough).
        algorithms: The accepted ``alg`` values, public-key algorithms only.
        principal_claim: The claim naming the caller (``sub``).
        leeway: Clock skew allowed on ``exp``, ``nbf`` and ``iat``, in seconds (0..300).
        oidc_discovery: An OpenID Connect discovery URL: the card then declares an
            ``openIdConnectSecurityScheme`` instead of HTTP bearer with ``bearerFormat: JWT``,
            and the document (read on first use) supplies ``jwks`` and ``issuer`` when they
            are not given.
        refresh_interval: Fewest seconds between two JWKS fetches caused by unknown ``kid``
            values (a flood of made-up ``kid`` values costs the provider one fetch each time).
        max_age: Seconds a fetched JWKS is trusted before the next request refetches it (so a
            key the provider withdrew stops working).
        fetch_timeout: Seconds one JWKS fetch may take.
    """

    audience: str | Sequence[str]
    jwks: str | Path | Mapping[str, Any] | None = None
    issuer: str | None = None
    algorithms: Sequence[str] = ("ES256", "RS256", "EdDSA")
    principal_claim: str = "sub"
    leeway: float = 30.0
    oidc_discovery: str | None = None
    refresh_interval: float = 30.0
    max_age: float = 300.0
    fetch_timeout: float = 5.0

    def __post_init__(self) -> None:
        audience = (self.audience,) if isinstance(self.audience, str) else tuple(self.audience)
        object.__setattr__(self, "audience", audience)  # frozen: a list is copied
        object.__setattr__(self, "algorithms", tuple(self.algorithms))
        if self.oidc_discovery is None and (self.jwks is None or not self.issuer):
            raise ValueError(
                "a JWKS and a JWT issuer are required (the tokens' keys and iss), "
                "unless an OpenID Connect discovery URL supplies them"
            )
        if self.issuer is not None and not self.issuer:
            raise ValueError("a JWT issuer is required (the tokens' iss); None: discovered")
        if not audience or not all(audience):
            raise ValueError("a JWT audience is required (the tokens' aud)")
        if not self.algorithms:
            raise ValueError("at least one JWT algorithm is required")
        for alg in self.algorithms:
            if alg not in ASYMMETRIC_ALGORITHMS:
                # none signs nothing; with a public JWKS an HMAC "secret" is public
                raise ValueError(
                    f"JWT algorithm {alg!r} is refused: only public-key algorithms "
                    f"({', '.join(sorted(ASYMMETRIC_ALGORITHMS))}); never 'none' or HMAC"
                )
        if not self.principal_claim:
            raise ValueError("the JWT principal claim must be named")
        if not 0 <= self.leeway <= MAX_LEEWAY:
            raise ValueError(f"JWT leeway must be 0..{MAX_LEEWAY:.0f} seconds")
        if self.refresh_interval < 0 or self.max_age <= 0 or self.fetch_timeout <= 0:
            raise ValueError("JWKS refresh interval, max age and fetch timeout must be positive")
        if isinstance(self.jwks, str) and _is_url(self.jwks):
            check_key_url(self.jwks, "the JWKS URL")
        if self.oidc_discovery is not None:
            check_key_url(self.oidc_discovery, "the OpenID Connect discovery URL")

    @property
    def jwks_url(self) -> str | None:
        """The JWKS URL, or None when the keys come from a file, an object or discovery."""
        return self.jwks if isinstance(self.jwks, str) and _is_url(self.jwks) else None

    @property
    def fetches_keys(self) -> bool:
        """Whether the keys are fetched over HTTP (a JWKS URL, or discovery)."""
        return self.jwks_url is not None or self.jwks is None


@dataclass(frozen=True, slots=True, kw_only=True)
class CardSigningOptions:
    """Sign the served agent cards (public and extended) as the A2A spec says: a JWS over
    the RFC 8785 canonical card without ``signatures`` (docs/trust.md).

    Attributes:
        key: The private key, PEM (a file, or its bytes): EC P-256/384/521 signs ES256/384/512,
            RSA (2048 bits or more) RS256, Ed25519 EdDSA.
        kid: The key id put in the protected header (verifiers choose their key by it).
        jku: A JWKS URL put in the protected header, where verifiers may find the key.
    """

    key: Path | bytes
    kid: str
    jku: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.key, str):
            object.__setattr__(self, "key", Path(self.key))
        if not self.kid:
            raise ValueError("a card signing key needs a kid")
        if self.jku is not None:
            check_key_url(self.jku, "the card signature's jku")

    def key_pem(self) -> bytes:
        """The key's PEM bytes.

        Raises:
            OSError: The key file cannot be read.
        """
        return self.key if isinstance(self.key, bytes) else self.key.read_bytes()
