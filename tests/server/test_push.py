"""Push notifications end to end: our server, a real webhook receiver on loopback (both backends).

The receiver (:mod:`tests.push.receiver`) is a real HTTP/1.1 server on 127.0.0.1; loopback is
admitted with ``allow_private_push`` (as for the conformance kit), except in the SSRF tests,
which run under the default policy with a fake resolver. Nothing here sleeps to synchronise:
tests wait for receiver events and for ``PushDelivery.wait_idle()``.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import socket
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from a2a import types as sdk
from google.protobuf import json_format
from quart.testing import QuartClient

from a2a_actors.push._delivery import PushDelivery
from a2a_actors.push._policy import IPAddress
from a2a_actors.server import ServerConfig, create_app
from a2a_actors.server._app import service_of
from a2a_actors.server._push_configs import MemoryPushConfigStore
from a2a_actors.server._service import A2AService
from a2a_actors.stores._base import RecoverableStore
from a2a_actors.stores._sqlite import SQLiteTaskStore
from tests.push.receiver import Answer, Received, receiver

from .agents import scenario_agent
from .helpers import (
    JSON_HEADERS,
    TIMEOUT,
    envelope,
    message,
    rpc_error,
    rpc_result,
    running_app,
    send_params,
    served,
    sse_data,
)

pytestmark = pytest.mark.anyio

TOKEN = "tok-8d1f0c"
CREDENTIALS = "cred-5b7e2a"
LOOPBACK = ServerConfig(push_notifications=True, allow_private_push=True)


def inline(url: str, config_id: str = "hook", **extra: Any) -> dict[str, Any]:
    """An inline ``taskPushNotificationConfig`` with a token and Bearer credentials."""
    return {
        "id": config_id,
        "url": url,
        "token": TOKEN,
        "authentication": {"scheme": "Bearer", "credentials": CREDENTIALS},
        **extra,
    }


def with_push(text: str, config: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    return send_params(text, configuration={"taskPushNotificationConfig": config}, **kwargs)


def delivery_of(service: A2AService) -> PushDelivery:
    assert service.push_delivery is not None
    return service.push_delivery


def sdk_config(value: dict[str, Any]) -> sdk.TaskPushNotificationConfig:
    """Parse with the official SDK's type, strictly (unknown fields raise)."""
    return json_format.Parse(json.dumps(value), sdk.TaskPushNotificationConfig())


@asynccontextmanager
async def real_server(config: ServerConfig) -> AsyncIterator[tuple[str, A2AService]]:
    """``serve()`` on 127.0.0.1:0; yields the base URL and the service."""
    app = create_app(scenario_agent, config)
    async with served(app) as url:
        yield url, service_of(app)


@asynccontextmanager
async def in_process(
    config: ServerConfig, **kwargs: Any
) -> AsyncIterator[tuple[QuartClient, A2AService]]:
    async with running_app(config=config, **kwargs) as client:
        yield client, service_of(client.app)


async def call(
    http: httpx.AsyncClient, url: str, method: str, params: Any, **headers: str
) -> dict[str, Any]:
    response = await http.post(
        f"{url}/", content=envelope(method, params), headers={**JSON_HEADERS, **headers}
    )
    assert response.status_code == 200, response.text
    decoded: dict[str, Any] = response.json()
    return decoded


# -- delivery to a real receiver -----------------------------------------------------------


async def test_receiver_gets_every_event_in_order_with_headers() -> None:
    with anyio.fail_after(TIMEOUT):
        async with (
            receiver() as rx,
            real_server(LOOPBACK) as (url, service),
            httpx.AsyncClient(timeout=TIMEOUT) as http,
        ):
            hook = inline(f"{rx.base_url}/webhook?via=test")
            body = {"message": message("stream please"), "configuration": {}}
            body["configuration"]["taskPushNotificationConfig"] = hook
            response = await http.post(
                f"{url}/rest/message:stream", json=body, headers=JSON_HEADERS
            )
            streamed = sse_data(response.content)  # the bare StreamResponses, in order
            await delivery_of(service).wait_idle()

            assert len(streamed) == 6  # task, working, three chunks, completed
            assert rx.bodies() == streamed
            for received in rx.requests:
                assert (received.method, received.target) == ("POST", "/webhook?via=test")
                assert received.headers["content-type"] == "application/json"
                assert received.headers["authorization"] == f"Bearer {CREDENTIALS}"
                assert received.headers["x-a2a-notification-token"] == TOKEN
                assert received.headers["host"] == f"127.0.0.1:{rx.port}"
                # The official SDK reads every body as a StreamResponse (strict).
                json_format.Parse(received.body, sdk.StreamResponse())
            first, last = rx.bodies()[0], rx.bodies()[-1]
            assert first["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"
            assert last["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
            # Terminal event delivered: the config has served its purpose.
            task_id = first["task"]["id"]
            listed = await http.get(
                f"{url}/rest/tasks/{task_id}/pushNotificationConfigs", headers=JSON_HEADERS
            )
            assert listed.json().get("configs", []) == []
            assert delivery_of(service).statistics().delivered == 6


async def test_jsonrpc_inline_config_and_crud_parse_as_sdk_types() -> None:
    with anyio.fail_after(TIMEOUT):
        async with (
            receiver() as rx,
            real_server(LOOPBACK) as (url, service),
            httpx.AsyncClient(timeout=TIMEOUT) as http,
        ):
            hook = inline(f"{rx.base_url}/webhook")
            sent = await call(http, url, "SendMessage", with_push("hello", hook))
            task = sent["result"]["task"]
            assert task["status"]["state"] == "TASK_STATE_COMPLETED"
            await delivery_of(service).wait_idle()
            states = [
                b["task"]["status"]["state"]
                if "task" in b
                else b["statusUpdate"]["status"]["state"]
                for b in rx.bodies()
                if "artifactUpdate" not in b
            ]
            assert states[0] == "TASK_STATE_SUBMITTED"
            assert states[-1] == "TASK_STATE_COMPLETED"
            assert all(r.headers["authorization"] == f"Bearer {CREDENTIALS}" for r in rx.requests)

            # CRUD on the completed task (as the conformance kit does): the config lives
            # until deleted, and every answer parses strictly as the SDK's types.
            tid = task["id"]
            created = (
                await call(http, url, "CreateTaskPushNotificationConfig", {"taskId": tid, **hook})
            )["result"]
            assert created == {
                "taskId": tid,
                "id": "hook",
                "url": hook["url"],
                "authentication": {"scheme": "Bearer"},
            }
            assert sdk_config(created).id == "hook"
            unnamed = (
                await call(
                    http,
                    url,
                    "CreateTaskPushNotificationConfig",
                    {"taskId": tid, "url": f"{rx.base_url}/other"},
                )
            )["result"]
            assert unnamed["id"] not in ("", "hook", tid)  # server-assigned
            sdk_config(unnamed)
            got = (
                await call(
                    http, url, "GetTaskPushNotificationConfig", {"taskId": tid, "id": "hook"}
                )
            )["result"]
            assert got == created
            sdk_config(got)
            page = (
                await call(
                    http, url, "ListTaskPushNotificationConfigs", {"taskId": tid, "pageSize": 1}
                )
            )["result"]
            listed = json_format.Parse(
                json.dumps(page), sdk.ListTaskPushNotificationConfigsResponse()
            )
            assert [c.id for c in listed.configs] == ["hook"]
            page2 = (
                await call(
                    http,
                    url,
                    "ListTaskPushNotificationConfigs",
                    {"taskId": tid, "pageToken": page["nextPageToken"]},
                )
            )["result"]
            assert [c["id"] for c in page2["configs"]] == [unnamed["id"]]
            # Create with the same id replaces.
            replaced = (
                await call(
                    http,
                    url,
                    "CreateTaskPushNotificationConfig",
                    {"taskId": tid, "id": "hook", "url": f"{rx.base_url}/replaced"},
                )
            )["result"]
            assert replaced == {"taskId": tid, "id": "hook", "url": f"{rx.base_url}/replaced"}
            for _ in range(2):  # delete is idempotent
                deleted = await call(
                    http, url, "DeleteTaskPushNotificationConfig", {"taskId": tid, "id": "hook"}
                )
                assert deleted["result"] is None
            missing = await call(
                http, url, "GetTaskPushNotificationConfig", {"taskId": tid, "id": "hook"}
            )
            assert missing["error"]["code"] == -32001

            # The same over HTTP+JSON.
            rest = f"{url}/rest/tasks/{tid}/pushNotificationConfigs"
            made = await http.post(rest, json={**hook, "id": "r1"}, headers=JSON_HEADERS)
            assert made.status_code == 200
            sdk_config(made.json())
            fetched = await http.get(f"{rest}/r1", headers=JSON_HEADERS)
            assert fetched.json() == made.json()
            sdk_config(fetched.json())
            everything = (await http.get(rest, headers=JSON_HEADERS)).json()
            json_format.Parse(json.dumps(everything), sdk.ListTaskPushNotificationConfigsResponse())
            assert sorted(c["id"] for c in everything["configs"]) == sorted(["r1", unnamed["id"]])
            for _ in range(2):
                gone = await http.delete(f"{rest}/r1", headers=JSON_HEADERS)
                assert gone.status_code == 200
            assert (await http.get(f"{rest}/r1", headers=JSON_HEADERS)).status_code == 404


async def test_hanging_receiver_delays_neither_the_task_nor_other_deliveries() -> None:
    release = anyio.Event()
    bad_answers = iter((500, 503, 200))

    async def hang_then_fail(received: Received) -> Answer:
        await release.wait()  # the first attempt hangs until the test releases it
        return Answer(next(bad_answers, 200))

    config = LOOPBACK.replace(push_workers=2, push_backoff_base=0.01, push_backoff_max=0.05)
    with anyio.fail_after(TIMEOUT):
        async with (
            receiver(hang_then_fail) as bad,
            receiver() as good,
            in_process(config) as (client, service),
        ):
            delivery = delivery_of(service)
            slow = await rpc_result(
                client, "SendMessage", with_push("hello", inline(f"{bad.base_url}/slow"))
            )
            # The blocking SendMessage returned the finished task while its receiver hangs.
            assert slow["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            await bad.wait_for(1)
            assert delivery.statistics().in_flight == 1

            fast = await rpc_result(
                client, "SendMessage", with_push("hello", inline(f"{good.base_url}/fast"))
            )
            assert fast["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            # Every event of the second task arrives while the first receiver still hangs.
            await good.wait_until(
                lambda rs: any(
                    r.json().get("statusUpdate", {}).get("status", {}).get("state")
                    == "TASK_STATE_COMPLETED"
                    for r in rs
                )
            )
            assert not release.is_set()
            assert len(bad.requests) == 1
            assert service.methods.supervisor.statistics().running_handlers == 0

            release.set()  # now 500, 503, then success: retried with backoff, in order
            await delivery.wait_idle()
            first_event = bad.requests[0].body
            assert [r.body for r in bad.requests[:3]] == [first_event] * 3
            stats = delivery.statistics()
            assert stats.retries == 2
            assert stats.gave_up == 0
            # From the successful third attempt on, every event once, in order.
            distinct = bad.bodies()[2:]
            assert len(distinct) == len(good.requests)
            assert "task" in distinct[0]
            assert distinct[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_failing_receiver_is_given_up_and_counted(caplog: pytest.LogCaptureFixture) -> None:
    async def always_500(received: Received) -> Answer:
        return Answer(500)

    config = LOOPBACK.replace(
        push_max_attempts=3,
        push_backoff_base=0.001,
        push_backoff_max=0.002,
        push_breaker_threshold=100,
    )
    caplog.set_level(logging.WARNING, logger="a2a_actors.push")
    with anyio.fail_after(TIMEOUT):
        async with receiver(always_500) as rx, in_process(config) as (client, service):
            task = await rpc_result(
                client, "SendMessage", with_push("hello", inline(f"{rx.base_url}/hook"))
            )
            await delivery_of(service).wait_idle()
            events = len({r.body for r in rx.requests})
            stats = delivery_of(service).statistics()
            assert stats.gave_up == events
            assert stats.attempts == len(rx.requests) == 3 * events
            assert "push delivery gave up" in caplog.text
            assert "HTTP 500" in caplog.text
            # Given up on the terminal event too: the config is retired all the same.
            listed = await rpc_result(
                client, "ListTaskPushNotificationConfigs", {"taskId": task["task"]["id"]}
            )
            assert listed.get("configs", []) == []


async def test_redirect_is_not_followed() -> None:
    with anyio.fail_after(TIMEOUT):
        async with receiver() as target:

            async def redirect(received: Received) -> Answer:
                return Answer(302, (("Location", f"{target.base_url}/stolen"),))

            async with receiver(redirect) as rx, in_process(LOOPBACK) as (client, service):
                await rpc_result(
                    client, "SendMessage", with_push("hello", inline(f"{rx.base_url}/hook"))
                )
                await delivery_of(service).wait_idle()
                assert rx.requests  # one POST per event, none retried
                assert len({r.body for r in rx.requests}) == len(rx.requests)
                assert delivery_of(service).statistics().gave_up == len(rx.requests)
                assert (target.connections, target.requests) == (0, [])


async def test_follow_up_message_can_register_an_inline_config() -> None:
    with anyio.fail_after(TIMEOUT):
        async with receiver() as rx, in_process(LOOPBACK) as (client, service):
            waiting = (await rpc_result(client, "SendMessage", send_params("input")))["task"]
            follow_up = with_push("Ada", inline(f"{rx.base_url}/later"), task_id=waiting["id"])
            done = await rpc_result(client, "SendMessage", follow_up)
            assert done["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            await delivery_of(service).wait_idle()
            assert rx.bodies()[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
            # A follow-up the supervisor refuses (the task is terminal) registers nothing.
            refused = with_push("again", inline(f"{rx.base_url}/x", "x"), task_id=waiting["id"])
            assert (await rpc_error(client, "SendMessage", refused))["code"] == -32004
            listed = await rpc_result(
                client, "ListTaskPushNotificationConfigs", {"taskId": waiting["id"]}
            )
            assert listed.get("configs", []) == []


async def test_streamed_message_reply_discards_the_inline_config() -> None:
    store = MemoryPushConfigStore()
    with anyio.fail_after(TIMEOUT):
        async with in_process(LOOPBACK, push_store=store) as (client, _):
            params = with_push("message", inline("http://127.0.0.1:9/hook"))
            response = await client.post(
                "/", data=envelope("SendStreamingMessage", params), headers=JSON_HEADERS
            )
            events = sse_data(await response.get_data(as_text=False))
            assert [list(e["result"]) for e in events] == [["message"]]
            assert len(store) == 0


# -- lifetime ---------------------------------------------------------------------------


async def test_configs_of_evicted_tasks_are_removed() -> None:
    store = MemoryPushConfigStore()
    config = LOOPBACK.replace(supervisor_options={"retention_max": 1})
    with anyio.fail_after(TIMEOUT):
        async with in_process(config, push_store=store) as (client, service):
            first = (await rpc_result(client, "SendMessage", send_params("one")))["task"]
            await rpc_result(
                client,
                "CreateTaskPushNotificationConfig",
                {"taskId": first["id"], "id": "kept", "url": "http://127.0.0.1:9/hook"},
            )
            assert [c.id for c in store.configs_for(first["id"])] == ["kept"]
            await rpc_result(client, "SendMessage", send_params("two"))
            await service.methods.supervisor.evict()  # (also done when the task ended)
            assert store.configs_for(first["id"]) == ()
            error = await rpc_error(client, "GetTask", {"id": first["id"]})
            assert error["code"] == -32001


async def test_config_limit_is_a_clear_error() -> None:
    with anyio.fail_after(TIMEOUT):
        async with in_process(LOOPBACK) as (client, _):
            task = (await rpc_result(client, "SendMessage", send_params("hello")))["task"]
            for i in range(32):
                await rpc_result(
                    client,
                    "CreateTaskPushNotificationConfig",
                    {"taskId": task["id"], "id": f"c{i}", "url": "http://127.0.0.1:9/"},
                )
            error = await rpc_error(
                client,
                "CreateTaskPushNotificationConfig",
                {"taskId": task["id"], "id": "c32", "url": "http://127.0.0.1:9/"},
            )
            assert error["code"] == -32602
            assert "at most 32" in error["message"]


# -- SSRF ---------------------------------------------------------------------------------

ANSWERS: dict[str, list[str]] = {
    "public.example.com": ["93.184.216.34"],
    "private.example.com": ["10.0.0.5"],
    "mixed.example.com": ["93.184.216.34", "192.168.0.10"],
    "ula.example.com": ["fd00::1"],
    "mapped.example.com": ["::ffff:127.0.0.1"],
    "metadata.example.com": ["169.254.169.254"],
}


async def fake_resolver(host: str, port: int) -> Sequence[IPAddress]:
    if host not in ANSWERS:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    return [ipaddress.ip_address(a) for a in ANSWERS[host]]


SSRF_CONFIG = ServerConfig(push_notifications=True, push_resolver=fake_resolver)

REFUSED = [
    "https://127.0.0.1/hook",
    "https://127.0.0.2:8443/hook",
    "https://[::1]/hook",
    "https://10.1.2.3/hook",
    "https://172.16.0.1/hook",
    "https://172.31.255.254/hook",
    "https://192.168.1.1/hook",
    "https://169.254.10.10/hook",
    "https://169.254.169.254/latest/meta-data/",
    "https://100.64.0.1/hook",
    "https://0.0.0.0/hook",
    "https://[::]/hook",
    "https://[::ffff:127.0.0.1]/hook",
    "https://[::ffff:a00:1]/hook",  # ::ffff:10.0.0.1
    "https://[fe80::1]/hook",
    "https://[fd00::1]/hook",
    "https://2130706433/hook",  # decimal 127.0.0.1
    "https://0177.0.0.1/hook",  # octal
    "https://0x7f.0.0.1/hook",  # hex
    "https://0x7f000001/hook",
    "https://127.1/hook",
    "https://017700000001/hook",
    "https://localhost/hook",
    "https://localhost:8443/hook",
    "https://api.localhost/hook",
    "https://metadata.google.internal/computeMetadata/v1/",
    "https://metadata/hook",
    "http://public.example.com/hook",  # scheme
    "ftp://public.example.com/hook",
    "https://user:pw@public.example.com/hook",
    "https://private.example.com/hook",  # names resolving to refused addresses
    "https://mixed.example.com/hook",
    "https://ula.example.com/hook",
    "https://mapped.example.com/hook",
    "https://metadata.example.com/latest",
]


@pytest.mark.parametrize("url", REFUSED)
async def test_ssrf_refused_at_create_time(url: str) -> None:
    secret_url = f"{url}{'&' if '?' in url else '?'}sig=query-secret-77"
    with anyio.fail_after(TIMEOUT):
        async with in_process(SSRF_CONFIG) as (client, _):
            task = (await rpc_result(client, "SendMessage", send_params("hello")))["task"]
            config = {"taskId": task["id"], **inline(secret_url)}
            error = await rpc_error(client, "CreateTaskPushNotificationConfig", config)
            assert error["code"] == -32602
            assert error["message"].startswith("push notification URL refused: ")
            violations = [d for d in error["data"] if "fieldViolations" in d]
            assert violations[0]["fieldViolations"][0]["field"] == "url"
            assert "query-secret-77" not in json.dumps(error)
            assert CREDENTIALS not in json.dumps(error)

            # Inline: refused before the task exists, so nothing is created.
            error = await rpc_error(client, "SendMessage", with_push("hello", inline(secret_url)))
            assert error["code"] == -32602
            listed = await rpc_result(client, "ListTasks", {})
            assert [t["id"] for t in listed["tasks"]] == [task["id"]]

            # Over HTTP+JSON: 400, and nothing stored.
            response = await client.post(
                f"/rest/tasks/{task['id']}/pushNotificationConfigs",
                data=json.dumps(inline(secret_url)).encode(),
                headers=JSON_HEADERS,
            )
            assert response.status_code == 400
            listed_configs = await rpc_result(
                client, "ListTaskPushNotificationConfigs", {"taskId": task["id"]}
            )
            assert listed_configs.get("configs", []) == []


async def test_public_and_unresolvable_names_are_accepted_at_create_time() -> None:
    with anyio.fail_after(TIMEOUT):
        async with in_process(SSRF_CONFIG) as (client, _):
            task = (await rpc_result(client, "SendMessage", send_params("hello")))["task"]
            for url in (
                "https://public.example.com/hook",
                "https://93.184.216.34/hook",
                "https://[2606:2800:220:1:248:1893:25c8:1946]/hook",
                # Not resolvable now: accepted, and checked again before every delivery.
                "https://unknown.example.com/hook",
            ):
                created = await rpc_result(
                    client, "CreateTaskPushNotificationConfig", {"taskId": task["id"], "url": url}
                )
                assert created["url"] == url


async def test_name_turning_private_after_create_is_refused_at_delivery(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[str] = []

    async def rebinding(host: str, port: int) -> Sequence[IPAddress]:
        calls.append(host)
        answer = "93.184.216.34" if len(calls) == 1 else "127.0.0.1"
        return [ipaddress.ip_address(answer)]

    config = ServerConfig(push_notifications=True, push_resolver=rebinding)
    caplog.set_level(logging.WARNING, logger="a2a_actors.push")
    with anyio.fail_after(TIMEOUT):
        async with receiver() as rx, in_process(config) as (client, service):
            waiting = (await rpc_result(client, "SendMessage", send_params("input")))["task"]
            # Public when created (the URL points at the receiver's port, were it followed).
            url = f"https://rebind.example.com:{rx.port}/hook"
            await rpc_result(
                client, "CreateTaskPushNotificationConfig", {"taskId": waiting["id"], "url": url}
            )
            await rpc_result(client, "SendMessage", send_params("Ada", task_id=waiting["id"]))
            await delivery_of(service).wait_idle()
            stats = delivery_of(service).statistics()
            assert stats.delivered == 0
            assert stats.gave_up >= 1
            assert stats.attempts == stats.gave_up  # refused addresses are not retried
            assert (rx.connections, rx.requests) == (0, [])
            assert "address 127.0.0.1 is loopback" in caplog.text
            assert len(calls) >= 2  # resolved once at create, again at each delivery


async def test_allow_hook_admits_a_name_and_delivery_connects_to_the_checked_address() -> None:
    async with receiver() as rx:

        async def internal(host: str, port: int) -> Sequence[IPAddress]:
            return [ipaddress.ip_address("127.0.0.1")]

        def allow(host: str, address: IPAddress | None) -> bool:
            return host == "hooks.corp.example" and address == ipaddress.ip_address("127.0.0.1")

        config = ServerConfig(
            push_notifications=True, push_allow_http=True, push_allow=allow, push_resolver=internal
        )
        with anyio.fail_after(TIMEOUT):
            async with in_process(config) as (client, service):
                url = f"http://hooks.corp.example:{rx.port}/hook"
                await rpc_result(client, "SendMessage", with_push("hello", inline(url)))
                await delivery_of(service).wait_idle()
                assert rx.requests
                # Connected to the checked address; Host still names the host.
                assert {r.headers["host"] for r in rx.requests} == {f"hooks.corp.example:{rx.port}"}
                # Other names resolving to loopback are still refused at create time.
                error = await rpc_error(
                    client,
                    "SendMessage",
                    with_push("hello", inline(f"http://other.example.com:{rx.port}/hook")),
                )
                assert error["code"] == -32602


# -- secrets ------------------------------------------------------------------------------


async def test_credentials_never_appear_in_responses_or_logs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    token, credentials, query = "tok-Zq81vX", "cred-Pp02wK", "qs-Lm44tN"
    secrets = (token, credentials, query)

    def hook(url: str, config_id: str) -> dict[str, Any]:
        return {
            "id": config_id,
            "url": f"{url}?sig={query}",
            "token": token,
            "authentication": {"scheme": "Bearer", "credentials": credentials},
        }

    async def fail(received: Received) -> Answer:
        return Answer(500)

    config = LOOPBACK.replace(push_max_attempts=2, push_backoff_base=0.001)
    seen: list[str] = []
    caplog.set_level(logging.DEBUG)  # every logger: ours, httpx, httpcore, hypercorn, quart
    with anyio.fail_after(TIMEOUT):
        async with (
            receiver() as rx,
            receiver(fail) as broken,
            real_server(config) as (url, service),
            httpx.AsyncClient(timeout=TIMEOUT) as http,
        ):

            async def record(response: httpx.Response) -> None:
                await response.aread()
                seen.append(response.text)
                seen.extend(f"{k}: {v}" for k, v in response.headers.items())

            http.event_hooks["response"] = [record]
            good = hook(f"{rx.base_url}/in", "inline")
            sent = await call(http, url, "SendMessage", with_push("stream", good))
            tid = sent["result"]["task"]["id"]
            await call(http, url, "SendMessage", with_push("hello", hook(broken.base_url, "b")))
            rest_body = {"message": message("stream"), "configuration": {}}
            rest_body["configuration"]["taskPushNotificationConfig"] = good
            await http.post(f"{url}/rest/message:stream", json=rest_body, headers=JSON_HEADERS)
            waiting = (await call(http, url, "SendMessage", send_params("input")))["result"]
            for config_id, target in (("crud", rx.base_url), ("crud2", broken.base_url)):
                await call(
                    http,
                    url,
                    "CreateTaskPushNotificationConfig",
                    {"taskId": waiting["task"]["id"], **hook(target, config_id)},
                )
            rest = f"{url}/rest/tasks/{tid}/pushNotificationConfigs"
            await http.post(rest, json=hook(rx.base_url, "r"), headers=JSON_HEADERS)
            await http.get(rest, headers=JSON_HEADERS)
            await http.get(f"{rest}/r", headers=JSON_HEADERS)
            await call(http, url, "GetTaskPushNotificationConfig", {"taskId": tid, "id": "r"})
            await call(http, url, "ListTaskPushNotificationConfigs", {"taskId": tid})
            # Refused ones (userinfo; a private address under the default policy elsewhere).
            refused = hook("https://user:pw@example.com/", "bad")
            await call(http, url, "CreateTaskPushNotificationConfig", {"taskId": tid, **refused})
            await call(http, url, "SendMessage", with_push("x", refused))
            await call(
                http,
                url,
                "SendMessage",
                with_push("Ada", hook(rx.base_url, "late"), task_id=waiting["task"]["id"]),
            )
            await delivery_of(service).wait_idle()

            # The secrets did travel where they belong: to the receivers.
            delivered = rx.requests + broken.requests
            assert {r.headers["authorization"] for r in delivered} == {f"Bearer {credentials}"}
            assert {r.headers["x-a2a-notification-token"] for r in delivered} == {token}
            assert all(r.target.endswith(f"?sig={query}") for r in delivered)
            assert delivery_of(service).statistics().gave_up > 0

    assert "push delivery gave up" in caplog.text
    assert len(seen) > 20
    logged = [caplog.text, *(r.getMessage() for r in caplog.records)]
    logged += [repr(r.args) for r in caplog.records]
    for secret in secrets:
        assert not [s for s in seen if secret in s], secret
        assert not [line for line in logged if secret in line], secret


async def test_durable_store_push_flow(tmp_path: Path) -> None:
    """With the SQLite store for tasks and configs: delivery reads its mirror, the config is
    retired in the file after the terminal event, and start-up recovery still runs."""
    with anyio.fail_after(TIMEOUT):
        async with SQLiteTaskStore.open(tmp_path / "tasks.db", synchronous="NORMAL") as store:
            config = LOOPBACK.replace(supervisor_options={"store": store})
            async with (
                receiver() as rx,
                in_process(config, push_store=store.push_configs) as (client, service),
            ):
                # Wrapped (deleting a task drops its configs), still a RecoverableStore.
                assert isinstance(service.methods.supervisor.store, RecoverableStore)
                task = await rpc_result(
                    client, "SendMessage", with_push("hello", inline(f"{rx.base_url}/d"))
                )
                await delivery_of(service).wait_idle()
                assert rx.bodies()[-1]["statusUpdate"]["status"]["state"] == (
                    "TASK_STATE_COMPLETED"
                )
                assert store.push_configs.configs_for(task["task"]["id"]) == ()


def test_cli_flag_switches_the_ssrf_policy_off() -> None:
    from a2a_actors.cli import build_parser
    from a2a_actors.server._cli.serve import _config

    base = ServerConfig(push_notifications=True)
    for argv, expected in (
        (["serve", "m:a"], False),
        (["serve", "m:a", "--allow-private-push"], True),
    ):
        config = _config(base, build_parser().parse_args(argv))
        assert config.allow_private_push is expected
        service = service_of(create_app(scenario_agent, config, backend="asyncio"))
        assert service.push.policy is not None
        assert service.push.policy.allow_private is expected
        assert service.push_delivery is not None
        assert service.push_delivery.policy is service.push.policy
