"""The HTTP transport: an ASGI core for every A2A request, in front of a Quart (asyncio) or
QuartTrio (trio) app, served by Hypercorn.

``create_app(agent)`` builds the app (JSON-RPC at ``/``, HTTP+JSON under ``/rest``, the
AgentCard at ``/.well-known/agent-card.json``); ``serve(agent)`` runs it on Hypercorn and
reports its base URL through ``task_status``. See docs/server.md and docs/architecture.md.
"""

from __future__ import annotations

from a2a_actors.runtime.replay import ResumeOptions as ResumeOptions
from a2a_actors.server.app import create_app as create_app, service_of as service_of
from a2a_actors.server.config import (
    ClusterOptions as ClusterOptions,
    ExtendedCard as ExtendedCard,
    ServedAgent as ServedAgent,
    ServerConfig as ServerConfig,
)
from a2a_actors.server.grpc_options import GrpcOptions as GrpcOptions
from a2a_actors.server.inspector.options import InspectorOptions as InspectorOptions
from a2a_actors.server.metrics_options import MetricsOptions as MetricsOptions
from a2a_actors.server.mounting import lifespan as lifespan
from a2a_actors.server.push_configs import (
    MemoryPushConfigStore as MemoryPushConfigStore,
    PushConfigStore as PushConfigStore,
)
from a2a_actors.server.serve import serve as serve
from a2a_actors.server.skills import load_skills as load_skills
from a2a_actors.server.trust_options import (
    CardSigningOptions as CardSigningOptions,
    JWTOptions as JWTOptions,
)

__all__ = (
    "CardSigningOptions",
    "ClusterOptions",
    "ExtendedCard",
    "GrpcOptions",
    "InspectorOptions",
    "JWTOptions",
    "MemoryPushConfigStore",
    "MetricsOptions",
    "PushConfigStore",
    "ResumeOptions",
    "ServedAgent",
    "ServerConfig",
    "create_app",
    "lifespan",
    "load_skills",
    "serve",
    "service_of",
)
