"""The options of ``/metrics`` (``ServerConfig.metrics``; docs/observability.md)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ("MetricsOptions",)


@dataclass(frozen=True, slots=True, kw_only=True)
class MetricsOptions:
    """Serve the app's Prometheus metrics (``serve --metrics``).

    Attributes:
        path: Where they are served.
        public: Serve them without the server's credentials (``--metrics-public``); by
            default a server with auth on answers 401 to a scrape without valid ones.
    """

    path: str = "/metrics"
    public: bool = False

    def __post_init__(self) -> None:
        if not self.path.startswith("/") or self.path == "/":
            raise ValueError("the metrics path must start with '/' and not be the root")
