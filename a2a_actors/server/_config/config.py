"""Server configuration: what the transport serves, and how strictly.

A :class:`ServerConfig` is a frozen value: build one, pass it to
:func:`~a2a_actors.server._app.create_app` or
:func:`~a2a_actors.server._serve.serve`, and derive variants with
:meth:`ServerConfig.replace`. Nothing here performs I/O.

:class:`ServedAgent` pairs an agent with the configuration it should be served with, so a
module can publish a complete server profile under one attribute:
``a2a-actors serve examples.conformance:agent`` serves exactly what the module declares,
with no extra command-line flags.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from a2a_actors.protocol._card import AgentProvider, AgentSkill
from a2a_actors.protocol._requests import SendMessageRequest
from a2a_actors.runtime._replay import ResumeOptions
from a2a_actors.server._config.grpc import GrpcOptions
from a2a_actors.server._config.inspector import InspectorOptions
from a2a_actors.server._config.metrics import MetricsOptions
from a2a_actors.server._config.trust import CardSigningOptions, JWTOptions

if TYPE_CHECKING:
    from a2a_actors.push._delivery import Resolver
    from a2a_actors.push._policy import IPAddress

__all__ = (
    "DEFAULT_MAX_BODY_BYTES",
    "ClusterOptions",
    "ExtendedCard",
    "GrpcOptions",
    "InspectorOptions",
    "ServedAgent",
    "ServerConfig",
)

#: Default request-body limit (1 MiB).
DEFAULT_MAX_BODY_BYTES = 1 << 20
#: Default bound on the tasks waiting for a running slot (with ``max_running``).
DEFAULT_MAX_QUEUED = 100
#: Finished tasks a server on the memory store keeps, at most, and for how long (seconds),
#: unless ``supervisor_options`` say otherwise: a server left running for weeks must not
#: grow without bound (about 1.2 KB per small finished task: 12 MB at the cap).
DEFAULT_MEMORY_RETENTION_MAX = 10_000
DEFAULT_MEMORY_RETENTION_TTL = 24 * 3600.0


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtendedCard:
    """What the extended (authenticated) AgentCard adds to the public one.

    Attributes:
        name: Replaces the public card's name when set.
        description: Replaces the public card's description when set.
        skills: Extra skills listed only on the extended card, after the public ones.
    """

    name: str | None = None
    description: str | None = None
    skills: tuple[AgentSkill, ...] = ()


_NODE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterOptions:
    """Cluster mode (docs/cluster.md): this server is one node of a cluster on NATS
    JetStream; every node answers every method for every task. asyncio only; needs the
    ``cluster`` extra (``pip install 'a2a-actors[cluster]'``).

    Attributes:
        urls: NATS URLs (``nats://HOST:PORT``), any of which the node may connect to.
        node_id: This node's id (letters, digits, ``-``, ``_``); None: ``<host>-<pid>``.
        cluster_name: Names the cluster; None: the agent's card name. Nodes serving the
            same name share tasks; other names on the same NATS are isolated.
        lease_s: Lease time of a new cluster: a lost node's tasks are settled within it.
        timeout_s: Seconds any NATS operation may take before the request fails as busy.
        replicas: JetStream replicas of new buckets and streams (1, or 3 with a NATS cluster).
    """

    urls: Sequence[str]
    node_id: str | None = None
    cluster_name: str | None = None
    lease_s: float = 10.0
    timeout_s: float = 2.0
    replicas: int = 1

    def __post_init__(self) -> None:
        if isinstance(self.urls, str) or not self.urls:
            raise ValueError("cluster urls must be a non-empty sequence of nats:// URLs")
        object.__setattr__(self, "urls", tuple(self.urls))  # frozen: a list is copied
        for url in self.urls:
            if not url.startswith(("nats://", "tls://", "ws://", "wss://")):
                raise ValueError(f"not a NATS URL: {url!r} (expected nats://HOST:PORT)")
        if self.node_id is not None and not _NODE_ID.fullmatch(self.node_id):
            raise ValueError(f"node id {self.node_id!r} must be 1-64 letters, digits, '-' or '_'")
        if self.cluster_name is not None and not self.cluster_name.strip():
            raise ValueError("cluster name must not be empty")
        if self.lease_s <= 0 or self.timeout_s <= 0:
            raise ValueError("cluster lease_s and timeout_s must be positive")
        if not 1 <= self.replicas <= 5:
            raise ValueError("cluster replicas must be between 1 and 5")


@dataclass(frozen=True, kw_only=True)
class ServerConfig:
    """Everything the HTTP transport needs to know beyond the agent itself.

    Attributes:
        public_url: The base URL to advertise on the card (``https://agents.example.com``).
            ``None`` derives it from each request's scheme and ``Host`` header.
        rest_prefix: Path of the HTTP+JSON binding (``/rest``).
        max_body_bytes: Largest accepted request body; larger ones get HTTP 413.
        ping_interval: Seconds between ``: ping`` comments on idle SSE streams.
        graceful_timeout: Seconds Hypercorn waits for open connections at shutdown.
        api_keys: API key -> principal name. Non-empty enables API-key auth.
        api_key_header: The header carrying the API key.
        bearer_tokens: Bearer token -> principal name. Non-empty enables Bearer auth.
        extended_card_requires_auth: Whether GetExtendedAgentCard needs credentials.
            ``None`` means "required when any auth is configured".
        streaming: Serve SendStreamingMessage and SubscribeToTask (else -32004).
        push_notifications: Serve the push-config methods (else -32003) and deliver push
            notifications (see docs/push.md).
        allow_private_push: Switch the SSRF policy off, for tests and private deployments:
            webhooks may use ``http`` and target loopback, private and every other
            address (the conformance kit's receiver is ``http://127.0.0.1``).
        push_allow_http: Admit ``http`` webhook URLs (addresses are still checked).
        push_allow: Allow-list hook of the SSRF policy, called as ``allow(host, address)``
            (``address`` is ``None`` for a refused host *name*) before refusing; ``True``
            admits. It cannot waive the scheme or URL syntax rules.
        push_resolver: Async ``(host, port) -> addresses`` used to check webhook hosts at
            create time and at every delivery; ``None``: the system resolver.
        max_push_configs_per_task: Upper bound of push configs per task (else -32602).
        push_workers: Size of the push delivery worker pool (concurrent deliveries).
        push_max_pending: Bound on undelivered push events; past it the oldest are dropped.
        push_connect_timeout: Seconds to connect to a webhook (and to resolve its host at
            create time).
        push_timeout: Total seconds of one delivery attempt (resolution included).
        push_max_attempts: Attempts per event (5xx, 408, 429, timeouts and connection
            errors are retried; anything else is not).
        push_backoff_base: First retry delay in seconds; doubles per attempt, jittered.
        push_backoff_max: Upper bound of one retry delay.
        push_breaker_threshold: Consecutive given-up events that open a config's circuit.
        push_breaker_cooldown: Seconds an open circuit skips a config's events.
        extended_card: The extended card's additions; ``None`` when none is configured.
        declare_extended_card: Whether the public card declares
            ``capabilities.extendedAgentCard``. ``None`` means "when one is configured";
            ``True`` without ``extended_card`` yields -32007 on GetExtendedAgentCard.
        enforce_required_extensions: Refuse SendMessage/SendStreamingMessage with -32008
            unless ``A2A-Extensions`` activates every ``required`` extension of the card:
            ``True`` for every message, or a predicate choosing the requests to check.
        legacy_v0_3: Also serve A2A 0.3 callers (slash method names, root aliases,
            dual-version card).
        provider: The card's ``provider``.
        documentation_url: The card's ``documentationUrl``.
        icon_url: The card's ``iconUrl``.
        skill_dirs: Folders whose ``SKILL.md`` files are published as skills.
        card_max_age: ``Cache-Control: max-age`` of the card, in seconds.
        max_live_tasks: Passed to the Supervisor (capacity: tasks alive at once).
        max_running: Passed to the Supervisor (capacity: handlers running at once).
        max_queued: With ``max_running``: how many tasks may wait for a running slot;
            past it a new task is refused like the other caps (HTTP 429, gRPC
            ``RESOURCE_EXHAUSTED``). None: no bound.
        task_timeout: Seconds a task may run (waiting for input does not count) unless its
            agent sets a ``timeout``; past it the handler is interrupted and the task
            FAILED. None: no limit.
        idempotency_ttl: Seconds an ``Idempotency-Key`` of a send is remembered (its retry
            within them returns the task it created: ``a2a_actors.server._idempotency``).
        supervisor_options: Extra keyword arguments for the Supervisor. Without a ``store``
            (the memory store), ``retention_max`` and ``retention_ttl`` default to
            :data:`DEFAULT_MEMORY_RETENTION_MAX` finished tasks and
            :data:`DEFAULT_MEMORY_RETENTION_TTL` seconds (``None`` for either: no bound).
        middleware: Agent-side middleware wrapped around the served agent's handler,
            outermost first, outside any the agent has (``a2a_actors.runtime.middleware``);
            not applicable to a Supervisor given to ``create_app``.
        cluster: Serve as one node of a cluster (:class:`ClusterOptions`); None: a
            single process, no NATS involved. Used by :func:`~a2a_actors.server._serve`.
        jwt: Accept JWT bearer tokens of an identity provider (:class:`JWTOptions`,
            docs/trust.md); exclusive with ``bearer_tokens``.
        card_signing: Sign the served cards (:class:`CardSigningOptions`, docs/trust.md).
        metrics: Serve Prometheus metrics (:class:`MetricsOptions`,
            docs/observability.md); None: off, at no cost.
        inspect: Serve the inspector page at ``/inspect`` (:class:`InspectorOptions`,
            docs/observability.md, "Inspector"); None: no page and no event feed.
        resume: How much of each streamed task's events is kept so that a cut stream
            resumes with ``Last-Event-ID`` (:class:`~a2a_actors.runtime.ResumeOptions`,
            docs/server.md "Resuming a stream").
        grpc: Also serve the gRPC binding (:class:`GrpcOptions`, docs/grpc.md; asyncio, the
            ``grpc`` extra); None: HTTP only, and nothing imports grpcio.
    """

    public_url: str | None = None
    rest_prefix: str = "/rest"
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    ping_interval: float = 15.0
    graceful_timeout: float = 3.0
    api_keys: Mapping[str, str] = field(default_factory=dict)
    api_key_header: str = "X-API-Key"
    bearer_tokens: Mapping[str, str] = field(default_factory=dict)
    extended_card_requires_auth: bool | None = None
    streaming: bool = True
    push_notifications: bool = False
    allow_private_push: bool = False
    push_allow_http: bool = False
    push_allow: Callable[[str, IPAddress | None], bool] | None = None
    push_resolver: Resolver | None = None
    max_push_configs_per_task: int = 32
    push_workers: int = 8
    push_max_pending: int = 10_000
    push_connect_timeout: float = 5.0
    push_timeout: float = 15.0
    push_max_attempts: int = 5
    push_backoff_base: float = 0.5
    push_backoff_max: float = 30.0
    push_breaker_threshold: int = 5
    push_breaker_cooldown: float = 60.0
    extended_card: ExtendedCard | None = None
    declare_extended_card: bool | None = None
    enforce_required_extensions: bool | Callable[[SendMessageRequest], bool] = False
    legacy_v0_3: bool = True
    provider: AgentProvider | None = None
    documentation_url: str | None = None
    icon_url: str | None = None
    skill_dirs: tuple[Path, ...] = ()
    card_max_age: int = 300
    max_live_tasks: int | None = None
    max_running: int | None = None
    max_queued: int | None = DEFAULT_MAX_QUEUED
    task_timeout: float | None = None
    idempotency_ttl: float = 24 * 3600.0
    supervisor_options: Mapping[str, Any] = field(default_factory=dict)
    middleware: tuple[Any, ...] = ()
    cluster: ClusterOptions | None = None
    jwt: JWTOptions | None = None
    card_signing: CardSigningOptions | None = None
    metrics: MetricsOptions | None = None
    inspect: InspectorOptions | None = None
    resume: ResumeOptions = field(default_factory=ResumeOptions)
    grpc: GrpcOptions | None = None

    def __post_init__(self) -> None:
        if self.jwt is not None and self.bearer_tokens:
            raise ValueError("jwt and bearer_tokens both read Authorization: Bearer; choose one")
        if self.max_body_bytes <= 0:
            raise ValueError("max_body_bytes must be positive")
        if self.max_queued is not None and self.max_queued < 1:
            raise ValueError("max_queued must be at least 1 (or None)")
        if not self.idempotency_ttl > 0:
            raise ValueError("idempotency_ttl must be a positive number of seconds")
        if self.task_timeout is not None and not self.task_timeout > 0:
            raise ValueError("task_timeout must be a positive number of seconds (or None)")
        if self.ping_interval <= 0:
            raise ValueError("ping_interval must be positive")
        if not self.rest_prefix.startswith("/") or self.rest_prefix == "/":
            raise ValueError("rest_prefix must start with '/' and not be the root")
        if self.public_url is not None and not self.public_url.startswith(("http://", "https://")):
            raise ValueError("public_url must be an http(s) URL")
        if min(self.max_push_configs_per_task, self.push_workers, self.push_max_pending) < 1:
            raise ValueError(
                "max_push_configs_per_task, push_workers and push_max_pending must be positive"
            )
        if self.push_max_attempts < 1 or self.push_breaker_threshold < 1:
            raise ValueError("push_max_attempts and push_breaker_threshold must be at least 1")
        if min(self.push_connect_timeout, self.push_timeout) <= 0:
            raise ValueError("push timeouts must be positive")
        if min(self.push_backoff_base, self.push_backoff_max, self.push_breaker_cooldown) < 0:
            raise ValueError("push backoff and cooldown must not be negative")

    @property
    def auth_enabled(self) -> bool:
        """Whether any credential is configured (then every route but the card needs one)."""
        return bool(self.api_keys or self.bearer_tokens or self.jwt)

    @property
    def extended_card_declared(self) -> bool:
        """Whether the public card declares ``capabilities.extendedAgentCard``."""
        if self.declare_extended_card is None:
            return self.extended_card is not None
        return self.declare_extended_card

    @property
    def extended_card_needs_auth(self) -> bool:
        """Whether GetExtendedAgentCard requires credentials."""
        if self.extended_card_requires_auth is None:
            return self.auth_enabled
        return self.extended_card_requires_auth

    def replace(self, **changes: Any) -> ServerConfig:
        """A copy with ``changes`` applied (validated like the original)."""
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True, slots=True)
class ServedAgent:
    """An agent together with the server configuration it should be served with.

    ``agent`` is anything :func:`a2a_actors.runtime.as_agent` accepts (an ``Agent``, an
    async function of a ``TaskContext``, or an object with ``handle``).
    """

    agent: object
    config: ServerConfig = field(default_factory=ServerConfig)
