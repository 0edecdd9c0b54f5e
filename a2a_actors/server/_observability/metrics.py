"""Prometheus metrics of one app: :class:`ServerMetrics`, served at ``/metrics``.

Off by default (``ServerConfig.observability.metrics``, ``serve --metrics``); off, nothing
is created and no request pays for it. On, each app has its own ``CollectorRegistry``
(never the process-global one), so two servers in one process keep apart, and each
process of a multi-worker or cluster deployment exposes its own numbers.

The names are a contract (docs/observability.md has the table):

=====================================================  =========  ===========================
``a2a_requests_total{method,binding,code}``            counter    per observed call
``a2a_request_duration_seconds{method}``               histogram  per observed call
``a2a_tasks_finished_total{state}``                    counter    terminal events (observer)
``a2a_tasks_live``, ``a2a_tasks_running``              gauge      Supervisor.statistics()
``a2a_stream_subscribers``, ``a2a_mailbox_depth``      gauge      Supervisor.statistics()
``a2a_push_deliveries_total{outcome}``                 counter    PushDelivery.statistics()
``a2a_delegations_total{outcome}``                     counter    the delegator's counts
=====================================================  =========  ===========================

Only the first three are updated as things happen, by this object as a call observer
(:mod:`a2a_actors.server._calls`) and as a Supervisor event observer; the rest are read from
the runtime's own statistics when scraped.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from a2a_actors.protocol._errors import UnauthenticatedError
from a2a_actors.protocol._models import StreamResponse
from a2a_actors.protocol._state import TERMINAL_STATES
from a2a_actors.server._calls import ObservedCall
from a2a_actors.server._http.responses import JSON, rest_error_answer

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric
    from quart import Response

    from a2a_actors.push._delivery import PushDelivery
    from a2a_actors.runtime import Supervisor
    from a2a_actors.server._service import A2AService

__all__ = ("CONTENT_TYPE", "DelegationCounts", "ServerMetrics", "metrics_view")

#: The ``Content-Type`` of the ``/metrics`` answer (Prometheus text format 0.0.4).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

#: The ``state`` label of each terminal state: ``completed``, ``failed``, ...
_FINISHED = {state: state.name.lower() for state in TERMINAL_STATES}


@runtime_checkable
class DelegationCounts(Protocol):
    """A delegator that counts its delegations by outcome (the orchestrator does)."""

    def delegation_outcomes(self) -> Mapping[str, int]:
        """Delegations ended so far, by outcome (``completed``, ``failed``…)."""
        ...


class ServerMetrics:
    """The metrics of one app (see the module docstring).

    Raises:
        ImportError: prometheus-client (the ``metrics`` extra) is not installed.
    """

    def __init__(self) -> None:
        try:
            from prometheus_client import CollectorRegistry, Counter, Histogram
        except ImportError as exc:
            raise ImportError(
                "metrics need prometheus-client: pip install 'a2a-actors[metrics]'", name=exc.name
            ) from exc

        self.registry = CollectorRegistry()
        self._requests = Counter(
            "a2a_requests",
            "A2A calls answered, by method, binding and outcome (OK or the error's reason)",
            ("method", "binding", "code"),
            registry=self.registry,
        )
        self._duration = Histogram(
            "a2a_request_duration_seconds",
            "Time to answer an A2A call (a stream: until it ended), by method",
            ("method",),
            registry=self.registry,
        )
        self._finished = Counter(
            "a2a_tasks_finished",
            "Tasks that reached a terminal state, by state",
            ("state",),
            registry=self.registry,
        )
        self._counted: dict[tuple[str, str, str], tuple[Any, Any]] = {}
        self._supervisor: Supervisor | None = None
        self._push: PushDelivery | None = None
        self.registry.register(_Scraped(self))

    def attach(self, supervisor: Supervisor | None, push: PushDelivery | None = None) -> None:
        """Read the gauges and counters of ``supervisor`` (its delegator's too) and of
        ``push`` when scraped (None: detach, at shutdown)."""
        self._supervisor = supervisor
        self._push = push

    def call_started(self, call: ObservedCall) -> None:
        """As a call observer: nothing to do until the call ends."""

    def call_ended(self, call: ObservedCall, started: None) -> None:
        """As a call observer: count the answered call and its duration."""
        error = call.error
        key = (call.method, call.binding, "OK" if error is None else error.reason)
        counted = self._counted.get(key)
        if counted is None:  # a labelled child is looked up once, not per call
            counted = self._counted[key] = (
                self._requests.labels(*key),
                self._duration.labels(call.method),
            )
        counted[0].inc()
        counted[1].observe(time.perf_counter() - call.started)

    def task_event(
        self,
        task_id: str,
        owner: str | None,
        event: StreamResponse,
        *,
        terminal: bool,
        version: int = 0,
    ) -> None:
        """As a Supervisor event observer: count tasks that end."""
        if not terminal:
            return
        if event.status_update is not None:
            state = event.status_update.status.state
        elif event.task is not None:
            state = event.task.status.state
        else:
            return
        label = _FINISHED.get(state)
        if label is not None:
            self._finished.labels(label).inc()

    def render(self) -> bytes:
        """The metrics in the Prometheus text format."""
        from prometheus_client import generate_latest

        return generate_latest(self.registry)

    def collect_runtime(self) -> Iterable[Metric]:
        """The metrics read from the runtime's statistics (see the module docstring)."""
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        supervisor = self._supervisor
        live = running = subscribers = depth = 0
        delegations: Mapping[str, int] = {}
        if supervisor is not None:
            stats = supervisor.statistics()
            live, running = stats.live_tasks, stats.running_handlers
            subscribers, depth = stats.subscribers, stats.mailbox_depth
            delegator = supervisor.delegator
            if isinstance(delegator, DelegationCounts):
                delegations = delegator.delegation_outcomes()
        yield GaugeMetricFamily("a2a_tasks_live", "Tasks with a live actor", value=live)
        yield GaugeMetricFamily(
            "a2a_tasks_running", "Agent handlers running now (holding a slot)", value=running
        )
        yield GaugeMetricFamily(
            "a2a_stream_subscribers", "Subscriptions to task event streams", value=subscribers
        )
        yield GaugeMetricFamily(
            "a2a_mailbox_depth", "Client messages waiting in task mailboxes", value=depth
        )
        push = CounterMetricFamily(
            "a2a_push_deliveries",
            "Push notifications by outcome (delivered, failed, dropped, skipped)",
            labels=("outcome",),
        )
        if self._push is not None:
            counts = self._push.statistics()
            push.add_metric(("delivered",), counts.delivered)
            push.add_metric(("failed",), counts.gave_up)
            push.add_metric(("dropped",), counts.dropped)
            push.add_metric(("skipped",), counts.skipped_open_circuit)
        yield push
        delegated = CounterMetricFamily(
            "a2a_delegations",
            "Delegations to other agents that ended, by outcome",
            labels=("outcome",),
        )
        for outcome, count in sorted(delegations.items()):
            delegated.add_metric((outcome,), count)
        yield delegated


class _Scraped:
    """The registry's collector of :meth:`ServerMetrics.collect_runtime`."""

    def __init__(self, metrics: ServerMetrics) -> None:
        self._metrics = metrics

    def collect(self) -> Iterable[Metric]:
        return self._metrics.collect_runtime()


def metrics_view(service: A2AService) -> Callable[[], Awaitable[Response]]:
    """The Quart view of ``GET /metrics``: the app's metrics, behind the server's
    credentials unless ``MetricsOptions.public`` (401 with the usual challenge)."""
    from quart import Response, request

    metrics, options = service.metrics, service.config.metrics
    assert metrics is not None
    assert options is not None
    auth = service.auth

    async def view() -> Response:
        if auth.enabled and not options.public:
            headers = request.headers
            await auth.wait_keys(headers)
            try:
                auth.authenticate(headers)
            except UnauthenticatedError as exc:
                answer = rest_error_answer(exc, challenge=auth.challenge(exc))
                return Response(
                    answer.body,
                    status=answer.status,
                    headers=dict(answer.headers),
                    content_type=JSON,
                )
        return Response(metrics.render(), status=200, content_type=CONTENT_TYPE)

    return view
