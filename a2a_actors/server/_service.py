"""The served agent: runtime, card, auth, push configs and open streams of one app.

An :class:`A2AService` is created by :func:`~a2a_actors.server._app.create_app` and lives as
long as the app; the ASGI core (:mod:`a2a_actors.server._http.asgi`) and the Quart routes reach it
directly. :meth:`A2AService.run` is the app's serving lifetime: the lifespan starts it as a
background task and cancels it at shutdown. In one task it owns the Supervisor (unless the caller
passed a running one), push delivery, and the task group of the streams' helpers
(:class:`~a2a_actors.server._http.sse.StreamHub`), so no cancel scope ever spans the lifespan's own
awaits.

Push (``ServerConfig.push_notifications``): one :class:`~a2a_actors.push.PushPolicy` is
used both when a config is created (:class:`PushConfigs`) and before every delivery. The
:class:`~a2a_actors.push._delivery.PushDelivery` observes the Supervisor the service builds
and runs its workers for the server's lifetime (undelivered events are dropped at
shutdown); the task store is wrapped so that a deleted task takes its push configs along.
A caller-owned Supervisor gets neither: its owner wires delivery (see docs/push.md).

Observability (docs/observability.md): the app hands the service its metrics (when
``ServerConfig.metrics`` is set) and how to make call spans
(:class:`~a2a_actors.server._observability.spans.CallSpans`); when tracing is on
(:func:`a2a_actors.runtime._tracing.from_environment`, decided at the first start) or there
are metrics, they observe every call (:mod:`a2a_actors.server._calls`) and the Supervisor
started here gets the matching event observers (task spans, finished-task counts);
otherwise nothing of it exists. The service imports nothing of observability, which sits
above it.

On cancel: open streams end, then the Supervisor this service started stops (its live
tasks end CANCELED); :attr:`A2AService.stopped` is set.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup, TaskStatus

from a2a_actors.protocol._legacy_card import dual_version_card
from a2a_actors.push._delivery import PushDelivery, system_resolver
from a2a_actors.push._policy import PushPolicy
from a2a_actors.runtime import EventObserver, Supervisor, as_agent
from a2a_actors.runtime._task_spans import TaskSpans
from a2a_actors.runtime._tracing import Tracing, from_environment
from a2a_actors.server._auth.credentials import Authenticator
from a2a_actors.server._calls import CallObserver, CallObservers
from a2a_actors.server._card import Cards
from a2a_actors.server._checks import HeaderLookup, forwarded_headers, requested_extensions
from a2a_actors.server._config.config import (
    DEFAULT_MEMORY_RETENTION_MAX,
    DEFAULT_MEMORY_RETENTION_TTL,
    ServerConfig,
)
from a2a_actors.server._delegation import provide_delegator
from a2a_actors.server._idempotency import IDEMPOTENCY_HEADER
from a2a_actors.server._methods import CallContext, Methods
from a2a_actors.server._push_configs import MemoryPushConfigStore, PushConfigs, PushConfigStore
from a2a_actors.stores._base import (
    RecoverableStore,
    RecoveryReport,
    StoredTask,
    TaskPage,
    TaskQuery,
    TaskStore,
)
from a2a_actors.stores._keys import KeyStore, MemoryKeys
from a2a_actors.stores._memory import MemoryTaskStore

if TYPE_CHECKING:
    from a2a_actors.server._http.sse import StreamHub
    from a2a_actors.server._observability.metrics import ServerMetrics

__all__ = ("A2AService", "ServerNotRunningError", "base_url")

EXTENSION_KEY = "a2a_actors"


class ServerNotRunningError(RuntimeError):
    """A request arrived outside the app's serving lifetime (no lifespan was run)."""


class A2AService:
    """Everything one app serves.

    Args:
        target: A running :class:`~a2a_actors.runtime.Supervisor` (owned by the caller), or
            anything ``as_agent`` accepts (the service then runs its own Supervisor).
        config: The server configuration.
        hub: The app's open streams (every binding's), closed at shutdown.
        push_store: Where push configs are kept (in memory by default).
        metrics: The app's Prometheus metrics, or None.
        call_spans: Makes the call observer that gives each call a span, when tracing is on
            (None: calls get no span).
    """

    def __init__(
        self,
        target: object,
        config: ServerConfig,
        *,
        hub: StreamHub,
        push_store: PushConfigStore | None = None,
        metrics: ServerMetrics | None = None,
        call_spans: Callable[[Tracing], CallObserver[Any]] | None = None,
    ) -> None:
        self.config = config
        if isinstance(target, Supervisor):
            if config.middleware:
                raise ValueError(
                    "middleware wraps an agent the server runs, not a given Supervisor"
                )
            self._given: Supervisor | None = target
            self.agent = target.agent
        else:
            self._given = None
            agent = as_agent(target)
            if config.middleware:  # outside the agent's own (runtime.middleware)
                agent = dataclasses.replace(agent, middleware=config.middleware)
            self.agent = agent
        self.auth = Authenticator(config)
        self.cards = Cards(
            self.agent,
            config,
            self.auth,
            legacy_card=dual_version_card if config.legacy_v0_3 else None,
        )
        self._cluster_options: dict[str, Any] = {}
        #: Where the idempotency keys of sends are kept (the cluster's, in cluster mode).
        self.keys: KeyStore = MemoryKeys(ttl=config.idempotency_ttl)
        self._wire_push(push_store if push_store is not None else MemoryPushConfigStore())
        self.hub = hub
        #: The app's Prometheus metrics (``None`` unless ``config.metrics``).
        self.metrics = metrics
        self._call_spans = call_spans
        self._served_at = ""
        self._methods: Methods | None = None
        self._claimed = False
        self._started: anyio.Event | None = None
        self._stopped: anyio.Event | None = None

    def _wire_push(self, store: PushConfigStore) -> None:
        config = self.config
        policy = PushPolicy(
            allow_private=config.allow_private_push,
            allow_http=config.push_allow_http,
            allow=config.push_allow,
        )
        resolver = config.push_resolver or system_resolver
        self.push = PushConfigs(
            store,
            max_per_task=config.max_push_configs_per_task,
            policy=policy,
            resolver=resolver,
            resolve_timeout=config.push_connect_timeout,
        )
        #: Delivers push notifications (``None`` when push is off or the Supervisor is the
        #: caller's).
        self.push_delivery: PushDelivery | None = None
        if config.push_notifications and self._given is None:
            self.push_delivery = PushDelivery(
                store,
                policy=policy,
                resolver=resolver,
                workers=config.push_workers,
                max_pending=config.push_max_pending,
                connect_timeout=config.push_connect_timeout,
                timeout=config.push_timeout,
                max_attempts=config.push_max_attempts,
                backoff_base=config.push_backoff_base,
                backoff_max=config.push_backoff_max,
                breaker_threshold=config.push_breaker_threshold,
                breaker_cooldown=config.push_breaker_cooldown,
                retire=self.push.retire,
            )

    def use_cluster(
        self, supervisor_options: Mapping[str, Any], push_store: PushConfigStore, keys: KeyStore
    ) -> None:
        """Cluster mode (``serve`` calls it before the lifespan starts): the Supervisor
        this service starts gets ``supervisor_options`` (the cluster's store, event-log
        observer and remote tasks), push configs live in ``push_store`` and the sends'
        idempotency keys in ``keys``.

        Raises:
            ValueError: The service was given a running Supervisor.
        """
        if self._given is not None:
            raise ValueError("cluster mode serves an agent, not a given Supervisor")
        self._cluster_options = dict(supervisor_options)
        self.keys = keys
        self._wire_push(push_store)

    @property
    def methods(self) -> Methods:
        """The A2A methods.

        Raises:
            ServerNotRunningError: The app is not serving (its lifespan has not started).
        """
        if self._methods is None:
            raise ServerNotRunningError("the app is not serving; run it with its lifespan")
        return self._methods

    @property
    def serving(self) -> bool:
        """Whether requests can be served now (between start-up and shutdown)."""
        return self._methods is not None

    def claim(self) -> bool:
        """True the first time only: the caller is then the one to :meth:`run` the service.

        :meth:`run` claims too, so a service started by a lifespan is never started again
        by a first request (:mod:`a2a_actors.server._mounting`), nor after it stopped.
        """
        first = not self._claimed
        self._claimed = True
        return first

    async def wait_serving(self) -> None:
        """Wait until requests can be served.

        Raises:
            ServerNotRunningError: The service stopped, or stops before it served.
        """
        if self._methods is None and not self.stopped.is_set():
            async with anyio.create_task_group() as tg:

                async def settle(event: anyio.Event) -> None:
                    await event.wait()
                    tg.cancel_scope.cancel()

                tg.start_soon(settle, self.started)
                tg.start_soon(settle, self.stopped)
        if self._methods is None:
            raise ServerNotRunningError("the app has stopped serving")

    def _supervisor_kwargs(self) -> dict[str, Any]:
        options: dict[str, Any] = dict(self.config.supervisor_options)
        options.setdefault("resume", self.config.resume)
        cluster = self._cluster_options
        if cluster:
            options.update(
                store=cluster["store"],
                remote=cluster["remote"],
                keep_interrupted=cluster["keep_interrupted"],
            )
            # retention covers the cluster: run beside the Supervisor (see run), not in it
            options.pop("retention_ttl", None)
            options.pop("retention_max", None)
            options["observers"] = (*cluster["observers"], *options.get("observers", ()))
        elif "store" not in options:  # the memory store: bounded unless told otherwise
            options.setdefault("retention_max", DEFAULT_MEMORY_RETENTION_MAX)
            options.setdefault("retention_ttl", DEFAULT_MEMORY_RETENTION_TTL)
        if self.config.max_live_tasks is not None:
            options["max_live_tasks"] = self.config.max_live_tasks
        if self.config.max_running is not None:
            options["max_running"] = self.config.max_running
            options["max_queued"] = self.config.max_queued
        if self.config.task_timeout is not None:
            options["task_timeout"] = self.config.task_timeout
        if self.push_delivery is not None:
            options["observers"] = (*options.get("observers", ()), self.push_delivery)
            inner = options.get("store")
            options["store"] = _ForgetsPushConfigs.wrap(
                inner if inner is not None else MemoryTaskStore(), self.push
            )
        return options

    def bind_url(self, url: str) -> None:
        """Record the base URL the app is served at (``serve`` does, before the lifespan):
        a delegator the agent brings names it unless ``config.public_url`` is set."""
        self._served_at = url

    @property
    def started(self) -> anyio.Event:
        """Set once the runtime is up (created on first use, on the running loop)."""
        if self._started is None:
            self._started = anyio.Event()
        return self._started

    @property
    def stopped(self) -> anyio.Event:
        """Set once :meth:`run` has stopped the runtime."""
        if self._stopped is None:
            self._stopped = anyio.Event()
        return self._stopped

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Own the runtime and the streams' helpers until cancelled (the app's lifespan).

        Reports through ``task_status`` once requests can be served. On cancellation, open
        streams end, then the Supervisor (if this service started it) stops: its live
        tasks end CANCELED.
        """
        self.claim()
        try:
            # The stack outlives the task group: a delegator the agent brings is closed
            # only after the Supervisor stopped (see .delegation).
            async with AsyncExitStack() as stack, anyio.create_task_group() as runtime_tg:
                if self.push_delivery is not None:
                    await runtime_tg.start(self.push_delivery.run)
                supervisor = self._given
                tracing = from_environment()
                observers = self._observers(tracing)
                if supervisor is None:
                    options = self._supervisor_kwargs()
                    options["observers"] = (*options.get("observers", ()), *observers)
                    url = self.config.public_url or self._served_at
                    await provide_delegator(stack, self.agent, options, url)
                    supervisor = await runtime_tg.start(Supervisor(self.agent, **options).run)
                    await self._start_cluster_retention(runtime_tg)
                else:
                    for observer in observers:
                        supervisor.add_observer(observer)
                        stack.callback(supervisor.remove_observer, observer)
                for observer in observers:
                    if isinstance(observer, TaskSpans):
                        observer.bind(supervisor)
                self._methods = self._methods_for(supervisor, tracing)
                try:
                    async with anyio.create_task_group() as streams_tg:
                        self.hub.attach(streams_tg)
                        self.started.set()
                        task_status.started()
                        await anyio.sleep_forever()
                finally:
                    self.hub.close()
                    self._methods = None
                    if self.metrics is not None:
                        self.metrics.attach(None)
                    runtime_tg.cancel_scope.cancel()
        finally:
            self.stopped.set()

    def _observers(self, tracing: Tracing | None) -> list[EventObserver]:
        """The event observers tracing and metrics need (none when both are off)."""
        observers: list[EventObserver] = []
        if tracing is not None:
            observers.append(TaskSpans(tracing, self.agent.name))
        if self.metrics is not None:
            observers.append(self.metrics)
        return observers

    def _methods_for(self, supervisor: Supervisor, tracing: Tracing | None) -> Methods:
        """The methods served, their calls observed when tracing or metrics are on."""
        observers: list[CallObserver[Any]] = []
        if tracing is not None and self._call_spans is not None:
            observers.append(self._call_spans(tracing))
        if self.metrics is not None:
            self.metrics.attach(supervisor, self.push_delivery)
            observers.append(self.metrics)
        calls = CallObservers(observers) if observers else None
        return Methods(supervisor, self.config, self.cards, self.push, self.keys, calls=calls)

    async def _start_cluster_retention(self, tg: TaskGroup) -> None:
        """Cluster mode with ``retention_ttl`` / ``retention_max``: the node's retention
        schedule over the whole cluster (``a2a_actors.cluster._retention``)."""
        retain = self._cluster_options.get("retain")
        wanted = self.config.supervisor_options
        ttl, most = wanted.get("retention_ttl"), wanted.get("retention_max")
        if retain is not None and (ttl is not None or most is not None):
            await tg.start(retain, ttl, most)

    def close_streams(self) -> None:
        """End every open stream now and refuse new ones (first step of a shutdown)."""
        self.hub.close()

    def context_for(
        self, headers: HeaderLookup, base_url: str, *, binding: str = "jsonrpc"
    ) -> CallContext:
        """Authenticate a request by its headers and describe the call (that came by
        ``binding``).

        Raises:
            UnauthenticatedError: Auth is on and the request has no valid credentials.
        """
        caller = self.auth.authenticate(headers)
        return CallContext(
            caller=caller,
            authenticated=self.auth.enabled,
            extensions=requested_extensions(headers.getlist("A2A-Extensions")),
            base_url=base_url,
            headers=forwarded_headers(headers.get),
            binding=binding,
            idempotency_key=headers.get(IDEMPOTENCY_HEADER) or "",
        )

    def anonymous_context_for(
        self, headers: HeaderLookup, base_url: str, *, binding: str = "jsonrpc"
    ) -> CallContext:
        """The context of a request that presented no valid credentials."""
        return CallContext(
            extensions=requested_extensions(headers.getlist("A2A-Extensions")),
            base_url=base_url,
            headers=forwarded_headers(headers.get),
            binding=binding,
        )

    def extended_card_is_public(self) -> bool:
        """Whether GetExtendedAgentCard is answered without credentials."""
        return not self.config.extended_card_needs_auth

    def response_headers(self, ctx: CallContext) -> Mapping[str, str]:
        """Headers for every answer to ``ctx``: the activated ``A2A-Extensions``."""
        methods = self._methods
        activated = methods.activated_extensions(ctx) if methods is not None else frozenset()
        return {"A2A-Extensions": ", ".join(sorted(activated))} if activated else {}


class _ForgetsPushConfigs:
    """A :class:`TaskStore` that deletes a task's push configs along with the task; the
    rest of the seam is the wrapped store's. Whoever needs more of the store than the seam
    holds the store itself (``ServerConfig.supervisor_options["store"]``)."""

    def __init__(self, inner: TaskStore, push: PushConfigs) -> None:
        self._inner = inner
        self._push = push

    async def save(self, record: StoredTask) -> None:
        await self._inner.save(record)

    async def get(self, task_id: str) -> StoredTask | None:
        return await self._inner.get(task_id)

    async def list(self, query: TaskQuery) -> TaskPage:
        return await self._inner.list(query)

    async def delete(self, task_id: str) -> None:
        await self._inner.delete(task_id)
        await self._push.forget_task(task_id)

    @staticmethod
    def wrap(inner: TaskStore, push: PushConfigs) -> TaskStore:
        """Wrap ``inner``, keeping it a ``RecoverableStore`` when it is one (explicitly:
        protocol checks do not consult ``__getattr__`` on every Python version)."""
        if isinstance(inner, RecoverableStore):
            return _ForgetsPushConfigsRecoverable(inner, push)
        return _ForgetsPushConfigs(inner, push)


class _ForgetsPushConfigsRecoverable(_ForgetsPushConfigs):
    """:class:`_ForgetsPushConfigs` of a durable store (start-up recovery included)."""

    async def recover(self, *, now: datetime.datetime) -> RecoveryReport:
        inner = self._inner
        assert isinstance(inner, RecoverableStore)
        return await inner.recover(now=now)


def base_url(scheme: str, host: str, root_path: str) -> str:
    """``scheme://host[/root]`` (``localhost`` when ``host`` is empty)."""
    return f"{scheme}://{host or 'localhost'}{root_path}".rstrip("/")
