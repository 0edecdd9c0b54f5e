"""Verifying an AgentCard's signatures against keys the caller trusts (PyJWT, ``signing``).

:class:`CardKeys` holds trusted public keys by ``kid``, from a JWKS (an object, a file or an
``https://`` URL) or one PEM public key. :meth:`CardKeys.verify` accepts a card when at least
one of its signatures verifies: its protected header's ``kid`` names a trusted key, its
``alg`` is a public-key algorithm that fits that key, and the JWS over the card's canonical
form (:func:`~a2a_actors.protocol._jose.card_signing_input`) verifies. The card is checked as
the client decoded it, so the unsigned 0.3 fields a dual-version card also carries play no
part (as with the official SDK). A ``jku`` in the header is never followed: keys come from
the caller only, or anyone could sign a card with keys of their own.

A card without signatures, or whose signatures all fail, raises :class:`CardSignatureError`
(an :class:`~a2a_actors.client._errors.AgentCardError`) saying why.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import httpx

from a2a_actors.client._errors import AgentCardError
from a2a_actors.protocol._card import AgentCard
from a2a_actors.protocol._jose import (
    ASYMMETRIC_ALGORITHMS,
    algorithm_fits_key,
    b64url,
    card_signing_input,
    decode_protected,
)

__all__ = ("CardKeys", "CardKeysSource", "CardSignatureError", "card_keys")

_MAX_JWKS_BYTES = 1 << 20


class CardSignatureError(AgentCardError):
    """The AgentCard is not signed by a trusted key: no signature, or none that verifies
    (the card was altered after signing, or signed by another key). The message says why;
    the card is not used."""


class CardKeys:
    """Trusted public keys for AgentCard signatures, by ``kid``.

    Args:
        jwks: A JWKS object (``{"keys": [...]}``); private members and symmetric keys are
            left out.

    Raises:
        ValueError: Not a JWKS, or no usable public key in it.
    """

    def __init__(self, jwks: Mapping[str, Any]) -> None:
        import jwt  # the "signing" extra
        from jwt.api_jwk import PyJWK

        keys = jwks.get("keys")
        if not isinstance(keys, list):
            raise ValueError('a JWKS is an object with a "keys" list')
        self._keys: dict[str, tuple[Mapping[str, Any], Any]] = {}
        for jwk in keys:
            if not isinstance(jwk, Mapping) or jwk.get("kty") == "oct" or "d" in jwk:
                continue
            kid = jwk.get("kid")
            if not isinstance(kid, str) or jwk.get("use", "sig") != "sig":
                continue
            try:
                self._keys[kid] = (jwk, PyJWK(dict(jwk)).key)
            except jwt.PyJWTError:
                continue
        if not self._keys:
            raise ValueError("the JWKS holds no usable public key with a kid")

    @classmethod
    def from_pem(cls, pem: bytes, kid: str) -> CardKeys:
        """One PEM public key (EC, RSA or Ed25519) known as ``kid``.

        Raises:
            ValueError: Not a PEM public key of a supported type.
        """
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
        from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

        try:
            public = serialization.load_pem_public_key(pem)
        except ValueError as exc:
            raise ValueError(f"not a PEM public key: {exc}") from None
        jwk: dict[str, Any]
        if isinstance(public, ec.EllipticCurvePublicKey):
            jwk = ECAlgorithm.to_jwk(public, as_dict=True)
        elif isinstance(public, rsa.RSAPublicKey):
            jwk = RSAAlgorithm.to_jwk(public, as_dict=True)
        elif isinstance(public, ed25519.Ed25519PublicKey):
            jwk = OKPAlgorithm.to_jwk(public, as_dict=True)
        else:
            raise ValueError(f"a {type(public).__name__} cannot verify cards")
        return cls({"keys": [{**jwk, "kid": kid}]})

    @property
    def kids(self) -> frozenset[str]:
        """The ids of the trusted keys."""
        return frozenset(self._keys)

    def verify(self, card: AgentCard) -> str:
        """Check ``card``'s signatures; the ``kid`` of the first that verifies.

        Raises:
            CardSignatureError: No signature, or none that verifies with these keys.
        """
        from jwt import PyJWTError, api_jws

        if not card.signatures:
            raise CardSignatureError(f"the agent card of {card.name!r} is not signed")
        try:
            payload = card_signing_input(card)
        except ValueError as exc:
            raise CardSignatureError(f"the agent card cannot be verified: {exc}") from None
        encoded = b64url(payload)  # the detached payload, put back between the two parts
        reasons: list[str] = []
        for signature in card.signatures:
            try:
                header = decode_protected(signature.protected)
            except ValueError as exc:
                reasons.append(str(exc))
                continue
            kid, alg = header.get("kid"), header.get("alg")
            found = self._keys.get(kid) if isinstance(kid, str) else None
            if found is None:
                reasons.append(f"kid {kid!r} is not a trusted key")
                continue
            jwk, key = found
            if alg not in ASYMMETRIC_ALGORITHMS or not algorithm_fits_key(str(alg), jwk):
                reasons.append(f"algorithm {alg!r} is not accepted for kid {kid!r}")
                continue
            compact = f"{signature.protected}.{encoded}.{signature.signature}"
            try:
                api_jws.decode_complete(compact, key, algorithms=[str(alg)])
            except PyJWTError:
                reasons.append(f"the signature by kid {kid!r} does not match the card")
                continue
            return str(kid)
        raise CardSignatureError(
            f"the agent card of {card.name!r} has no valid signature: {'; '.join(reasons)}"
        )


#: What ``verify_card`` accepts: keys, a JWKS object, or a JWKS file or ``https://`` URL.
CardKeysSource = CardKeys | Mapping[str, Any] | str | Path


async def card_keys(source: CardKeysSource, *, http: httpx.AsyncClient | None = None) -> CardKeys:
    """The :class:`CardKeys` of ``source``: given keys, a JWKS object, or a JWKS file or
    ``https://`` (or loopback ``http://``) URL fetched with ``http``.

    Raises:
        ValueError: The file or URL does not hold a usable JWKS, or cannot be read.
    """
    if isinstance(source, CardKeys):
        return source
    if isinstance(source, Mapping):
        return CardKeys(source)
    text = str(source)
    if text.startswith(("http://", "https://")):
        return CardKeys(await _fetch_jwks(text, http))
    try:
        raw = await anyio.Path(text).read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read the JWKS file {text!r}: {exc.strerror or exc}") from None
    return CardKeys(_json_object(raw, text))


async def _fetch_jwks(url: str, http: httpx.AsyncClient | None) -> Any:
    client = http if http is not None else httpx.AsyncClient(timeout=10.0)
    try:
        response = await client.get(url, headers={"Accept": "application/json"})
    except httpx.HTTPError as exc:
        raise ValueError(f"cannot fetch the JWKS at {url}: {exc}") from None
    finally:
        if http is None:
            await client.aclose()
    if response.status_code != 200:
        raise ValueError(f"HTTP {response.status_code} fetching the JWKS at {url}")
    if len(response.content) > _MAX_JWKS_BYTES:
        raise ValueError(f"the JWKS at {url} is larger than 1 MiB")
    return _json_object(response.content, url)


def _json_object(raw: bytes, where: str) -> Any:
    import json

    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{where} is not a JWKS (not JSON: {exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{where} is not a JWKS (not a JSON object)")
    return data
