"""Authentication: API keys and Bearer tokens mapped to principals.

Theory of operation
-------------------
Credentials are configured as two maps, secret -> principal (``ServerConfig.api_keys`` and
``ServerConfig.bearer_tokens``). A request is authenticated by looking its API-key header
and its ``Authorization: Bearer`` token up in those maps; the principal found becomes the
``caller`` of every runtime call, so a task belongs to the principal that created it and is
invisible to every other one.

Secrets are compared in constant time: both sides are hashed with SHA-256 (equal lengths)
and every configured secret is compared with :func:`hmac.compare_digest`, without an early
exit, so timing reveals neither which secret matched nor how much of one did.

JWT bearer tokens (``ServerConfig.jwt``, docs/trust.md) are checked by
:class:`~a2a_actors.server._auth.jwt_auth.JWTValidator`, imported only when configured (PyJWT is the
``jwt`` extra); the principal is the token's configured claim (``sub``). A binding awaits
:meth:`Authenticator.wait_keys` before :meth:`Authenticator.authenticate` when
:attr:`Authenticator.fetches_keys` is set, so a key the provider just rotated in is fetched first
(without blocking the event loop). A refused token is an :class:`InvalidTokenError`, and its 401
answer's challenge says ``error="invalid_token"`` (RFC 6750); a request with no credentials at all
gets the bare challenge.

When no credential is configured, every request is anonymous (caller ``None``).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from typing import TYPE_CHECKING

from a2a_actors.protocol._card import (
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    OpenIdConnectSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a_actors.protocol._errors import UnauthenticatedError
from a2a_actors.server._auth.errors import InvalidTokenError
from a2a_actors.server._checks import Lookup
from a2a_actors.server._config.config import ServerConfig

if TYPE_CHECKING:
    from a2a_actors.server._auth.jwt_auth import JWTValidator

__all__ = (
    "API_KEY_SCHEME",
    "BEARER_SCHEME",
    "OIDC_SCHEME",
    "Authenticator",
    "principal_for_secret",
)

#: Scheme names on the card.
API_KEY_SCHEME = "apiKey"
BEARER_SCHEME = "bearer"
OIDC_SCHEME = "oidc"


def principal_for_secret(kind: str, secret: str) -> str:
    """A stable principal name that does not reveal the secret: ``kind:<sha256 prefix>``."""
    return f"{kind}:{hashlib.sha256(secret.encode()).hexdigest()[:12]}"


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("utf-8", "surrogateescape")).digest()


class _SecretTable:
    """Constant-time lookup of a secret among configured ones."""

    __slots__ = ("_entries",)

    def __init__(self, secrets: Mapping[str, str]) -> None:
        self._entries = tuple((_digest(secret), principal) for secret, principal in secrets.items())

    def __bool__(self) -> bool:
        return bool(self._entries)

    def lookup(self, candidate: str) -> str | None:
        digest = _digest(candidate)
        found: str | None = None
        for expected, principal in self._entries:
            if hmac.compare_digest(digest, expected) and found is None:
                found = principal
        return found


class Authenticator:
    """Checks credentials of a request and describes the schemes for the AgentCard.

    Args:
        config: Supplies ``api_keys``, ``api_key_header``, ``bearer_tokens`` and ``jwt``.

    Raises:
        OSError, ValueError: The JWT options' JWKS file cannot be read or holds no usable key.
    """

    def __init__(self, config: ServerConfig) -> None:
        self._api_keys = _SecretTable(config.api_keys)
        self._bearer = _SecretTable(config.bearer_tokens)
        self._header = config.api_key_header
        self._jwt: JWTValidator | None = None
        self._oidc = config.jwt.oidc_discovery if config.jwt is not None else None
        if config.jwt is not None:
            from a2a_actors.server._auth.jwt_auth import (  # PyJWT: the "jwt" extra
                JWKSKeys,
                JWTValidator,
            )

            self._jwt = JWTValidator(config.jwt, JWKSKeys(config.jwt))
        #: Whether :meth:`wait_keys` may have to fetch keys (a JWKS URL, or OIDC discovery).
        self.fetches_keys = config.jwt is not None and config.jwt.fetches_keys

    @property
    def enabled(self) -> bool:
        """Whether credentials are required at all."""
        return bool(self._api_keys or self._bearer or self._jwt)

    @property
    def jwt(self) -> JWTValidator | None:
        """The JWT validator, when JWT bearer tokens are configured."""
        return self._jwt

    async def wait_keys(self, headers: Lookup) -> None:
        """Fetch the provider's keys first when the request's JWT names a key not loaded
        yet, or the loaded ones are too old (rate-limited; see
        :mod:`a2a_actors.server._auth.jwt_auth`). Returns at once otherwise; never raises for a bad
        token (:meth:`authenticate` refuses it).
        """
        validator = self._jwt
        if validator is None:
            return
        token = _bearer_token(headers)
        if token is None:
            return
        kid = validator.kid_of(token)
        if validator.keys.wants_fetch(kid):
            await validator.keys.wait_key(kid)

    def authenticate(self, headers: Lookup) -> str | None:
        """The principal of a request.

        Args:
            headers: Request headers (case-insensitive mapping).

        Returns:
            The principal name, or ``None`` when auth is disabled (anonymous caller).

        Raises:
            UnauthenticatedError: Auth is enabled and no presented credential is valid.
        """
        if not self.enabled:
            return None
        if self._api_keys:
            key = headers.get(self._header)
            if key:
                principal = self._api_keys.lookup(key)
                if principal is not None:
                    return principal
        if self._bearer:
            token = _bearer_token(headers)
            if token is not None:
                principal = self._bearer.lookup(token)
                if principal is not None:
                    return principal
        if self._jwt is not None:
            token = _bearer_token(headers)
            if token is not None:
                return self._jwt.principal(token)  # InvalidTokenError says why not
        raise UnauthenticatedError("Missing or invalid credentials")

    def challenge(self, error: UnauthenticatedError | None = None) -> str:
        """The ``WWW-Authenticate`` value of a 401 answer refusing with ``error``."""
        challenges = []
        if isinstance(error, InvalidTokenError):
            challenges.append('Bearer realm="a2a", error="invalid_token"')
        elif self._bearer or self._jwt:
            challenges.append('Bearer realm="a2a"')
        if self._api_keys:
            challenges.append(f'ApiKey realm="a2a", header="{self._header}"')
        return ", ".join(challenges)

    def security_schemes(self) -> dict[str, SecurityScheme]:
        """The card's ``securitySchemes`` for the configured credentials."""
        schemes: dict[str, SecurityScheme] = {}
        if self._api_keys:
            schemes[API_KEY_SCHEME] = SecurityScheme(
                api_key_security_scheme=APIKeySecurityScheme(
                    location="header", name=self._header, description="API key"
                )
            )
        if self._bearer:
            schemes[BEARER_SCHEME] = SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(
                    scheme="Bearer", description="Bearer token"
                )
            )
        if self._oidc is not None:
            schemes[OIDC_SCHEME] = SecurityScheme(
                open_id_connect_security_scheme=OpenIdConnectSecurityScheme(
                    open_id_connect_url=self._oidc,
                    description="OpenID Connect: a JWT access token as Bearer",
                )
            )
        elif self._jwt is not None:
            schemes[BEARER_SCHEME] = SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(
                    scheme="Bearer", bearer_format="JWT", description="JWT bearer token"
                )
            )
        return schemes

    def security_requirements(self) -> tuple[SecurityRequirement, ...]:
        """The card's ``securityRequirements``: any one configured scheme suffices (OR)."""
        return tuple(
            SecurityRequirement(schemes={name: StringList()}) for name in self.security_schemes()
        )


def _bearer_token(headers: Lookup) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header (scheme case-insensitive)."""
    scheme, _, token = (headers.get("Authorization") or "").partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None
