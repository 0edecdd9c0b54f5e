"""Push notifications: the SSRF policy for webhook URLs and the delivery engine."""

from __future__ import annotations

from a2a_actors.push.policy import (
    IPAddress as IPAddress,
    PushPolicy as PushPolicy,
    PushTarget as PushTarget,
    UnsafeURLError as UnsafeURLError,
)

__all__ = ("IPAddress", "PushPolicy", "PushTarget", "UnsafeURLError")
