"""The public API, pinned: the modules a user may import and exactly what each exports.

Everything else lives in private modules (a ``_`` in its dotted path) and may change
without notice. As anyio's tests do, this pins the surface: adding, renaming or removing a
public name fails here until the list below says so, on purpose. Each public module must
also export every public class and function it defines (a name defined in a public module
is public), in a tuple, with no duplicates and nothing it lacks.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import pytest

import a2a_actors
import orchestrator

SURFACE: dict[str, tuple[str, ...]] = {
    "a2a_actors": (
        "A2AClient",
        "A2AError",
        "Agent",
        "AgentCard",
        "AgentSkill",
        "Artifact",
        "InProcessClient",
        "InvalidParamsError",
        "Message",
        "Part",
        "RemoteAgent",
        "Role",
        "ServedAgent",
        "ServerBusyError",
        "ServerConfig",
        "StreamResponse",
        "Supervisor",
        "Task",
        "TaskContext",
        "TaskNotCancelableError",
        "TaskNotFoundError",
        "TaskState",
        "UnsupportedOperationError",
        "__version__",
        "agent",
        "create_app",
        "serve",
    ),
    "a2a_actors.cli": (
        "BROKEN_PIPE",
        "SUBCOMMANDS",
        "build_parser",
        "main",
    ),
    "a2a_actors.client": (
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
        "DEFAULT_BINDINGS",
        "DEFAULT_CARD_CACHE",
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
    ),
    "a2a_actors.client.middleware": (
        "ClientCall",
        "ClientMiddleware",
        "ClientNext",
        "IDEMPOTENT_READS",
        "MiddlewareTransport",
        "check_middleware",
        "log_calls",
        "observed",
        "retry_reads",
        "retry_sends",
        "run_chain",
    ),
    "a2a_actors.cluster": (
        "ClusterExtraMissingError",
        "ClusterNames",
        "ClusterNode",
        "ClusterUnavailableError",
        "LeaseLostError",
        "NatsPushConfigStore",
        "NatsServer",
        "NatsTaskStore",
        "OwnerUnreachableError",
        "SupervisorInbox",
        "cluster_token",
        "find_nats_server",
    ),
    "a2a_actors.frameworks": (),
    "a2a_actors.frameworks.a2a_sdk": (
        "CANCEL_TIMEOUT",
        "as_agent",
    ),
    "a2a_actors.frameworks.agentscope": (
        "as_agent",
        "remote_tool",
    ),
    "a2a_actors.frameworks.langgraph": (
        "as_agent",
        "remote_tool",
    ),
    "a2a_actors.frameworks.openai_agents": (
        "TOOL_APPROVAL",
        "as_agent",
        "remote_tool",
    ),
    "a2a_actors.frameworks.pydantic_ai": (
        "as_agent",
        "remote_tool",
    ),
    "a2a_actors.loadtest": (),
    "a2a_actors.protocol": (
        "A2AError",
        "APIKeySecurityScheme",
        "AgentCapabilities",
        "AgentCard",
        "AgentCardSignature",
        "AgentExtension",
        "AgentInterface",
        "AgentProvider",
        "AgentSkill",
        "Artifact",
        "AuthenticationInfo",
        "AuthorizationCodeOAuthFlow",
        "CancelTaskRequest",
        "ClientCredentialsOAuthFlow",
        "ContentTypeNotSupportedError",
        "DeleteTaskPushNotificationConfigRequest",
        "DeviceCodeOAuthFlow",
        "ExtendedAgentCardNotConfiguredError",
        "ExtensionSupportRequiredError",
        "GetExtendedAgentCardRequest",
        "GetTaskPushNotificationConfigRequest",
        "GetTaskRequest",
        "HTTPAuthSecurityScheme",
        "INTERRUPTED_STATES",
        "IllegalTransitionError",
        "ImplicitOAuthFlow",
        "InternalError",
        "InvalidAgentResponseError",
        "InvalidParamsError",
        "InvalidRequestError",
        "JSONRPCError",
        "ListTaskPushNotificationConfigsRequest",
        "ListTaskPushNotificationConfigsResponse",
        "ListTasksRequest",
        "ListTasksResponse",
        "Message",
        "MethodNotAllowedError",
        "MethodNotFoundError",
        "MutualTlsSecurityScheme",
        "OAuth2SecurityScheme",
        "OAuthFlows",
        "OpenIdConnectSecurityScheme",
        "ParseError",
        "Part",
        "PasswordOAuthFlow",
        "PayloadTooLargeError",
        "PushNotificationNotSupportedError",
        "Role",
        "SecurityRequirement",
        "SecurityScheme",
        "SendMessageConfiguration",
        "SendMessageRequest",
        "SendMessageResponse",
        "ServerBusyError",
        "StreamResponse",
        "StringList",
        "SubscribeToTaskRequest",
        "TERMINAL_STATES",
        "Task",
        "TaskArtifactUpdateEvent",
        "TaskMachine",
        "TaskNotCancelableError",
        "TaskNotFoundError",
        "TaskPushNotificationConfig",
        "TaskState",
        "TaskStatus",
        "TaskStatusUpdateEvent",
        "UnauthenticatedError",
        "UnsupportedOperationError",
        "VersionNotSupportedError",
    ),
    "a2a_actors.protocol.codec": (
        "convert",
        "decode",
        "encode",
        "error_path",
        "parse",
        "to_builtins",
    ),
    "a2a_actors.push": (
        "PushDelivery",
        "PushPolicy",
        "UnsafeURLError",
    ),
    "a2a_actors.runtime": (
        "Agent",
        "AgentSpec",
        "Delegator",
        "EventObserver",
        "InProcessClient",
        "ResumeOptions",
        "SubscriberDropped",
        "Subscription",
        "Supervisor",
        "SupervisorStatistics",
        "TaskContext",
        "TaskRunner",
        "agent",
        "as_agent",
    ),
    "a2a_actors.runtime.middleware": (
        "AgentMiddleware",
        "AgentNext",
        "HandlerChain",
        "check_middleware",
        "innermost",
        "log_calls",
        "watched",
    ),
    "a2a_actors.server": (
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
    ),
    "a2a_actors.stores": (
        "MemoryTaskStore",
        "RecoverableStore",
        "RecoveryReport",
        "SQLitePushConfigStore",
        "SQLiteStoreStatistics",
        "SQLiteTaskStore",
        "SchemaTooNewError",
        "StoreClosedError",
        "StoreCorruptError",
        "StoreError",
        "StoredTask",
        "TaskPage",
        "TaskQuery",
        "TaskStore",
    ),
    "orchestrator": (
        "CORRELATION_URI",
        "ChildRecord",
        "ChildStream",
        "Correlation",
        "CycleError",
        "DelegationError",
        "DelegationResult",
        "DepthLimitError",
        "HopNode",
        "HopRecord",
        "InputRequired",
        "Orchestrator",
        "child_correlation",
        "delegate",
        "fan_out",
        "fetch_tree",
        "from_metadata",
        "join_texts",
        "orchestrated",
        "render_tree",
        "route",
        "sequence",
        "serve",
        "stream_delegate",
        "supervisor_tree",
        "traceparent",
    ),
    "orchestrator.serving": ("serve",),
}


def public_modules() -> list[str]:
    """Every importable module of the two packages with no ``_`` part in its name."""
    names: list[str] = []
    for package in (a2a_actors, orchestrator):
        names.append(package.__name__)
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if not any(part.startswith("_") for part in info.name.split(".")[1:]):
                names.append(info.name)
    return sorted(names)


def test_the_public_modules_are_the_pinned_ones() -> None:
    assert public_modules() == sorted(SURFACE)


@pytest.mark.parametrize("name", sorted(SURFACE))
def test_each_public_module_exports_exactly_its_pinned_names(name: str) -> None:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert isinstance(exported, tuple), f"{name}.__all__ must be a tuple"
    assert len(set(exported)) == len(exported), f"{name}.__all__ has duplicates"
    assert tuple(sorted(exported)) == SURFACE[name]
    missing = [n for n in exported if not hasattr(module, n)]
    assert missing == [], f"{name}.__all__ lists undefined names {missing}"
    assert unlisted_definitions(module) == []


def unlisted_definitions(module: ModuleType) -> list[str]:
    """Public classes and functions ``module`` defines but does not export."""
    exported = set(getattr(module, "__all__", ()))
    return sorted(
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (inspect.isclass(value) or inspect.isfunction(value))
        and getattr(value, "__module__", None) == module.__name__
        and name not in exported
    )


def test_the_top_level_names_the_essentials() -> None:
    for name in ("agent", "Agent", "TaskContext", "Supervisor", "serve", "A2AClient"):
        assert name in a2a_actors.__all__
