"""The a2a-actors client: speak A2A 1.0 (and 0.3) to any agent, over httpx and anyio.

``A2AClient`` has one typed coroutine per A2A method, over JSON-RPC, HTTP+JSON or gRPC
(``GRPCTransport`` in ``grpc_transport``, imported only when used: the ``grpc`` extra);
``A2AClient.connect(url)`` discovers the card and picks the interface; ``RemoteAgent`` makes
a remote agent look like a local one (sessions, interrupt, an LLM tool adapter). Agents are
found by name in a registry (``registry``; docs/registry.md), and every call can go through
caller-side middleware (``middleware``; docs/middleware.md). See docs/client.md.
"""

from __future__ import annotations

from a2a_actors.client.auth import (
    APIKey as APIKey,
    AuthHook as AuthHook,
    BearerToken as BearerToken,
    CredentialsAuth as CredentialsAuth,
)
from a2a_actors.client.card_verify import (
    CardKeys as CardKeys,
    CardSignatureError as CardSignatureError,
)
from a2a_actors.client.client import A2AClient as A2AClient, make_transport as make_transport
from a2a_actors.client.discovery import (
    DEFAULT_BINDINGS as DEFAULT_BINDINGS,
    DEFAULT_CARD_CACHE as DEFAULT_CARD_CACHE,
    CardCache as CardCache,
    auto_bindings as auto_bindings,
    discover as discover,
    parse_card as parse_card,
    resolve_interface as resolve_interface,
    select_interface as select_interface,
)
from a2a_actors.client.errors import (
    A2AConnectionError as A2AConnectionError,
    AgentCardError as AgentCardError,
    StreamInterruptedError as StreamInterruptedError,
)
from a2a_actors.client.grpc_binding import GRPCUnavailableError as GRPCUnavailableError
from a2a_actors.client.jsonrpc_transport import JSONRPCTransport as JSONRPCTransport
from a2a_actors.client.legacy_transport import (
    LegacyTransport as LegacyTransport,
    TasksSendTransport as TasksSendTransport,
)
from a2a_actors.client.methods import A2AMethods as A2AMethods, text_message as text_message
from a2a_actors.client.middleware import (
    ClientCall as ClientCall,
    ClientMiddleware as ClientMiddleware,
)
from a2a_actors.client.registry import (
    Registry as Registry,
    RegistryEntry as RegistryEntry,
    StaticRegistry as StaticRegistry,
    UnknownAgentError as UnknownAgentError,
    open_registry as open_registry,
)
from a2a_actors.client.registry_wellknown import WellKnownRegistry as WellKnownRegistry
from a2a_actors.client.remote_agent import (
    AgentTool as AgentTool,
    CallResult as CallResult,
    RemoteAgent as RemoteAgent,
    RemoteStream as RemoteStream,
    Session as Session,
    StreamChunk as StreamChunk,
)
from a2a_actors.client.rest_transport import RESTTransport as RESTTransport
from a2a_actors.client.stream import EventStream as EventStream, TaskView as TaskView
from a2a_actors.client.transport import (
    Timeouts as Timeouts,
    Transport as Transport,
    request_headers as request_headers,
)

__all__ = (
    "DEFAULT_BINDINGS",
    "DEFAULT_CARD_CACHE",
    "A2AClient",
    "A2AConnectionError",
    "A2AMethods",
    "APIKey",
    "AgentCardError",
    "AgentTool",
    "AuthHook",
    "BearerToken",
    "CallResult",
    "CardCache",
    "CardKeys",
    "CardSignatureError",
    "ClientCall",
    "ClientMiddleware",
    "CredentialsAuth",
    "EventStream",
    "GRPCUnavailableError",
    "JSONRPCTransport",
    "LegacyTransport",
    "RESTTransport",
    "Registry",
    "RegistryEntry",
    "RemoteAgent",
    "RemoteStream",
    "Session",
    "StaticRegistry",
    "StreamChunk",
    "StreamInterruptedError",
    "TaskView",
    "TasksSendTransport",
    "Timeouts",
    "Transport",
    "UnknownAgentError",
    "WellKnownRegistry",
    "auto_bindings",
    "discover",
    "make_transport",
    "open_registry",
    "parse_card",
    "request_headers",
    "resolve_interface",
    "select_interface",
    "text_message",
)
