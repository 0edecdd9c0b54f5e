"""Socket addresses as text: the one rule for writing a host and a port together."""

from __future__ import annotations

__all__ = ("authority",)


def authority(host: str, port: int | str) -> str:
    """``host:port``, an IPv6 host in brackets (``[::1]:8000``): a URL's authority, and
    the form of a gRPC address."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
