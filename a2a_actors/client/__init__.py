"""The a2a-actors client: speak A2A 1.0 (and 0.3) to any agent, over httpx and anyio.

``A2AClient`` has one typed coroutine per A2A method, over JSON-RPC, HTTP+JSON or gRPC
(``GRPCTransport`` in ``grpc_transport``, imported only when used: the ``grpc`` extra);
``A2AClient.connect(url)`` discovers the card and picks the interface; ``RemoteAgent`` makes
a remote agent look like a local one (sessions, interrupt, an LLM tool adapter). Agents are
found by name in a registry (``registry``; docs/registry.md), and every call can go through
caller-side middleware (``middleware``; docs/middleware.md). See docs/client.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from a2a_actors.client._auth import (
    APIKey as APIKey,
    BearerToken as BearerToken,
)
from a2a_actors.client._card_verify import (
    CardKeys as CardKeys,
    CardSignatureError as CardSignatureError,
)
from a2a_actors.client._client import A2AClient as A2AClient
from a2a_actors.client._discovery import (
    DEFAULT_BINDINGS as DEFAULT_BINDINGS,
    DEFAULT_CARD_CACHE as DEFAULT_CARD_CACHE,
    CardCache as CardCache,
    auto_bindings as auto_bindings,
    discover as discover,
    resolve_interface as resolve_interface,
    select_interface as select_interface,
)
from a2a_actors.client._errors import (
    A2AConnectionError as A2AConnectionError,
    AgentCardError as AgentCardError,
    StreamInterruptedError as StreamInterruptedError,
)
from a2a_actors.client._methods import A2AMethods as A2AMethods, text_message as text_message
from a2a_actors.client._registry.entries import (
    RegistryEntry as RegistryEntry,
    UnknownAgentError as UnknownAgentError,
)
from a2a_actors.client._registry.registry import (
    Registry as Registry,
    StaticRegistry as StaticRegistry,
    open_registry as open_registry,
)
from a2a_actors.client._registry.wellknown import WellKnownRegistry as WellKnownRegistry
from a2a_actors.client._remote_agent import (
    AgentTool as AgentTool,
    CallResult as CallResult,
    RemoteAgent as RemoteAgent,
    StreamChunk as StreamChunk,
)
from a2a_actors.client._stream import EventStream as EventStream
from a2a_actors.client._transports.grpc_binding import GRPCUnavailableError as GRPCUnavailableError
from a2a_actors.client._transports.jsonrpc import JSONRPCTransport as JSONRPCTransport
from a2a_actors.client._transports.legacy import (
    LegacyTransport as LegacyTransport,
    TasksSendTransport as TasksSendTransport,
)
from a2a_actors.client._transports.rest import RESTTransport as RESTTransport
from a2a_actors.client._transports.transport import (
    Timeouts as Timeouts,
    Transport as Transport,
    request_headers as request_headers,
)
from a2a_actors.client.middleware import (
    ClientCall as ClientCall,
    ClientMiddleware as ClientMiddleware,
)

if TYPE_CHECKING:
    from a2a_actors.client._registry.nats import NatsRegistry as NatsRegistry

__all__ = (
    "DEFAULT_BINDINGS",
    "DEFAULT_CARD_CACHE",
    "A2AClient",
    "A2AConnectionError",
    "A2AMethods",
    "APIKey",
    "AgentCardError",
    "AgentTool",
    "BearerToken",
    "CallResult",
    "CardCache",
    "CardKeys",
    "CardSignatureError",
    "ClientCall",
    "ClientMiddleware",
    "EventStream",
    "GRPCUnavailableError",
    "JSONRPCTransport",
    "LegacyTransport",
    "NatsRegistry",
    "RESTTransport",
    "Registry",
    "RegistryEntry",
    "RemoteAgent",
    "StaticRegistry",
    "StreamChunk",
    "StreamInterruptedError",
    "TasksSendTransport",
    "Timeouts",
    "Transport",
    "UnknownAgentError",
    "WellKnownRegistry",
    "auto_bindings",
    "discover",
    "open_registry",
    "request_headers",
    "resolve_interface",
    "select_interface",
    "text_message",
)


def __getattr__(name: str) -> object:
    # NatsRegistry needs nats-py (the cluster extra): imported when first asked for.
    if name == "NatsRegistry":
        from a2a_actors.client._registry.nats import NatsRegistry

        return NatsRegistry
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
