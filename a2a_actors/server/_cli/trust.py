"""``serve`` flags of the trust features: JWT bearer validation and signed agent cards.

``--jwks FILE_OR_URL --jwt-issuer ISS --jwt-audience AUD`` (all three together) accept JWT
bearer tokens; ``--jwt-algorithms ES256,RS256`` narrows the allowed algorithms (public-key
ones only: ``none`` and ``HS*`` are refused with exit status 2), ``--jwt-principal-claim``
names the caller's claim (``sub``), ``--jwt-leeway`` the clock skew in seconds (30).
``--oidc-discovery URL`` makes the card declare OpenID Connect, and supplies the JWKS and the
issuer when ``--jwks``/``--jwt-issuer`` are not given (then ``--jwt-audience`` is the one
required flag). JWT auth is exclusive with ``--bearer-token``.

``--sign-card KEY.pem --sign-kid KID [--sign-jku URL]`` signs the served cards.

Every mistake (a missing partner flag, a refused algorithm, an unreadable key or JWKS file,
a missing extra) is one line on stderr and exit status 2, before anything is served. See
docs/trust.md.
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

from a2a_actors.server._config.config import ServerConfig
from a2a_actors.server._config.trust import CardSigningOptions, JWTOptions

__all__ = ("add_arguments", "apply")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the JWT and card-signing flags to the ``serve`` parser."""
    jwt = parser.add_argument_group("JWT bearer tokens (docs/trust.md)")
    jwt.add_argument("--jwks", metavar="FILE_OR_URL", help="the identity provider's JWKS")
    jwt.add_argument("--jwt-issuer", metavar="ISS", help="the tokens' required iss")
    jwt.add_argument(
        "--jwt-audience", metavar="AUD", help="the tokens' required aud (comma-separated: any)"
    )
    jwt.add_argument(
        "--jwt-algorithms",
        metavar="ALG[,ALG]",
        help="accepted algorithms (default ES256,RS256,EdDSA; never none or HS*)",
    )
    jwt.add_argument(
        "--jwt-principal-claim", metavar="CLAIM", help="the claim naming the caller (sub)"
    )
    jwt.add_argument(
        "--jwt-leeway", type=float, metavar="SECONDS", help="clock skew allowed (30; max 300)"
    )
    jwt.add_argument(
        "--oidc-discovery",
        metavar="URL",
        help="declare OpenID Connect on the card; its JWKS and issuer unless given",
    )
    signing = parser.add_argument_group("signed agent cards (docs/trust.md)")
    signing.add_argument("--sign-card", metavar="KEY.pem", help="sign the served cards")
    signing.add_argument("--sign-kid", metavar="KID", help="the signature's key id")
    signing.add_argument("--sign-jku", metavar="URL", help="where verifiers find the JWKS")


def _require(module: str, extra: str, flag: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise ValueError(f"{flag} needs the {extra!r} extra: pip install 'a2a-actors[{extra}]'")


def apply(config: ServerConfig, args: argparse.Namespace) -> ServerConfig:
    """``config`` with the trust flags of ``args`` applied.

    Raises:
        ValueError: Inconsistent or invalid flags, or a missing extra (one line to print).
    """
    changes: dict[str, object] = {}
    jwt_flags = (
        args.jwt_issuer,
        args.jwt_audience,
        args.jwt_algorithms,
        args.jwt_principal_claim,
        args.jwt_leeway,
    )
    if args.jwks is not None or args.oidc_discovery is not None:
        flag = "--jwks" if args.jwks is not None else "--oidc-discovery"
        if args.oidc_discovery is None and not args.jwt_issuer:
            raise ValueError("--jwks needs --jwt-issuer (or --oidc-discovery to discover it)")
        if not args.jwt_audience:
            raise ValueError(f"{flag} needs --jwt-audience")
        if getattr(args, "bearer_token", None):
            raise ValueError(f"{flag} and --bearer-token both read Authorization: Bearer")
        _require("jwt", "jwt", flag)
        options: dict[str, object] = {
            "jwks": args.jwks,
            "issuer": args.jwt_issuer,
            "audience": tuple(a.strip() for a in args.jwt_audience.split(",") if a.strip()),
            "oidc_discovery": args.oidc_discovery,
        }
        if args.jwt_algorithms is not None:
            options["algorithms"] = tuple(
                a.strip() for a in args.jwt_algorithms.split(",") if a.strip()
            )
        if args.jwt_principal_claim is not None:
            options["principal_claim"] = args.jwt_principal_claim
        if args.jwt_leeway is not None:
            options["leeway"] = args.jwt_leeway
        changes["jwt"] = JWTOptions(**options)  # type: ignore[arg-type]
    elif any(flag is not None for flag in jwt_flags):
        raise ValueError("--jwt-* need --jwks or --oidc-discovery")
    if args.sign_card is not None:
        if not args.sign_kid:
            raise ValueError("--sign-card needs --sign-kid")
        _require("rfc8785", "signing", "--sign-card")
        _require("jwt", "signing", "--sign-card")
        changes["card_signing"] = CardSigningOptions(
            key=Path(args.sign_card), kid=args.sign_kid, jku=args.sign_jku
        )
    elif args.sign_kid is not None or args.sign_jku is not None:
        raise ValueError("--sign-kid and --sign-jku need --sign-card")
    return config.replace(**changes) if changes else config
