"""What the client knows about the gRPC binding without importing grpc or protobuf.

The gRPC transport (:mod:`a2a_actors.client._transports.grpc`) imports ``grpcio``, ``protobuf`` and
the official SDK's generated ``a2a.types.a2a_pb2`` modules, which come with the ``grpc`` extra. This
module is the cheap side of that boundary: importing ``a2a_actors`` or the JSON client never imports
grpc, and code that may or may not speak gRPC asks here first.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from a2a_actors.client._transports.grpc import GRPCTransport

__all__ = (
    "GRPC_BINDING",
    "GRPCUnavailableError",
    "grpc_installed",
    "missing_extra",
    "transport_class",
)

#: The ``protocolBinding`` of a gRPC interface (its ``url`` is ``host:port``).
GRPC_BINDING = "GRPC"
_INSTALL = "pip install 'a2a-actors[grpc]'"
_MODULES = ("grpc", "google.protobuf", "google.rpc", "a2a")


class GRPCUnavailableError(ValueError):
    """The gRPC binding is needed but the ``grpc`` extra is not installed; the message
    names the command that installs it."""


def grpc_installed() -> bool:
    """True when the ``grpc`` extra's packages can be imported (nothing is imported)."""
    return all(importlib.util.find_spec(name) is not None for name in _MODULES)


def missing_extra(missing: str = "grpcio") -> GRPCUnavailableError:
    """The error for a gRPC interface without the extra (one line naming the install)."""
    return GRPCUnavailableError(f"the gRPC binding needs the grpc extra ({missing}): {_INSTALL}")


def transport_class() -> type[GRPCTransport]:
    """The gRPC transport class, imported now.

    Raises:
        GRPCUnavailableError: The ``grpc`` extra is not installed.
    """
    try:
        from a2a_actors.client._transports.grpc import GRPCTransport
    except ImportError as exc:
        raise missing_extra(f"{exc.name or 'grpcio'} is missing") from None
    return GRPCTransport
