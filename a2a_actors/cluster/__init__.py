"""Cluster mode: many server processes share every task, on NATS JetStream.

Issue 18 (see ``docs/cluster.md`` for what is built and what is planned): the pieces a
node is made of, each usable and tested on its own against a real nats-server, and their
wiring into a served node —

* :class:`NatsServer` (:mod:`a2a_actors.cluster._nats_server`): run a nats-server with JetStream
  (tests, local runs, ``serve --workers``);
* :class:`ClusterConnection` (:mod:`a2a_actors.cluster._connection`): a node's NATS connection,
  every operation bounded, failures as :class:`ClusterUnavailableError`;
* :class:`NatsTaskStore` (:mod:`a2a_actors.cluster._task_store`): the TaskStore on JetStream KV,
  with each task's holder (node and lease epoch) for fencing;
* :class:`NatsPushConfigStore` (:mod:`a2a_actors.cluster._push_configs`): push configs on JetStream
  KV;
* :class:`EventLog` (:mod:`a2a_actors.cluster._event_log`): every task's events, replayable by
  version;
* :class:`~a2a_actors.cluster._offload.Offloader` (:mod:`a2a_actors.cluster._offload`): large task
  content in JetStream's Object Store, so tasks, events and inbox messages of any size fit NATS;
* :class:`OwnerInbox` (:mod:`a2a_actors.cluster._inbox`): cancel and input addressed to a task's
  owner, and :class:`SupervisorInbox` (:mod:`a2a_actors.cluster._owner`): the owner's side, over its
  Supervisor;
* :class:`NodeLeases` (:mod:`a2a_actors.cluster._leases`): node liveness and fencing;
* :func:`~a2a_actors.cluster._settling.settle_lost_node` (:mod:`a2a_actors.cluster._settling`): a
  lost node's tasks failed or released for resumption, once;
* :func:`~a2a_actors.cluster._retention.evict` (:mod:`a2a_actors.cluster._retention`): retention
  passes over the cluster;
* :class:`ClusterNode` (:mod:`a2a_actors.cluster._node`): one node's parts composed, settling lost
  nodes;
* :mod:`a2a_actors.cluster._member`: a served node's wiring into the runtime's environment seam
  (what ``serve`` with ``ServerConfig.cluster`` uses: ``join``, ``ClusterMember``), with
  :mod:`a2a_actors.cluster._publisher`, the owner's events on their way to the event log.

Importing this package does not import nats-py; its names are loaded on first use (and
need the ``cluster`` extra: ``pip install 'a2a-actors[cluster]'``), except the errors,
names and the server process, which do not need nats-py.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from a2a_actors.cluster._errors import (
    ClusterExtraMissingError as ClusterExtraMissingError,
    ClusterUnavailableError as ClusterUnavailableError,
    LeaseLostError as LeaseLostError,
    OwnerUnreachableError as OwnerUnreachableError,
    require_nats,
)
from a2a_actors.cluster._names import ClusterNames as ClusterNames, cluster_token as cluster_token
from a2a_actors.cluster._nats_server import (
    NatsServer as NatsServer,
    find_nats_server as find_nats_server,
)

if TYPE_CHECKING:
    from a2a_actors.cluster._node import ClusterNode as ClusterNode
    from a2a_actors.cluster._owner import SupervisorInbox as SupervisorInbox
    from a2a_actors.cluster._push_configs import NatsPushConfigStore as NatsPushConfigStore
    from a2a_actors.cluster._task_store import NatsTaskStore as NatsTaskStore

__all__ = (
    "ClusterExtraMissingError",
    "ClusterNode",
    "ClusterNames",
    "ClusterUnavailableError",
    "LeaseLostError",
    "NatsPushConfigStore",
    "NatsServer",
    "NatsTaskStore",
    "OwnerUnreachableError",
    "SupervisorInbox",
    "cluster_token",
    "find_nats_server",
)

_LAZY = {
    "ClusterNode": "a2a_actors.cluster._node",
    "NatsPushConfigStore": "a2a_actors.cluster._push_configs",
    "NatsTaskStore": "a2a_actors.cluster._task_store",
    "SupervisorInbox": "a2a_actors.cluster._owner",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    require_nats()
    return getattr(importlib.import_module(module), name)
