"""The sans-I/O core of a2a-actors: A2A 1.0 wire models, JSON-RPC, errors, lifecycle, SSE.

Nothing in this package performs I/O or imports an event loop; a test enforces it.
"""

from __future__ import annotations

from .card import (
    AgentCapabilities as AgentCapabilities,
    AgentCard as AgentCard,
    AgentCardSignature as AgentCardSignature,
    AgentExtension as AgentExtension,
    AgentInterface as AgentInterface,
    AgentProvider as AgentProvider,
    AgentSkill as AgentSkill,
    APIKeySecurityScheme as APIKeySecurityScheme,
    AuthorizationCodeOAuthFlow as AuthorizationCodeOAuthFlow,
    ClientCredentialsOAuthFlow as ClientCredentialsOAuthFlow,
    DeviceCodeOAuthFlow as DeviceCodeOAuthFlow,
    HTTPAuthSecurityScheme as HTTPAuthSecurityScheme,
    ImplicitOAuthFlow as ImplicitOAuthFlow,
    MutualTlsSecurityScheme as MutualTlsSecurityScheme,
    OAuth2SecurityScheme as OAuth2SecurityScheme,
    OAuthFlows as OAuthFlows,
    OpenIdConnectSecurityScheme as OpenIdConnectSecurityScheme,
    PasswordOAuthFlow as PasswordOAuthFlow,
    SecurityRequirement as SecurityRequirement,
    SecurityScheme as SecurityScheme,
    StringList as StringList,
)
from .errors import (
    A2AError as A2AError,
    ContentTypeNotSupportedError as ContentTypeNotSupportedError,
    ExtendedAgentCardNotConfiguredError as ExtendedAgentCardNotConfiguredError,
    ExtensionSupportRequiredError as ExtensionSupportRequiredError,
    IllegalTransitionError as IllegalTransitionError,
    InternalError as InternalError,
    InvalidAgentResponseError as InvalidAgentResponseError,
    InvalidParamsError as InvalidParamsError,
    InvalidRequestError as InvalidRequestError,
    JSONRPCError as JSONRPCError,
    MethodNotFoundError as MethodNotFoundError,
    ParseError as ParseError,
    PushNotificationNotSupportedError as PushNotificationNotSupportedError,
    ServerBusyError as ServerBusyError,
    TaskNotCancelableError as TaskNotCancelableError,
    TaskNotFoundError as TaskNotFoundError,
    UnauthenticatedError as UnauthenticatedError,
    UnsupportedOperationError as UnsupportedOperationError,
    VersionNotSupportedError as VersionNotSupportedError,
)
from .models import (
    Artifact as Artifact,
    Message as Message,
    Part as Part,
    Role as Role,
    StreamResponse as StreamResponse,
    Task as Task,
    TaskArtifactUpdateEvent as TaskArtifactUpdateEvent,
    TaskState as TaskState,
    TaskStatus as TaskStatus,
    TaskStatusUpdateEvent as TaskStatusUpdateEvent,
)
from .requests import (
    AuthenticationInfo as AuthenticationInfo,
    CancelTaskRequest as CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest as DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest as GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest as GetTaskPushNotificationConfigRequest,
    GetTaskRequest as GetTaskRequest,
    ListTaskPushNotificationConfigsRequest as ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse as ListTaskPushNotificationConfigsResponse,
    ListTasksRequest as ListTasksRequest,
    ListTasksResponse as ListTasksResponse,
    SendMessageConfiguration as SendMessageConfiguration,
    SendMessageRequest as SendMessageRequest,
    SendMessageResponse as SendMessageResponse,
    SubscribeToTaskRequest as SubscribeToTaskRequest,
    TaskPushNotificationConfig as TaskPushNotificationConfig,
)
from .state import (
    INTERRUPTED_STATES as INTERRUPTED_STATES,
    TERMINAL_STATES as TERMINAL_STATES,
    TaskMachine as TaskMachine,
)
