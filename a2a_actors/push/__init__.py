"""Push notifications: the SSRF policy for webhook URLs and the delivery engine."""

from __future__ import annotations

from a2a_actors.push._delivery import PushDelivery as PushDelivery
from a2a_actors.push._policy import (
    PushPolicy as PushPolicy,
    UnsafeURLError as UnsafeURLError,
)

__all__ = ("PushDelivery", "PushPolicy", "UnsafeURLError")
