"""The inspector's options (``ServerConfig.inspect``); a module of its own so that the
configuration can name them without importing the inspector."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ("InspectorOptions",)


@dataclass(frozen=True, slots=True, kw_only=True)
class InspectorOptions:
    """The inspector page (``serve --inspect``; docs/observability.md, "Inspector").

    Attributes:
        peers: Base URLs (``scheme://host[:port]``) of the servers whose child tasks the hop
            tree may read; None: any ``http(s)`` URL a parent recorded for its child, ``()``:
            none (remote children are shown as their parent recorded them).
        peer_headers: Base URL -> headers sent when reading a child task there (its
            credentials); the browser's own credentials are never forwarded.
        peer_timeout: Seconds one read of a child task on another server may take.
        max_hops: Most hops one tree shows (the rest are not read).
        buffer: Events a browser's stream may fall behind before it is told to resync.
        max_tasks: Tasks whose events are kept for their timeline (the least recently
            changed are forgotten first).
        max_events: Events kept per task for its timeline (the oldest are dropped first).
    """

    peers: tuple[str, ...] | None = None
    peer_headers: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    peer_timeout: float = 3.0
    max_hops: int = 128
    buffer: int = 256
    max_tasks: int = 1000
    max_events: int = 100

    def __post_init__(self) -> None:
        if self.peers is not None:
            if isinstance(self.peers, str):
                raise ValueError("inspector peers must be a sequence of base URLs")
            object.__setattr__(self, "peers", tuple(p.rstrip("/") for p in self.peers))
            for peer in self.peers:
                if not peer.startswith(("http://", "https://")):
                    raise ValueError(f"inspector peer {peer!r} is not an http(s) URL")
        headers = {url.rstrip("/"): dict(values) for url, values in self.peer_headers.items()}
        object.__setattr__(self, "peer_headers", headers)  # frozen: keys as peers are written
        if min(self.max_hops, self.buffer, self.max_tasks, self.max_events) < 1:
            raise ValueError("inspector max_hops, buffer, max_tasks and max_events must be >= 1")
        if self.peer_timeout <= 0:
            raise ValueError("inspector peer_timeout must be positive")
