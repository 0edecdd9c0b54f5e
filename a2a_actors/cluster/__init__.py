"""Cluster mode: many server processes share every task, on NATS JetStream.

Issue 18 (see ``docs/cluster.md`` for what is built and what is planned): the pieces a
node is made of, each usable and tested on its own against a real nats-server, and their
wiring into a served node —

* :class:`NatsServer` (:mod:`.nats_server`): run a nats-server with JetStream (tests,
  local runs, ``serve --workers``);
* :class:`ClusterConnection` (:mod:`.connection`): a node's NATS connection, every
  operation bounded, failures as :class:`ClusterUnavailableError`;
* :class:`NatsTaskStore` (:mod:`.task_store`): the TaskStore on JetStream KV, with each
  task's holder (node and lease epoch) for fencing;
* :class:`NatsPushConfigStore` (:mod:`.push_configs`): push configs on JetStream KV;
* :class:`EventLog` (:mod:`.event_log`): every task's events, replayable by version;
* :class:`~.offload.Offloader` (:mod:`.offload`): large task content in JetStream's
  Object Store, so tasks, events and inbox messages of any size fit NATS;
* :class:`OwnerInbox` (:mod:`.inbox`): cancel and input addressed to a task's owner, and
  :class:`SupervisorInbox` (:mod:`.owner`): the owner's side, over its Supervisor;
* :class:`NodeLeases` (:mod:`.leases`): node liveness and fencing;
* :func:`~.settling.settle_lost_node` (:mod:`.settling`): a lost node's tasks failed or
  released for resumption, once;
* :func:`~.retention.evict` (:mod:`.retention`): retention passes over the cluster;
* :class:`ClusterNode` (:mod:`.node`): one node's parts composed, settling lost nodes;
* :mod:`.member`: a served node's wiring into the runtime's environment seam (what
  ``serve`` with ``ServerConfig.cluster`` uses: ``join``, ``ClusterMember``), with
  :mod:`.publisher`, the owner's events on their way to the event log.

Importing this package does not import nats-py; its names are loaded on first use (and
need the ``cluster`` extra: ``pip install 'a2a-actors[cluster]'``), except the errors,
names and the server process, which do not need nats-py.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from a2a_actors.cluster.errors import (
    ClusterExtraMissingError as ClusterExtraMissingError,
    ClusterUnavailableError as ClusterUnavailableError,
    LeaseLostError as LeaseLostError,
    OwnerUnreachableError as OwnerUnreachableError,
)
from a2a_actors.cluster.names import ClusterNames as ClusterNames, cluster_token as cluster_token
from a2a_actors.cluster.nats_server import (
    NatsServer as NatsServer,
    find_nats_server as find_nats_server,
)

if TYPE_CHECKING:
    from a2a_actors.cluster.connection import ClusterConnection as ClusterConnection
    from a2a_actors.cluster.event_log import EventLog as EventLog
    from a2a_actors.cluster.inbox import OwnerInbox as OwnerInbox
    from a2a_actors.cluster.leases import NodeLeases as NodeLeases
    from a2a_actors.cluster.node import ClusterNode as ClusterNode
    from a2a_actors.cluster.owner import SupervisorInbox as SupervisorInbox
    from a2a_actors.cluster.push_configs import NatsPushConfigStore as NatsPushConfigStore
    from a2a_actors.cluster.task_store import NatsTaskStore as NatsTaskStore

__all__ = (
    "ClusterConnection",
    "ClusterExtraMissingError",
    "ClusterNode",
    "ClusterNames",
    "ClusterUnavailableError",
    "EventLog",
    "LeaseLostError",
    "NatsPushConfigStore",
    "NatsServer",
    "NatsTaskStore",
    "NodeLeases",
    "OwnerInbox",
    "OwnerUnreachableError",
    "SupervisorInbox",
    "cluster_token",
    "find_nats_server",
    "require_nats",
)

_LAZY = {
    "ClusterConnection": ".connection",
    "ClusterNode": ".node",
    "EventLog": ".event_log",
    "NatsPushConfigStore": ".push_configs",
    "NatsTaskStore": ".task_store",
    "NodeLeases": ".leases",
    "OwnerInbox": ".inbox",
    "SupervisorInbox": ".owner",
}


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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    require_nats()
    return getattr(importlib.import_module(module, __name__), name)
