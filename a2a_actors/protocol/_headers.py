"""Request headers of our own, outside the A2A specification, that client and server share.

``Idempotency-Key`` (after the IETF httpapi draft of that name): a SendMessage or
SendStreamingMessage carrying one is applied once per caller and key; a repeat gets what
the first created (see docs/server.md, "Idempotent sends"). gRPC carries it as the
lower-cased metadata key ``idempotency-key``.
"""

from __future__ import annotations

__all__ = ("IDEMPOTENCY_HEADER", "MAX_IDEMPOTENCY_KEY_LENGTH", "valid_idempotency_key")

IDEMPOTENCY_HEADER = "Idempotency-Key"
MAX_IDEMPOTENCY_KEY_LENGTH = 255


def valid_idempotency_key(key: str) -> bool:
    """Whether ``key`` is 1 to 255 visible ASCII characters, ``!`` to ``~`` (what a server
    accepts)."""
    return 0 < len(key) <= MAX_IDEMPOTENCY_KEY_LENGTH and all("!" <= c <= "~" for c in key)
