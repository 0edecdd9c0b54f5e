"""The HTTP transport: an ASGI core for every A2A request, in front of a Quart (asyncio) or
QuartTrio (trio) app, served by Hypercorn.

``create_app(agent)`` builds the app (JSON-RPC at ``/``, HTTP+JSON under ``/rest``, the
AgentCard at ``/.well-known/agent-card.json``); ``serve(agent)`` runs it on Hypercorn and
reports its base URL through ``task_status``. See docs/server.md and docs/architecture.md.
"""

from __future__ import annotations

from a2a_actors.runtime._replay import ResumeOptions as ResumeOptions
from a2a_actors.server._app import create_app as create_app, service_of as service_of
from a2a_actors.server._cli.workers import serve_workers as serve_workers
from a2a_actors.server._config.config import (
    ClusterOptions as ClusterOptions,
    ExtendedCard as ExtendedCard,
    ServedAgent as ServedAgent,
    ServerConfig as ServerConfig,
)
from a2a_actors.server._config.grpc import GrpcOptions as GrpcOptions
from a2a_actors.server._config.inspector import InspectorOptions as InspectorOptions
from a2a_actors.server._config.metrics import MetricsOptions as MetricsOptions
from a2a_actors.server._config.trust import (
    CardSigningOptions as CardSigningOptions,
    JWTOptions as JWTOptions,
)
from a2a_actors.server._mounting import lifespan as lifespan
from a2a_actors.server._push_configs import (
    MemoryPushConfigStore as MemoryPushConfigStore,
    PushConfigs as PushConfigs,
    PushConfigStore as PushConfigStore,
)
from a2a_actors.server._serve import serve as serve
from a2a_actors.server._skills import load_skills as load_skills

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
    "PushConfigs",
    "ResumeOptions",
    "ServedAgent",
    "ServerConfig",
    "create_app",
    "lifespan",
    "load_skills",
    "serve",
    "serve_workers",
    "service_of",
)
