"""JOSE pieces shared by the server and the client (pure functions, no I/O, no crypto).

What an AgentCard signature covers (A2A 1.0 §8.4): the card as its A2A 1.0 JSON, without
``signatures``, with every empty value removed (``null``, ``""``, ``[]``, ``{}``, recursively,
as the proto3 JSON the official SDK signs never carries them), serialised with RFC 8785 (JCS,
the ``rfc8785`` package: the ``signing`` extra). The signature itself is a JWS with a
detached payload: ``protected`` and ``signature`` of the compact form
``protected.payload.signature`` (RFC 7515 §F). The signing and the verification themselves
are PyJWT's, in ``a2a_actors.server._auth.card_signing`` and ``a2a_actors.client._card_verify``.

Only public-key algorithms are ever accepted (:data:`ASYMMETRIC_ALGORITHMS`):
``none`` signs nothing, and with public keys an HMAC "secret" is public.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from a2a_actors.protocol import codec
from a2a_actors.protocol._card import AgentCard

__all__ = (
    "ASYMMETRIC_ALGORITHMS",
    "MAX_DEPTH",
    "algorithm_fits_key",
    "b64url",
    "b64url_decode",
    "card_signing_input",
    "decode_protected",
)

#: The JWS algorithms accepted for tokens and card signatures: public-key ones only.
ASYMMETRIC_ALGORITHMS = frozenset(
    {
        "ES256",
        "ES384",
        "ES512",
        "RS256",
        "RS384",
        "RS512",
        "PS256",
        "PS384",
        "PS512",
        "EdDSA",
    }
)

#: Deepest nesting of a card that can be canonicalised (``params`` of an extension is free
#: JSON; a deeper card has no signature anyone can check).
MAX_DEPTH = 128

#: The key types each algorithm family verifies with.
_FAMILY_KTY = {"ES": "EC", "RS": "RSA", "PS": "RSA", "Ed": "OKP"}
_EC_CURVES = {"ES256": "P-256", "ES384": "P-384", "ES512": "P-521"}


def b64url(data: bytes) -> str:
    """Unpadded base64url (RFC 7515 §2)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """Decode unpadded base64url.

    Raises:
        ValueError: Not base64url.
    """
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, UnicodeEncodeError) as exc:
        raise ValueError(f"not base64url: {exc}") from None


def decode_protected(protected: str) -> dict[str, Any]:
    """The JSON object of a JWS protected header.

    Raises:
        ValueError: Not base64url of a JSON object.
    """
    try:
        header = json.loads(b64url_decode(protected))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"the protected header is not JSON: {exc}") from None
    if not isinstance(header, dict):
        raise ValueError("the protected header is not a JSON object")
    return header


def algorithm_fits_key(alg: str, jwk: Mapping[str, Any]) -> bool:
    """Whether ``alg`` is meant for a key like ``jwk`` (its type, curve and own ``alg``)."""
    declared = jwk.get("alg")
    if declared is not None and declared != alg:
        return False
    if _FAMILY_KTY.get(alg[:2]) != jwk.get("kty"):
        return False
    curve = _EC_CURVES.get(alg)
    if curve is not None:
        return bool(jwk.get("crv") == curve)
    return alg != "EdDSA" or jwk.get("crv") == "Ed25519"


def card_signing_input(card: AgentCard) -> bytes:
    """The bytes an AgentCard signature covers (see the module docstring).

    Raises:
        ValueError: The card nests deeper than :data:`MAX_DEPTH` or holds a number JCS
            cannot represent (an integer beyond 2**53).
        ImportError: The ``rfc8785`` package (the ``signing`` extra) is missing.
    """
    import rfc8785  # the "signing" extra; only signing and verifying need it

    document = codec.to_builtins(card)
    document.pop("signatures", None)
    cleaned = _without_empty(document, 1)
    try:
        return rfc8785.dumps(cleaned if cleaned is not None else {})
    except rfc8785.CanonicalizationError as exc:
        raise ValueError(f"the card has no canonical form: {exc}") from None


def _without_empty(value: Any, depth: int) -> Any:
    """``value`` without empty members (None when it is itself empty)."""
    if isinstance(value, dict | list | tuple) and depth > MAX_DEPTH:
        raise ValueError(f"the card nests deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        kept = {}
        for key, member in value.items():
            cleaned = _without_empty(member, depth + 1)
            if cleaned is not None:
                kept[key] = cleaned
        return kept or None
    if isinstance(value, list | tuple):  # msgspec.to_builtins keeps tuples
        items = [v for v in (_without_empty(v, depth + 1) for v in value) if v is not None]
        return items or None
    if value == "" and isinstance(value, str):
        return None
    return value
