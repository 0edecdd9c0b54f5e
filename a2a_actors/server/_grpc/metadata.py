"""gRPC invocation metadata read as request headers, and what a call's answer carries.

The HTTP checks (:mod:`a2a_actors.server._checks`) and the
:class:`~a2a_actors.server._auth.credentials.Authenticator` read requests through
``get``/``getlist``; :class:`Metadata` gives them a call's metadata the same way, so API keys
(``x-api-key``), ``authorization: Bearer`` (static tokens and JWTs), ``a2a-version``,
``a2a-extensions`` and the W3C trace context are read by the very code that reads them from HTTP
headers. gRPC metadata keys are lower-case ASCII; binary (``-bin``) entries are never credentials or
A2A parameters and are skipped.
"""

from __future__ import annotations

from collections.abc import Iterable

from a2a_actors.protocol._errors import A2AError, UnauthenticatedError

__all__ = ("EXTENSIONS_KEY", "Metadata", "NoQuery", "error_metadata")

#: Metadata key of the activated extensions (the ``A2A-Extensions`` header of HTTP).
EXTENSIONS_KEY = "a2a-extensions"
#: Metadata key of the challenge sent with ``UNAUTHENTICATED`` (HTTP's ``WWW-Authenticate``).
CHALLENGE_KEY = "www-authenticate"


class Metadata:
    """A call's invocation metadata with case-insensitive ``get`` and ``getlist``.

    Args:
        items: ``(key, value)`` pairs as grpcio gives them (``None``: no metadata).
    """

    __slots__ = ("_items",)

    def __init__(self, items: Iterable[tuple[str, str | bytes]] | None) -> None:
        self._items = tuple(
            (key.lower(), value) for key, value in items or () if isinstance(value, str)
        )

    def get(self, key: str, /) -> str | None:
        """The first value of ``key``, or ``None``."""
        key = key.lower()
        for name, value in self._items:
            if name == key:
                return value
        return None

    def getlist(self, key: str, /) -> list[str]:
        """Every value of ``key``, in order."""
        key = key.lower()
        return [value for name, value in self._items if name == key]


class NoQuery:
    """The query arguments of a gRPC call: there are none (``A2A-Version`` is metadata)."""

    __slots__ = ()

    def get(self, key: str, /) -> str | None:
        """Always ``None``."""
        return None


def error_metadata(error: A2AError, challenge: str) -> tuple[tuple[str, str], ...]:
    """Plain trailing metadata of an error: the challenge of an ``UNAUTHENTICATED``."""
    if isinstance(error, UnauthenticatedError) and challenge:
        return ((CHALLENGE_KEY, challenge),)
    return ()
