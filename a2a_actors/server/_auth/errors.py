"""The refusal of a presented bearer token, shared by the credential check and the JWT
validator."""

from __future__ import annotations

from a2a_actors.protocol import UnauthenticatedError

__all__ = ("InvalidTokenError",)


class InvalidTokenError(UnauthenticatedError):
    """A bearer token was presented and refused (expired, wrong audience, bad signature...).

    Its message says why in general terms and never quotes the token; the 401 answer's
    challenge carries ``error="invalid_token"``.
    """
