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

When no credential is configured, every request is anonymous (caller ``None``).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping

from a2a_actors.protocol.card import (
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a_actors.protocol.errors import UnauthenticatedError

from .checks import Lookup
from .config import ServerConfig

__all__ = ("API_KEY_SCHEME", "BEARER_SCHEME", "Authenticator", "principal_for_secret")

#: Scheme names on the card.
API_KEY_SCHEME = "apiKey"
BEARER_SCHEME = "bearer"


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
        config: Supplies ``api_keys``, ``api_key_header`` and ``bearer_tokens``.
    """

    def __init__(self, config: ServerConfig) -> None:
        self._api_keys = _SecretTable(config.api_keys)
        self._bearer = _SecretTable(config.bearer_tokens)
        self._header = config.api_key_header

    @property
    def enabled(self) -> bool:
        """Whether credentials are required at all."""
        return bool(self._api_keys or self._bearer)

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
            scheme, _, token = (headers.get("Authorization") or "").partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                principal = self._bearer.lookup(token.strip())
                if principal is not None:
                    return principal
        raise UnauthenticatedError("Missing or invalid credentials")

    def challenge(self) -> str:
        """The ``WWW-Authenticate`` value of a 401 answer."""
        challenges = []
        if self._bearer:
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
        return schemes

    def security_requirements(self) -> tuple[SecurityRequirement, ...]:
        """The card's ``securityRequirements``: any one configured scheme suffices (OR)."""
        return tuple(
            SecurityRequirement(schemes={name: StringList()}) for name in self.security_schemes()
        )
