"""Push delivery: ordering, headers, retries with backoff, circuit breaker, SSRF at delivery."""

from __future__ import annotations

import ipaddress
import itertools
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager

import anyio
import httpx
import pytest
import trio
import trio.testing

from a2a_actors.protocol import codec
from a2a_actors.protocol._models import (
    StreamResponse,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_actors.protocol._requests import AuthenticationInfo, TaskPushNotificationConfig
from a2a_actors.push._delivery import PushDelivery
from a2a_actors.push._policy import IPAddress

SECRET = "s3cr3t-credential"
TOKEN = "tok-very-secret"


class Configs:
    def __init__(self) -> None:
        self.by_task: dict[str, list[TaskPushNotificationConfig]] = {}

    def add(self, task_id: str, config_id: str, url: str) -> None:
        self.by_task.setdefault(task_id, []).append(
            TaskPushNotificationConfig(
                url=url,
                id=config_id,
                task_id=task_id,
                token=TOKEN,
                authentication=AuthenticationInfo(scheme="Bearer", credentials=SECRET),
            )
        )

    def configs_for(self, task_id: str) -> Sequence[TaskPushNotificationConfig]:
        return self.by_task.get(task_id, [])


@asynccontextmanager
async def running(delivery: PushDelivery) -> AsyncIterator[None]:
    """Run the worker pool for the block; on exit wait until every event is dealt with."""
    async with anyio.create_task_group() as tg:
        await tg.start(delivery.run)
        yield
        await delivery.wait_idle()
        tg.cancel_scope.cancel()


def status_event(task_id: str, state: TaskState) -> StreamResponse:
    return StreamResponse(
        status_update=TaskStatusUpdateEvent(
            task_id=task_id, context_id="ctx", status=TaskStatus(state=state)
        )
    )


def fake_resolver(answers: dict[str, list[str]]):  # type: ignore[no-untyped-def]
    async def resolve(host: str, port: int) -> Sequence[IPAddress]:
        return [ipaddress.ip_address(a) for a in answers[host]]

    return resolve


def recorder(calls: list[httpx.Request], status: int) -> Callable[[httpx.Request], httpx.Response]:
    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(status)

    return handler


@pytest.fixture
def clock() -> trio.testing.MockClock:
    return trio.testing.MockClock(autojump_threshold=0)


async def test_events_arrive_in_order_with_headers_at_checked_address() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200)

    configs = Configs()
    configs.add("t1", "c1", "https://hooks.example.com/a2a?x=1")
    delivery = PushDelivery(
        configs,
        resolver=fake_resolver({"hooks.example.com": ["93.184.216.34"]}),
        transport=httpx.MockTransport(handler),
    )
    events = [
        StreamResponse(
            task=Task(id="t1", context_id="ctx", status=TaskStatus(state=TaskState.SUBMITTED))
        ),
        status_event("t1", TaskState.WORKING),
        status_event("t1", TaskState.COMPLETED),
    ]
    with anyio.fail_after(5):
        async with running(delivery):
            for ev in events:
                delivery.task_event("t1", None, ev, terminal=False)
    assert [codec.decode(r.content, StreamResponse) for r in seen] == events
    for request in seen:
        # Connected to the checked address; Host and SNI still name the host.
        assert request.url.host == "93.184.216.34"
        assert request.url.raw_path == b"/a2a?x=1"
        assert request.headers["host"] == "hooks.example.com"
        assert request.extensions["sni_hostname"] == "hooks.example.com"
        assert request.headers["content-type"] == "application/json"
        assert request.headers["authorization"] == f"Bearer {SECRET}"
        assert request.headers["x-a2a-notification-token"] == TOKEN
    assert delivery.statistics().delivered == 3


async def test_messages_are_not_pushed() -> None:
    configs = Configs()
    configs.add("t1", "c1", "https://hooks.example.com/")
    delivery = PushDelivery(configs, transport=httpx.MockTransport(lambda r: httpx.Response(200)))
    from a2a_actors.protocol._models import Message, Part, Role

    msg = Message(message_id="m", role=Role.AGENT, parts=(Part(text="x"),))
    delivery.task_event("t1", None, StreamResponse(message=msg), terminal=False)
    assert delivery.statistics().pending == 0


async def test_5xx_is_retried_with_growing_backoff(
    clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    times: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        times.append(trio.current_time())
        return httpx.Response(500 if len(times) < 4 else 204)

    configs = Configs()
    configs.add("t1", "c1", "https://hooks.example.com/")
    delivery = PushDelivery(
        configs,
        resolver=fake_resolver({"hooks.example.com": ["93.184.216.34"]}),
        transport=httpx.MockTransport(handler),
        backoff_base=1.0,
        max_attempts=5,
    )
    with anyio.fail_after(60):
        async with running(delivery):
            delivery.task_event("t1", None, status_event("t1", TaskState.WORKING), terminal=False)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(times) == 4
    # Jittered exponential backoff: attempt n waits within [base*2^n / 2, base*2^n].
    for n, gap in enumerate(gaps):
        assert 2**n / 2 <= gap <= 2**n
    stats = delivery.statistics()
    assert (stats.delivered, stats.retries, stats.gave_up) == (1, 3, 0)


async def test_gives_up_after_max_attempts_and_logs_without_secrets(
    clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    configs = Configs()
    configs.add("t1", "c1", "https://hooks.example.com/?token=querysecret")
    delivery = PushDelivery(
        configs,
        resolver=fake_resolver({"hooks.example.com": ["93.184.216.34"]}),
        transport=httpx.MockTransport(lambda r: httpx.Response(503)),
        max_attempts=3,
    )
    caplog.set_level(logging.DEBUG)
    with anyio.fail_after(600):
        async with running(delivery):
            delivery.task_event("t1", None, status_event("t1", TaskState.WORKING), terminal=False)
    stats = delivery.statistics()
    assert (stats.attempts, stats.gave_up, stats.delivered) == (3, 1, 0)
    assert "gave up" in caplog.text
    for secret in (SECRET, TOKEN, "querysecret"):
        assert secret not in caplog.text


async def test_4xx_and_redirects_are_not_retried_nor_followed() -> None:
    calls: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        if request.url.path == "/redirect":
            return httpx.Response(302, headers={"Location": "http://169.254.169.254/latest"})
        return httpx.Response(403)

    configs = Configs()
    configs.add("t1", "c1", "https://hooks.example.com/redirect")
    configs.add("t1", "c2", "https://hooks.example.com/forbidden")
    delivery = PushDelivery(
        configs,
        resolver=fake_resolver({"hooks.example.com": ["93.184.216.34"]}),
        transport=httpx.MockTransport(handler),
    )
    with anyio.fail_after(5):
        async with running(delivery):
            delivery.task_event("t1", None, status_event("t1", TaskState.WORKING), terminal=False)
    assert sorted(r.url.path for r in calls) == ["/forbidden", "/redirect"]
    assert delivery.statistics().gave_up == 2


async def test_name_resolving_private_at_delivery_is_refused() -> None:
    calls: list[httpx.Request] = []
    configs = Configs()
    configs.add("t1", "c1", "https://rebind.example.com/hook")
    answers = {"rebind.example.com": ["93.184.216.34"]}
    delivery = PushDelivery(
        configs,
        resolver=fake_resolver(answers),
        transport=httpx.MockTransport(recorder(calls, 200)),
    )
    # Public when the config was created ...
    delivery.policy.check_url("https://rebind.example.com/hook")
    # ... private (or mixed) by the time of delivery.
    answers["rebind.example.com"] = ["93.184.216.34", "10.0.0.7"]
    with anyio.fail_after(5):
        async with running(delivery):
            delivery.task_event("t1", None, status_event("t1", TaskState.WORKING), terminal=False)
    assert calls == []
    assert delivery.statistics().gave_up == 1


async def test_circuit_opens_after_repeated_give_ups(clock: trio.testing.MockClock) -> None:
    calls: list[httpx.Request] = []
    configs = Configs()
    configs.add("t1", "c1", "https://hooks.example.com/")
    delivery = PushDelivery(
        configs,
        resolver=fake_resolver({"hooks.example.com": ["93.184.216.34"]}),
        transport=httpx.MockTransport(recorder(calls, 400)),
        breaker_threshold=2,
        breaker_cooldown=30,
        clock=trio.current_time,
    )
    with anyio.fail_after(100):
        async with running(delivery):
            for _ in range(5):
                delivery.task_event(
                    "t1", None, status_event("t1", TaskState.WORKING), terminal=False
                )
            await delivery.wait_idle()
            assert len(calls) == 2
            stats = delivery.statistics()
            assert (stats.gave_up, stats.skipped_open_circuit, stats.open_circuits) == (2, 3, 1)
            await anyio.sleep(31)  # virtual time: past the cooldown, one event is tried again
            delivery.task_event("t1", None, status_event("t1", TaskState.WORKING), terminal=False)
            await delivery.wait_idle()
            assert len(calls) == 3
            assert delivery.statistics().open_circuits == 1  # the half-open try failed


async def test_slow_receiver_does_not_delay_other_configs() -> None:
    release = anyio.Event()
    fast_done = anyio.Event()

    async def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/slow":
            await release.wait()
        else:
            fast_done.set()
        return httpx.Response(200)

    configs = Configs()
    configs.add("slow-task", "c1", "https://hooks.example.com/slow")
    configs.add("fast-task", "c1", "https://hooks.example.com/fast")
    delivery = PushDelivery(
        configs,
        resolver=fake_resolver({"hooks.example.com": ["93.184.216.34"]}),
        transport=httpx.MockTransport(handler),
        workers=2,
    )
    with anyio.fail_after(5):
        async with running(delivery):
            delivery.task_event(
                "slow-task", None, status_event("slow-task", TaskState.WORKING), terminal=False
            )
            delivery.task_event(
                "fast-task", None, status_event("fast-task", TaskState.WORKING), terminal=False
            )
            await fast_done.wait()  # delivered while the slow receiver still hangs
            assert delivery.statistics().in_flight == 1
            release.set()
    assert delivery.statistics().delivered == 2


async def test_pending_events_are_bounded() -> None:
    configs = Configs()
    configs.add("t1", "c1", "https://hooks.example.com/")
    delivery = PushDelivery(configs, max_pending=3)
    # Not running: nothing drains, so the bound must hold by dropping the oldest.
    for _ in range(10):
        delivery.task_event("t1", None, status_event("t1", TaskState.WORKING), terminal=False)
    stats = delivery.statistics()
    assert (stats.pending, stats.dropped) == (3, 7)


class Retired:
    def __init__(self) -> None:
        self.configs: list[TaskPushNotificationConfig] = []

    async def __call__(self, config: TaskPushNotificationConfig) -> None:
        self.configs.append(config)


async def test_configs_are_retired_after_the_terminal_event_only() -> None:
    seen: list[httpx.Request] = []
    retired = Retired()
    configs = Configs()
    configs.add("t1", "c1", "https://hooks.example.com/a")
    configs.add("t1", "c2", "https://hooks.example.com/b")
    delivery = PushDelivery(
        configs,
        resolver=fake_resolver({"hooks.example.com": ["93.184.216.34"]}),
        transport=httpx.MockTransport(recorder(seen, 200)),
        retire=retired,
    )
    with anyio.fail_after(5):
        async with running(delivery):
            delivery.task_event("t1", None, status_event("t1", TaskState.WORKING), terminal=False)
            await delivery.wait_idle()
            assert retired.configs == []
            delivery.task_event("t1", None, status_event("t1", TaskState.COMPLETED), terminal=True)
            await delivery.wait_idle()  # includes the retirement
    assert len(seen) == 4
    assert sorted(c.id for c in retired.configs) == ["c1", "c2"]


async def test_a_given_up_or_dropped_terminal_event_still_retires(
    clock: trio.testing.MockClock,
) -> None:
    retired = Retired()
    configs = Configs()
    configs.add("t1", "c1", "https://hooks.example.com/")
    configs.add("t2", "c1", "https://hooks.example.com/")
    delivery = PushDelivery(
        configs,
        resolver=fake_resolver({"hooks.example.com": ["93.184.216.34"]}),
        transport=httpx.MockTransport(lambda r: httpx.Response(500)),
        max_attempts=2,
        max_pending=1,
        retire=retired,
    )
    delivery.task_event("t1", None, status_event("t1", TaskState.FAILED), terminal=True)
    # Over the bound: t1's terminal event (in the fullest lane) is dropped to make room.
    delivery.task_event("t2", None, status_event("t2", TaskState.FAILED), terminal=True)
    assert (delivery.statistics().dropped, delivery.statistics().pending) == (1, 1)
    with anyio.fail_after(600):
        async with running(delivery):
            pass  # the queued events are delivered (or given up) before the block ends
    assert sorted(c.task_id for c in retired.configs) == ["t1", "t2"]
    assert delivery.statistics().gave_up == 1  # t2's, after two attempts


async def test_a_failing_hook_gives_up_one_event_and_never_stops_the_pool(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[httpx.Request] = []

    async def broken(host: str, port: int) -> Sequence[IPAddress]:
        if host == "broken.example.com":
            raise RuntimeError(f"resolver bug for {SECRET}")
        return [ipaddress.ip_address("93.184.216.34")]

    async def failing_retire(config: TaskPushNotificationConfig) -> None:
        raise RuntimeError(f"store down {SECRET}")

    configs = Configs()
    configs.add("t1", "c1", "https://broken.example.com/")
    configs.add("t2", "c1", "https://fine.example.com/")
    delivery = PushDelivery(
        configs,
        resolver=broken,
        transport=httpx.MockTransport(recorder(seen, 200)),
        workers=1,
        retire=failing_retire,
    )
    caplog.set_level(logging.DEBUG)
    with anyio.fail_after(5):
        async with running(delivery):
            delivery.task_event("t1", None, status_event("t1", TaskState.FAILED), terminal=True)
            delivery.task_event("t2", None, status_event("t2", TaskState.WORKING), terminal=False)
    assert len(seen) == 1  # the second task was still delivered by the only worker
    stats = delivery.statistics()
    assert (stats.gave_up, stats.delivered) == (1, 1)
    assert "unexpected RuntimeError" in caplog.text
    assert "retirement failed" in caplog.text
    assert SECRET not in caplog.text
