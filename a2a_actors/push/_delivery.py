"""Push-notification delivery: ordered, retried, bounded, and SSRF-safe by construction.

Theory of operation
-------------------
:class:`PushDelivery` is an event observer: the runtime calls :meth:`PushDelivery.task_event`
synchronously for every task event (after it is stored). The call never blocks: it looks up
the task's webhook configs and appends the event to one *lane* per config. A lane is a FIFO
of pending events for one (task, config) pair; a fixed pool of worker tasks takes ready lanes
from a shared queue and delivers each lane's events strictly in order. So events of one
config arrive in order, different configs proceed in parallel, and a slow or hanging receiver
occupies delivery workers only — never an agent slot, and never the task's actor.

Each attempt is one :func:`~a2a_actors.push._webhook.post_event`: it re-checks the URL with the
:class:`PushPolicy`, resolves the host once, checks every resolved address and connects to the
checked one (so DNS cannot redirect it), and POSTs the bare StreamResponse JSON with the config's
token and authentication; redirects are never followed (see :mod:`a2a_actors.push._webhook`).

A 2xx ends the event. 5xx, 408, 429, timeouts and connection errors are retried with
exponential backoff (jittered between half and all of each delay) up to ``max_attempts``;
anything else (3xx, other 4xx, a refused URL or address) gives up at once. A give-up is
logged (without credentials) and counted. After ``breaker_threshold`` consecutive give-ups a
config's circuit opens: its events are skipped (and counted) for ``breaker_cooldown``
seconds, then one event is tried.

Bounds: at most ``max_pending`` undelivered events in all; past it the oldest event of the
lane receiving a new one is dropped and counted (memory stays bounded whatever receivers do).

Lifetime: once the event that ends a task (``terminal=True``) has been dealt with for a
config (delivered, given up, skipped by an open circuit, or dropped), the optional
``retire`` callback is awaited with the config as it was when that event was queued; the
server deletes the config there, unless it was replaced meanwhile. An unexpected error in a
worker (a resolver or ``allow`` hook raising) gives up that event; it never stops the pool.

What is logged: task id, config id and a short reason (an HTTP status, an exception type,
a policy reason naming the host or address). Never a URL, a header or a body.
"""

from __future__ import annotations

import logging
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import anyio
import httpx

from a2a_actors.protocol import codec
from a2a_actors.protocol._models import StreamResponse
from a2a_actors.protocol._requests import TaskPushNotificationConfig
from a2a_actors.push._policy import PushPolicy
from a2a_actors.push._webhook import (
    PermanentFailure,
    Resolver as Resolver,
    TransientFailure,
    post_event,
    system_resolver as system_resolver,
)

__all__ = (
    "PushConfigSource",
    "PushDelivery",
    "PushStatistics",
    "Resolver",
    "system_resolver",
)

log = logging.getLogger("a2a_actors.push")


class PushConfigSource(Protocol):
    """Where delivery finds the webhook configs of a task (credentials included)."""

    def configs_for(self, task_id: str) -> Sequence[TaskPushNotificationConfig]:
        """The task's current configs; must not block."""
        ...


@dataclass(frozen=True, slots=True)
class PushStatistics:
    """Counters of a :class:`PushDelivery` (a frozen record)."""

    delivered: int
    attempts: int
    retries: int
    gave_up: int
    dropped: int
    skipped_open_circuit: int
    pending: int
    in_flight: int
    open_circuits: int


@dataclass(slots=True)
class _Lane:
    task_id: str
    config_id: str
    events: deque[StreamResponse] = field(default_factory=deque)
    scheduled: bool = False
    # The config as it was when the task's terminal event was queued (then retired).
    retire: TaskPushNotificationConfig | None = None


@dataclass(slots=True)
class _Breaker:
    failures: int = 0
    open_until: float = 0.0


class PushDelivery:
    """Delivers task events to their webhook configs (see the module docstring).

    Args:
        configs: Where to find each task's configs.
        policy: The SSRF policy (default: public https only).
        resolver: Async ``(host, port) -> addresses``; the system resolver by default.
        workers: Size of the delivery worker pool.
        max_pending: Bound on undelivered events across all configs.
        connect_timeout: Seconds to establish a connection.
        timeout: Total seconds for one attempt.
        max_attempts: Attempts per event before giving up.
        backoff_base: First retry delay in seconds (doubles per attempt, jittered).
        backoff_max: Upper bound of a retry delay.
        breaker_threshold: Consecutive give-ups that open a config's circuit.
        breaker_cooldown: Seconds a circuit stays open.
        retire: Awaited with a config once its task's terminal event was dealt with.
        transport: httpx transport override (tests).
        clock: Monotonic clock in seconds (tests).
    """

    def __init__(
        self,
        configs: PushConfigSource,
        *,
        policy: PushPolicy | None = None,
        resolver: Resolver = system_resolver,
        workers: int = 8,
        max_pending: int = 10_000,
        connect_timeout: float = 5.0,
        timeout: float = 15.0,
        max_attempts: int = 5,
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
        breaker_threshold: int = 5,
        breaker_cooldown: float = 60.0,
        retire: Callable[[TaskPushNotificationConfig], Awaitable[None]] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._configs = configs
        self.policy = policy or PushPolicy()
        self._resolver = resolver
        self._workers = workers
        self._max_pending = max_pending
        self._timeout = httpx.Timeout(timeout, connect=connect_timeout)
        self._total = timeout
        self._max_attempts = max(1, max_attempts)
        self._backoff_base = backoff_base
        self._backoff_max = backoff_max
        self._breaker_threshold = breaker_threshold
        self._breaker_cooldown = breaker_cooldown
        self._retire = retire
        self._transport = transport
        self._clock = clock
        self._lanes: dict[tuple[str, str], _Lane] = {}
        self._breakers: dict[tuple[str, str], _Breaker] = {}
        self._ready: deque[_Lane] = deque()
        self._wakeup = anyio.Event()
        self._pending = 0
        self._in_flight = 0
        self._counts = dict.fromkeys(
            ("delivered", "attempts", "retries", "gave_up", "dropped", "skipped"), 0
        )
        self._idle = anyio.Event()
        self._idle.set()

    # -- observer side (sync, never blocks) --------------------------------------------

    def task_event(
        self,
        task_id: str,
        owner: str | None,
        event: StreamResponse,
        *,
        terminal: bool,
        version: int = 0,
    ) -> None:
        """Queue ``event`` for every config of the task. Never blocks; messages are skipped.

        ``terminal`` marks the task's last event: once it is dealt with, each config it was
        queued for is retired (see the module docstring). ``version`` is not used.
        """
        if event.message is not None:
            return
        for config in self._configs.configs_for(task_id):
            key = (task_id, config.id)
            lane = self._lanes.get(key)
            if lane is None:
                lane = self._lanes[key] = _Lane(task_id, config.id)
            if terminal:
                lane.retire = config
            if self._pending >= self._max_pending:
                victim = lane if lane.events else self._fullest_lane()
                if victim is not None and victim.events:
                    victim.events.popleft()
                    self._pending -= 1
                    self._counts["dropped"] += 1
                    log.warning(
                        "push queue full: dropped an event for task %s config %s",
                        victim.task_id,
                        victim.config_id,
                    )
            lane.events.append(event)
            self._pending += 1
            self._idle = anyio.Event() if self._idle.is_set() else self._idle
            if not lane.scheduled:
                lane.scheduled = True
                self._ready.append(lane)
                self._wakeup.set()

    def _fullest_lane(self) -> _Lane | None:
        return max(self._lanes.values(), key=lambda lane: len(lane.events), default=None)

    # -- worker side ----------------------------------------------------------------------

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Run the worker pool until cancelled. Undelivered events are dropped on cancel."""
        # The transport is driven directly (not through httpx.AsyncClient): the client would
        # log every request URL, and webhook URLs may carry secrets in their query string.
        # Without a client there is also no redirect following and no proxy from the env.
        transport = self._transport or httpx.AsyncHTTPTransport(retries=0)
        async with transport, anyio.create_task_group() as tg:
            for _ in range(self._workers):
                tg.start_soon(self._worker, transport)
            task_status.started()

    async def wait_idle(self) -> None:
        """Wait until no event is pending or in flight (for tests and graceful shutdown)."""
        while self._pending or self._in_flight:
            await self._idle.wait()

    def statistics(self) -> PushStatistics:
        """A snapshot of the delivery counters."""
        now = self._clock()
        return PushStatistics(
            delivered=self._counts["delivered"],
            attempts=self._counts["attempts"],
            retries=self._counts["retries"],
            gave_up=self._counts["gave_up"],
            dropped=self._counts["dropped"],
            skipped_open_circuit=self._counts["skipped"],
            pending=self._pending,
            in_flight=self._in_flight,
            open_circuits=sum(1 for b in self._breakers.values() if b.open_until > now),
        )

    async def _worker(self, client: httpx.AsyncBaseTransport) -> None:
        # A lane is held by at most one worker at a time (``scheduled``), and its events are
        # popped in order, so each config sees its events in order.
        while True:
            while not self._ready:
                if self._wakeup.is_set():
                    self._wakeup = anyio.Event()
                await self._wakeup.wait()
            lane = self._ready.popleft()
            while lane.events:
                event = lane.events.popleft()
                self._pending -= 1
                self._in_flight += 1
                try:
                    await self._deliver_one(client, lane, event)
                finally:
                    self._in_flight -= 1
            lane.scheduled = False
            key = (lane.task_id, lane.config_id)
            if self._lanes.get(key) is lane:
                del self._lanes[key]
            if lane.retire is not None and self._retire is not None:
                self._in_flight += 1  # wait_idle() also waits for the retirement
                try:
                    await self._retire(lane.retire)
                except Exception as exc:
                    log.error(
                        "push config retirement failed: task %s config %s: %s",
                        lane.task_id,
                        lane.config_id,
                        type(exc).__name__,
                    )
                finally:
                    self._in_flight -= 1
            if not self._pending and not self._in_flight:
                self._idle.set()

    async def _deliver_one(
        self, client: httpx.AsyncBaseTransport, lane: _Lane, event: StreamResponse
    ) -> None:
        key = (lane.task_id, lane.config_id)
        breaker = self._breakers.setdefault(key, _Breaker())
        if breaker.open_until > self._clock():
            self._counts["skipped"] += 1
            return
        config = next(
            (c for c in self._configs.configs_for(lane.task_id) if c.id == lane.config_id), None
        )
        if config is None:
            return  # deleted meanwhile: nothing to deliver to
        body = codec.encode(event)
        for attempt in range(self._max_attempts):
            self._counts["attempts"] += 1
            try:
                await post_event(
                    client,
                    config,
                    body,
                    policy=self.policy,
                    resolver=self._resolver,
                    timeout=self._timeout,
                    total=self._total,
                )
            except TransientFailure as exc:
                if attempt + 1 < self._max_attempts:
                    self._counts["retries"] += 1
                    await anyio.sleep(self._backoff(attempt))
                    continue
                reason = str(exc)
            except PermanentFailure as exc:
                reason = str(exc)
            except Exception as exc:  # a resolver or allow hook failed: never kill the pool
                # Only the type: messages of unknown exceptions may quote URLs or headers.
                reason = f"unexpected {type(exc).__name__}"
            else:
                self._counts["delivered"] += 1
                breaker.failures = 0
                return
            self._counts["gave_up"] += 1
            breaker.failures += 1
            if breaker.failures >= self._breaker_threshold:
                breaker.open_until = self._clock() + self._breaker_cooldown
                # Half-open after the cooldown: one more give-up re-opens the circuit.
                breaker.failures = self._breaker_threshold - 1
            log.warning(
                "push delivery gave up: task %s config %s: %s", lane.task_id, lane.config_id, reason
            )
            return

    def _backoff(self, attempt: int) -> float:
        cap = min(self._backoff_max, self._backoff_base * (2**attempt))
        return random.uniform(cap / 2, cap)
