"""The A2A 1.0 AgentCard: interfaces, capabilities, extensions, skills, security, signatures.

Security schemes and OAuth flows are proto ``oneof`` wrappers (``{"apiKeySecurityScheme":
{...}}``), validated to hold exactly one member. Nothing in this module performs I/O.
"""

from __future__ import annotations

from a2a_actors.protocol._models import JSONObject, WireStruct, _exactly_one

__all__ = (
    "APIKeySecurityScheme",
    "AgentCapabilities",
    "AgentCard",
    "AgentCardSignature",
    "AgentExtension",
    "AgentInterface",
    "AgentProvider",
    "AgentSkill",
    "AuthorizationCodeOAuthFlow",
    "ClientCredentialsOAuthFlow",
    "DeviceCodeOAuthFlow",
    "HTTPAuthSecurityScheme",
    "ImplicitOAuthFlow",
    "MutualTlsSecurityScheme",
    "OAuth2SecurityScheme",
    "OAuthFlows",
    "OpenIdConnectSecurityScheme",
    "PasswordOAuthFlow",
    "SecurityRequirement",
    "SecurityScheme",
    "StringList",
)

#: Binding names of :attr:`AgentInterface.protocol_binding`.
JSONRPC = "JSONRPC"
HTTP_JSON = "HTTP+JSON"
GRPC = "GRPC"


class AgentInterface(WireStruct, frozen=True):
    """One way to reach the agent: URL, binding, protocol version and optional tenant."""

    url: str
    protocol_binding: str
    protocol_version: str
    tenant: str = ""


class AgentProvider(WireStruct, frozen=True):
    """The organisation behind the agent."""

    organization: str
    url: str


class AgentExtension(WireStruct, frozen=True):
    """An extension the agent supports; ``required`` ones must be activated by clients."""

    uri: str = ""
    description: str = ""
    required: bool = False
    params: JSONObject | None = None


class AgentCapabilities(WireStruct, frozen=True):
    """Optional features. ``None`` (absent) and ``False`` both mean unsupported."""

    streaming: bool | None = None
    push_notifications: bool | None = None
    extensions: tuple[AgentExtension, ...] = ()
    extended_agent_card: bool | None = None


class StringList(WireStruct, frozen=True):
    """A list of scopes (``{"list": [...]}``); ``{}`` is an empty list."""

    list: tuple[str, ...] = ()


class SecurityRequirement(WireStruct, frozen=True):
    """Schemes that apply together (AND); a list of requirements are alternatives (OR)."""

    schemes: dict[str, StringList] = {}


class APIKeySecurityScheme(WireStruct, frozen=True):
    """An API key sent in a header, query parameter or cookie (``location``)."""

    location: str
    name: str
    description: str = ""


class HTTPAuthSecurityScheme(WireStruct, frozen=True):
    """HTTP authentication, e.g. ``Bearer``."""

    scheme: str
    description: str = ""
    bearer_format: str = ""


class AuthorizationCodeOAuthFlow(WireStruct, frozen=True):
    """OAuth 2.0 authorization-code flow."""

    authorization_url: str
    token_url: str
    scopes: dict[str, str]
    refresh_url: str = ""
    pkce_required: bool = False


class ClientCredentialsOAuthFlow(WireStruct, frozen=True):
    """OAuth 2.0 client-credentials flow."""

    token_url: str
    scopes: dict[str, str]
    refresh_url: str = ""


class DeviceCodeOAuthFlow(WireStruct, frozen=True):
    """OAuth 2.0 device-code flow (RFC 8628)."""

    device_authorization_url: str
    token_url: str
    scopes: dict[str, str]
    refresh_url: str = ""


class ImplicitOAuthFlow(WireStruct, frozen=True):
    """OAuth 2.0 implicit flow (deprecated)."""

    authorization_url: str = ""
    refresh_url: str = ""
    scopes: dict[str, str] = {}


class PasswordOAuthFlow(WireStruct, frozen=True):
    """OAuth 2.0 resource-owner password flow (deprecated)."""

    token_url: str = ""
    refresh_url: str = ""
    scopes: dict[str, str] = {}


class OAuthFlows(WireStruct, frozen=True):
    """Exactly one OAuth flow."""

    authorization_code: AuthorizationCodeOAuthFlow | None = None
    client_credentials: ClientCredentialsOAuthFlow | None = None
    implicit: ImplicitOAuthFlow | None = None
    password: PasswordOAuthFlow | None = None
    device_code: DeviceCodeOAuthFlow | None = None

    def __post_init__(self) -> None:
        _exactly_one(
            self,
            ("authorization_code", "client_credentials", "implicit", "password", "device_code"),
            "OAuthFlows",
        )


class OAuth2SecurityScheme(WireStruct, frozen=True):
    """OAuth 2.0 with one flow and optional RFC 8414 metadata URL."""

    flows: OAuthFlows
    description: str = ""
    oauth2_metadata_url: str = ""


class OpenIdConnectSecurityScheme(WireStruct, frozen=True):
    """OpenID Connect discovery."""

    open_id_connect_url: str
    description: str = ""


class MutualTlsSecurityScheme(WireStruct, frozen=True):
    """Mutual TLS."""

    description: str = ""


class SecurityScheme(WireStruct, frozen=True):
    """Exactly one of the five scheme wrappers."""

    api_key_security_scheme: APIKeySecurityScheme | None = None
    http_auth_security_scheme: HTTPAuthSecurityScheme | None = None
    oauth2_security_scheme: OAuth2SecurityScheme | None = None
    open_id_connect_security_scheme: OpenIdConnectSecurityScheme | None = None
    mtls_security_scheme: MutualTlsSecurityScheme | None = None

    def __post_init__(self) -> None:
        _exactly_one(
            self,
            (
                "api_key_security_scheme",
                "http_auth_security_scheme",
                "oauth2_security_scheme",
                "open_id_connect_security_scheme",
                "mtls_security_scheme",
            ),
            "SecurityScheme",
        )


class AgentSkill(WireStruct, frozen=True):
    """A capability the agent advertises."""

    id: str
    name: str
    description: str
    tags: tuple[str, ...]
    examples: tuple[str, ...] = ()
    input_modes: tuple[str, ...] = ()
    output_modes: tuple[str, ...] = ()
    security_requirements: tuple[SecurityRequirement, ...] = ()


class AgentCardSignature(WireStruct, frozen=True):
    """A JWS signature over the canonicalised card (RFC 7515 / RFC 8785)."""

    protected: str
    signature: str
    header: JSONObject | None = None


class AgentCard(WireStruct, frozen=True):
    """The self-description an agent serves at ``/.well-known/agent-card.json``."""

    name: str
    description: str
    supported_interfaces: tuple[AgentInterface, ...]
    version: str
    capabilities: AgentCapabilities
    default_input_modes: tuple[str, ...]
    default_output_modes: tuple[str, ...]
    skills: tuple[AgentSkill, ...]
    provider: AgentProvider | None = None
    documentation_url: str | None = None
    security_schemes: dict[str, SecurityScheme] = {}
    security_requirements: tuple[SecurityRequirement, ...] = ()
    signatures: tuple[AgentCardSignature, ...] = ()
    icon_url: str | None = None
