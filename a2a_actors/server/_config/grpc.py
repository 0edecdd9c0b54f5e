"""The option of the gRPC binding: :class:`GrpcOptions`, one field of ``ServerConfig``.

Nothing here imports grpcio or protobuf: a server without the ``grpc`` extra imports this
module too, and only :func:`~a2a_actors.server._serve.serve` with ``ServerConfig.grpc`` set
loads the binding (:mod:`a2a_actors.server._grpc`). See docs/grpc.md.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

__all__ = ("GrpcExtraMissingError", "GrpcOptions", "require_grpc")


class GrpcExtraMissingError(ImportError):
    """gRPC was asked for but the ``grpc`` extra (grpcio, the SDK's protobufs) is missing."""


def require_grpc() -> None:
    """Check that the ``grpc`` extra is installed, without importing it.

    Raises:
        GrpcExtraMissingError: grpcio, grpcio-status or a2a-sdk is missing (the message
            names the extra).
    """
    for module in ("grpc", "grpc_status", "a2a"):
        if importlib.util.find_spec(module) is None:
            raise GrpcExtraMissingError(
                f"serving gRPC needs the 'grpc' extra ({module} is missing): "
                "pip install 'a2a-actors[grpc]'"
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class GrpcOptions:
    """Serve the gRPC binding (``lf.a2a.v1.A2AService``) beside HTTP, on asyncio.

    The card then lists a ``GRPC`` interface whose ``url`` is ``host:port``. Requests are
    limited to ``ServerConfig.max_body_bytes`` (larger ones: ``RESOURCE_EXHAUSTED``);
    auth, capacity, streaming and every other rule are the HTTP server's.

    Attributes:
        port: TCP port to listen on; 0 picks a free one.
        host: Interface to bind; ``None``: the HTTP server's host.
        advertised: The card's ``url`` for the interface (``host:port``), for clients that
            reach the server under another name; ``None``: the host of the card's base URL
            (``public_url``, else the request's) with the bound port.
        shared: Bind the port with ``SO_REUSEPORT`` (Linux), so that other processes serve
            it too and the kernel spreads connections over them: the workers of ``serve
            --workers``. Off by default: a port in use is then an error, not a share.
    """

    port: int = 0
    host: str | None = None
    advertised: str | None = None
    shared: bool = False

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise ValueError(f"gRPC port is 0..65535 (0 picks a free one), not {self.port}")
        if self.host is not None and not self.host.strip():
            raise ValueError("gRPC host must not be empty")
        if self.advertised is not None:
            host, colon, port = self.advertised.rpartition(":")
            if "://" in self.advertised or not colon or not host or not port.isdigit():
                raise ValueError(
                    f"the advertised gRPC address is host:port, not {self.advertised!r}"
                )
