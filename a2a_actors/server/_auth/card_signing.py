"""Signing the served AgentCards (A2A 1.0 §8.4; PyJWT and rfc8785, the ``signing`` extra).

A :class:`CardSigner` is built once per app from
:class:`~a2a_actors.server._config.trust.CardSigningOptions`: it reads the private key and picks the
algorithm by its type (EC P-256/384/521: ES256/384/512, RSA of 2048 bits or more: RS256, Ed25519:
EdDSA; anything else is refused when the app is created). :meth:`CardSigner.sign` returns the card
with one signature: a JWS over :func:`~a2a_actors.protocol._jose.card_signing_input` whose protected
header holds ``alg``, ``kid``, ``typ: "JOSE"`` and ``jku`` when configured, with the payload
detached.

ECDSA and RSA-PSS signatures differ at every signing, so a card is signed once and the signed card
reused (:class:`~a2a_actors.server._card.Cards` keeps it per base URL): the served bytes, and so the
``ETag``, stay the same for the same card.
"""

from __future__ import annotations

try:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
    from jwt import api_jws
except ImportError as exc:  # pragma: no cover - the extra is part of the dev install
    raise ImportError("signed cards need PyJWT: pip install 'a2a-actors[signing]'") from exc

import msgspec

from a2a_actors.protocol._card import AgentCard, AgentCardSignature
from a2a_actors.protocol._jose import card_signing_input
from a2a_actors.server._config.trust import CardSigningOptions

__all__ = ("CardSigner", "algorithm_for_key")

_EC_ALGORITHMS = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}
_MIN_RSA_BITS = 2048

PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey | ed25519.Ed25519PrivateKey


def algorithm_for_key(key: object) -> str:
    """The JWS algorithm a private key signs with.

    Raises:
        ValueError: A key type, curve or size that is not supported.
    """
    if isinstance(key, ec.EllipticCurvePrivateKey):
        alg = _EC_ALGORITHMS.get(key.curve.name)
        if alg is None:
            raise ValueError(f"EC curve {key.curve.name} is not supported (P-256/384/521 are)")
        return alg
    if isinstance(key, rsa.RSAPrivateKey):
        if key.key_size < _MIN_RSA_BITS:
            raise ValueError(f"an RSA key of {key.key_size} bits is too short (2048 at least)")
        return "RS256"
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return "EdDSA"
    raise ValueError(f"a {type(key).__name__} cannot sign cards (EC, RSA or Ed25519 can)")


class CardSigner:
    """Signs AgentCards with one private key (see the module docstring).

    Args:
        options: The key (PEM), its ``kid`` and the optional ``jku``.

    Raises:
        OSError: The key file cannot be read.
        ValueError: Not a PEM private key (or encrypted), or an unsupported key type.
    """

    def __init__(self, options: CardSigningOptions) -> None:
        pem = options.key_pem()
        try:
            key = serialization.load_pem_private_key(pem, password=None)
        except (TypeError, ValueError) as exc:  # TypeError: an encrypted key
            raise ValueError(f"the card signing key is not an unencrypted PEM key: {exc}") from None
        self.algorithm = algorithm_for_key(key)
        self._key = key
        self._header: dict[str, str] = {"kid": options.kid, "typ": "JOSE"}
        if options.jku is not None:
            self._header["jku"] = options.jku

    def sign(self, card: AgentCard) -> AgentCard:
        """``card`` with this key's signature as its only one.

        Raises:
            ValueError: The card has no canonical form (see ``card_signing_input``).
        """
        compact = api_jws.encode(
            card_signing_input(card),
            self._key,  # type: ignore[arg-type]
            algorithm=self.algorithm,
            headers=self._header,
        )
        protected, _, signature = compact.split(".")
        signed = AgentCardSignature(protected=protected, signature=signature)
        return msgspec.structs.replace(card, signatures=(signed,))
