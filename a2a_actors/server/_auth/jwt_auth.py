"""JWT bearer tokens checked against an identity provider's JWKS (PyJWT, the ``jwt`` extra).

Theory of operation
-------------------
:class:`JWKSKeys` holds the provider's public keys by ``kid``. Keys from a file or an object
are read once, when the app is created. Keys from a URL are fetched with httpx (so on
asyncio and trio alike, never blocking the event loop) by :meth:`JWKSKeys.wait_key`, which a
request awaits before its synchronous check only when the key it names is not loaded yet,
or the set is older than ``max_age``: an unknown ``kid`` refetches the set (a rotated key is
picked up on its first use), at most once per ``refresh_interval`` however many made-up
``kid`` values arrive, and concurrent requests share one fetch. A failed fetch keeps the
keys already loaded. With an OpenID Connect discovery URL and no JWKS configured, the first
fetch reads the discovery document first: its ``jwks_uri`` is the URL, and its ``issuer``
the required ``iss`` unless one is configured. Keys that are not for signatures (``use``
other than ``sig``), symmetric (``kty: oct``) or of a type PyJWT cannot read are left out.

:class:`JWTValidator` checks one token, synchronously (a signature check is tens of
microseconds): the protected header's ``alg`` must be allowed and fit the key's type, the
signature must verify, ``exp`` must be present and not past, ``nbf``/``iat`` not in the
future, ``iss`` and ``aud`` as configured, all with ``leeway`` seconds of clock skew; the
principal is the configured claim, a non-empty string. An accepted token is remembered until
it expires or the keys are reloaded (then it is checked again), so reusing a token costs a
dictionary lookup, not a signature check. A refusal is an
:class:`~a2a_actors.server._auth.credentials.InvalidTokenError` whose message says why in
general terms and never quotes the token.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anyio
import httpx

try:
    import jwt
    from jwt.api_jwk import PyJWK
except ImportError as exc:  # pragma: no cover - the extra is part of the dev install
    raise ImportError("JWT bearer auth needs PyJWT: pip install 'a2a-actors[jwt]'") from exc

from a2a_actors.protocol._jose import algorithm_fits_key
from a2a_actors.server._auth.errors import InvalidTokenError
from a2a_actors.server._config.trust import JWTOptions, check_key_url

__all__ = ("ACCEPTED_CACHE", "JWKSKeys", "JWTValidator")

logger = logging.getLogger("a2a_actors.server.jwt")

_MAX_JWKS_BYTES = 1 << 20
_WELL_KNOWN = "/.well-known/openid-configuration"
#: Most tokens a validator remembers as accepted (see :class:`JWTValidator`).
ACCEPTED_CACHE = 4096


class JWKSKeys:
    """The provider's public keys by ``kid`` (see the module docstring).

    Args:
        options: Where the keys come from and how often they may be refetched.
        clock: Seconds of a monotonic clock (tests pass their own).

    Raises:
        ValueError: A file or object JWKS that holds no usable key, or a file that is not
            a JWKS.
        OSError: The JWKS file cannot be read.
    """

    def __init__(self, options: JWTOptions, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._url = options.jwks_url
        #: The discovery document to read ``jwks_uri`` (and ``issuer``) from, until read.
        self._discovery = options.oidc_discovery if options.jwks is None else None
        #: The issuer tokens must name: configured, else the discovered one (None until then).
        self.issuer = options.issuer
        self._refresh_interval = options.refresh_interval
        self._max_age = options.max_age
        self._timeout = options.fetch_timeout
        self._clock = clock
        self._keys: dict[str | None, tuple[Mapping[str, Any], PyJWK]] = {}
        self._loaded_at: float | None = None
        self._fetched_at: float | None = None
        self._fetches = 0
        self._generation = 0
        self._lock = anyio.Lock()
        if self._url is None and self._discovery is None:
            source = options.jwks
            assert source is not None  # JWTOptions requires jwks or oidc_discovery
            data = source if isinstance(source, Mapping) else _read_file(Path(source))
            self._keys = _parse(data)
            if not self._keys:
                raise ValueError("the JWKS holds no usable public signing key")

    @property
    def generation(self) -> int:
        """Counts the key sets loaded so far (a token accepted with an older one is checked
        again)."""
        return self._generation

    @property
    def fetches(self) -> int:
        """How many times the JWKS URL was fetched (successfully or not)."""
        return self._fetches

    def get(self, kid: str | None) -> tuple[Mapping[str, Any], PyJWK] | None:
        """The key ``kid`` names (its JWK and PyJWT form); a token without ``kid`` gets
        the only key of a one-key set."""
        found = self._keys.get(kid)
        if found is None and kid is None and len(self._keys) == 1:
            return next(iter(self._keys.values()))
        return found

    def wants_fetch(self, kid: str | None) -> bool:
        """Whether a request naming ``kid`` should wait for :meth:`wait_key` first."""
        if self._url is None and self._discovery is None:
            return False
        now = self._clock()
        if self._loaded_at is not None and now - self._loaded_at >= self._max_age:
            return self._may_fetch(now)
        return self.get(kid) is None and self._may_fetch(now)

    def _may_fetch(self, now: float) -> bool:
        return self._fetched_at is None or now - self._fetched_at >= self._refresh_interval

    async def wait_key(self, kid: str | None) -> None:
        """Fetch the JWKS when :meth:`wants_fetch` says so (one fetch for concurrent
        callers); a failed fetch is logged and keeps the keys already loaded."""
        async with self._lock:
            if not self.wants_fetch(kid):
                return  # another request fetched while this one waited
            self._fetched_at = self._clock()
            try:
                if self._url is None:
                    await self._discover()
                assert self._url is not None
                self._fetches += 1
                keys = await self._fetch(self._url)
            except (httpx.HTTPError, ValueError) as exc:
                where = self._url or self._discovery
                logger.warning("cannot fetch the JWKS (from %s): %s", where, exc)
                return
            self._keys, self._loaded_at = keys, self._clock()
            self._generation += 1

    async def _discover(self) -> None:
        """Read ``jwks_uri`` (and ``issuer``, unless configured) from the OpenID Connect
        discovery document. Its issuer must be the discovery URL without the well-known
        suffix (OpenID Connect Discovery 1.0 §4.3)."""
        assert self._discovery is not None
        self._fetches += 1
        document = await self._get_json(self._discovery)
        jwks_uri, issuer = document.get("jwks_uri"), document.get("issuer")
        if not isinstance(jwks_uri, str) or not isinstance(issuer, str):
            raise ValueError("the discovery document has no jwks_uri or issuer")
        expected = self._discovery.removesuffix(_WELL_KNOWN)
        if expected != self._discovery and issuer.rstrip("/") != expected.rstrip("/"):
            raise ValueError(f"the discovery document names another issuer: {issuer!r}")
        check_key_url(jwks_uri, "the discovered jwks_uri")
        if self.issuer is None:
            self.issuer = issuer
        self._url, self._discovery = jwks_uri, None

    async def _get_json(self, url: str) -> Mapping[str, Any]:
        async with httpx.AsyncClient(timeout=self._timeout) as http:
            response = await http.get(url, headers={"Accept": "application/json"})
        if response.status_code != 200:
            raise ValueError(f"HTTP {response.status_code}")
        if len(response.content) > _MAX_JWKS_BYTES:
            raise ValueError("the document is larger than 1 MiB")
        document = _loads(response.content)
        if not isinstance(document, Mapping):
            raise ValueError("not a JSON object")
        return document

    async def _fetch(self, url: str) -> dict[str | None, tuple[Mapping[str, Any], PyJWK]]:
        keys = _parse(await self._get_json(url))
        if not keys:
            raise ValueError("the JWKS holds no usable public signing key")
        return keys


def _read_file(path: Path) -> Any:
    try:
        return _loads(path.read_bytes())
    except ValueError as exc:
        raise ValueError(f"the JWKS file {path} is not a JWKS: {exc}") from None


def _loads(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not JSON ({exc})") from None


def _parse(data: Any) -> dict[str | None, tuple[Mapping[str, Any], PyJWK]]:
    """The usable keys of a JWKS object by ``kid``."""
    keys = data.get("keys") if isinstance(data, Mapping) else None
    if not isinstance(keys, list):
        raise ValueError('a JWKS is an object with a "keys" list')
    found: dict[str | None, tuple[Mapping[str, Any], PyJWK]] = {}
    for jwk in keys:
        if not isinstance(jwk, Mapping) or jwk.get("kty") == "oct":
            continue
        if jwk.get("use", "sig") != "sig" or "d" in jwk:  # never a private key
            continue
        try:
            found[jwk.get("kid")] = (jwk, PyJWK(dict(jwk)))
        except jwt.PyJWTError as exc:
            logger.warning("JWKS key %r left out: %s", jwk.get("kid"), exc)
    return found


#: The refusal for each PyJWT error, most specific first (general terms, never the token).
_REFUSALS: tuple[tuple[type[Exception], str], ...] = (
    (jwt.ExpiredSignatureError, "The bearer token has expired"),
    (jwt.ImmatureSignatureError, "The bearer token is not valid yet"),
    (jwt.InvalidAudienceError, "The bearer token is not meant for this agent (audience)"),
    (jwt.InvalidIssuerError, "The bearer token's issuer is not trusted"),
    (jwt.InvalidSignatureError, "The bearer token's signature is invalid"),
    (jwt.InvalidAlgorithmError, "The bearer token's algorithm is not accepted"),
    (jwt.InvalidIssuedAtError, "The bearer token's issue time is invalid"),
)


class JWTValidator:
    """Checks JWT bearer tokens (see the module docstring).

    A token accepted once is remembered (up to :data:`ACCEPTED_CACHE` of them) until it
    expires or the key set is reloaded, so a client reusing its token pays a dictionary
    lookup per request instead of a signature check; the cache is keyed by the whole token,
    so any other token is checked in full.

    Args:
        options: Issuer, audience, algorithms, claim and leeway.
        keys: The provider's keys.
        clock: Wall-clock seconds, for the remembered tokens' expiry (tests pass their own).
    """

    def __init__(
        self, options: JWTOptions, keys: JWKSKeys, *, clock: Callable[[], float] = time.time
    ) -> None:
        self._options = options
        self._keys = keys
        self._clock = clock
        self._algorithms = frozenset(options.algorithms)
        self._require = ["exp", "iss", "aud"]
        #: token -> (principal, expiry with leeway, key-set generation, kid)
        self._accepted: dict[str, tuple[str, float, int, str | None]] = {}

    @property
    def keys(self) -> JWKSKeys:
        """The key set the tokens are checked with."""
        return self._keys

    def kid_of(self, token: str) -> str | None:
        """The ``kid`` a token's header names (None when absent or unreadable)."""
        accepted = self._accepted.get(token)
        if accepted is not None:
            return accepted[3]
        try:
            kid = jwt.get_unverified_header(token).get("kid")
        except jwt.PyJWTError:
            return None
        return kid if isinstance(kid, str) else None

    def principal(self, token: str) -> str:
        """The caller a valid token names.

        Raises:
            InvalidTokenError: The token is not valid (the message says why).
        """
        accepted = self._accepted.get(token)
        if accepted is not None:
            known, until, generation, _ = accepted
            if self._clock() >= until:
                del self._accepted[token]
                raise InvalidTokenError("The bearer token has expired")
            if generation == self._keys.generation:
                return known
            del self._accepted[token]  # the keys changed: check it again
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise InvalidTokenError("The bearer token is malformed") from None
        alg, kid = header.get("alg"), header.get("kid")
        if not isinstance(alg, str) or alg not in self._algorithms:
            raise InvalidTokenError("The bearer token's algorithm is not accepted")
        if kid is not None and not isinstance(kid, str):
            raise InvalidTokenError("The bearer token is malformed")
        found = self._keys.get(kid)
        if found is None:
            raise InvalidTokenError("The bearer token's signing key is unknown")
        jwk, key = found
        if not algorithm_fits_key(alg, jwk):
            raise InvalidTokenError("The bearer token's algorithm does not fit its key")
        options = self._options
        issuer = self._keys.issuer
        if issuer is None:  # pragma: no cover - keys come with the discovered issuer
            raise InvalidTokenError("The bearer token's issuer is not trusted")
        try:
            claims = jwt.decode(
                token,
                key=key.key,
                algorithms=[alg],
                audience=list(options.audience),
                issuer=issuer,
                leeway=options.leeway,
                options={"require": self._require, "verify_sub": False},
            )
        except jwt.MissingRequiredClaimError as exc:
            raise InvalidTokenError(f"The bearer token has no {exc.claim!r} claim") from None
        except jwt.PyJWTError as exc:
            raise InvalidTokenError(_refusal(exc)) from None
        principal = claims.get(options.principal_claim)
        if not isinstance(principal, str) or not principal:
            raise InvalidTokenError(
                f"The bearer token has no {options.principal_claim!r} claim naming the caller"
            )
        self._remember(token, principal, claims["exp"], kid)
        return principal

    def _remember(self, token: str, principal: str, exp: float, kid: str | None) -> None:
        if len(self._accepted) >= ACCEPTED_CACHE:
            self._accepted.clear()
        until = float(exp) + self._options.leeway  # PyJWT: expired once now >= exp + leeway
        self._accepted[token] = (principal, until, self._keys.generation, kid)


def _refusal(exc: Exception) -> str:
    for kind, message in _REFUSALS:
        if isinstance(exc, kind):
            return message
    return "The bearer token is malformed"
