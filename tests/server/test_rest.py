"""The HTTP+JSON binding in-process: every route, its errors and content types."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from quart.testing import QuartClient

from a2a_actors.server import ExtendedCard, ServerConfig

from .agents import CHUNKS, QUESTION
from .helpers import JSON_HEADERS, TIMEOUT, message, open_stream, running_app, sse_data

pytestmark = pytest.mark.anyio

CONFIG = ServerConfig(push_notifications=True, extended_card=ExtendedCard(name="more"))


async def call(
    client: QuartClient, method: str, path: str, body: Any = None
) -> tuple[int, dict[str, str], Any]:
    """One REST call; (status, lower-cased headers, decoded JSON or SSE data list)."""
    response = await client.open(
        path,
        method=method,
        data=b"" if body is None else json.dumps(body).encode(),
        headers=JSON_HEADERS,
    )
    raw = await response.get_data(as_text=False)
    headers = {k.lower(): v for k, v in response.headers.items()}
    if headers["content-type"].startswith("text/event-stream"):
        return response.status_code, headers, sse_data(raw)
    return response.status_code, headers, json.loads(raw) if raw else None


async def send(client: QuartClient, text: str, **config: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"message": message(text)}
    if config:
        body["configuration"] = config
    status, headers, result = await call(client, "POST", "/rest/message:send", body)
    assert status == 200, result
    assert headers["content-type"] == "application/json"
    return result  # type: ignore[no-any-return]


async def test_send_get_list_cancel() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=CONFIG) as client:
            task = (await send(client, "hello"))["task"]
            assert task["status"]["state"] == "TASK_STATE_COMPLETED"
            assert (await send(client, "message me")).keys() == {"message"}

            status, _, got = await call(client, "GET", f"/rest/tasks/{task['id']}?historyLength=0")
            assert status == 200
            assert got["id"] == task["id"]
            assert "history" not in got

            status, _, page = await call(
                client, "GET", f"/rest/tasks?context_id={task['contextId']}&include_artifacts=true"
            )
            assert status == 200
            assert [t["id"] for t in page["tasks"]] == [task["id"]]
            assert page["tasks"][0]["artifacts"]
            _, _, page = await call(
                client,
                "GET",
                f"/rest/tasks?contextId={task['contextId']}&status=TASK_STATE_COMPLETED"
                "&pageSize=5&historyLength=0",
            )
            assert page["pageSize"] == 5
            assert "artifacts" not in page["tasks"][0]
            assert "history" not in page["tasks"][0]
            _, _, page = await call(client, "GET", "/rest/tasks?status=TASK_STATE_WORKING")
            assert page["tasks"] == []
            _, _, page = await call(
                client, "GET", "/rest/tasks?statusTimestampAfter=2999-01-01T00:00:00Z"
            )
            assert page["tasks"] == []

            sleeping = (await send(client, "sleep", returnImmediately=True))["task"]
            status, _, canceled = await call(
                client, "POST", f"/rest/tasks/{sleeping['id']}:cancel", {"metadata": {"why": "x"}}
            )
            assert status == 200
            assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
            status, _, error = await call(client, "POST", f"/rest/tasks/{sleeping['id']}:cancel")
            assert status == 400
            assert error["error"]["status"] == "FAILED_PRECONDITION"
            assert error["error"]["details"][0]["reason"] == "TASK_NOT_CANCELABLE"


async def test_errors_are_google_rpc_status() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=CONFIG) as client:
            for method, path in (
                ("GET", "/rest/tasks/nope"),
                ("POST", "/rest/tasks/nope:cancel"),
                ("GET", "/rest/tasks/nope:subscribe"),
            ):
                status, headers, body = await call(client, method, path)
                assert status == 404
                assert headers["content-type"] == "application/json"
                error = body["error"]
                assert error["code"] == 404
                assert error["status"] == "NOT_FOUND"
                assert error["message"]
                assert error["details"] == [
                    {
                        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                        "reason": "TASK_NOT_FOUND",
                        "domain": "a2a-protocol.org",
                        "metadata": error["details"][0]["metadata"],
                    }
                ]


async def test_multi_turn_and_terminal_follow_up() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=CONFIG) as client:
            first = (await send(client, "input"))["task"]
            assert first["status"]["message"]["parts"] == [{"text": QUESTION}]
            body = {"message": message("Ada", task_id=first["id"])}
            _, _, second = await call(client, "POST", "/rest/message:send", body)
            assert second["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            status, _, error = await call(client, "POST", "/rest/message:send", body)
            assert status == 400
            assert error["error"]["details"][0]["reason"] == "UNSUPPORTED_OPERATION"


async def test_stream_and_subscribe() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=CONFIG) as client:
            status, headers, events = await call(
                client, "POST", "/rest/message:stream", {"message": message("stream")}
            )
            assert status == 200
            assert headers["content-type"].startswith("text/event-stream")
            assert headers["cache-control"] == "no-store"
            assert [next(iter(e)) for e in events] == [
                "task",
                "statusUpdate",
                *["artifactUpdate"] * len(CHUNKS),
                "statusUpdate",
            ]
            task_id = events[0]["task"]["id"]
            # terminal now: a plain 400, not SSE, on both subscribe methods
            for method in ("GET", "POST"):
                status, headers, body = await call(
                    client, method, f"/rest/tasks/{task_id}:subscribe"
                )
                assert status == 400
                assert headers["content-type"] == "application/json"
                assert body["error"]["details"][0]["reason"] == "UNSUPPORTED_OPERATION"

            waiting = (await send(client, "input"))["task"]
            path = f"/rest/tasks/{waiting['id']}:subscribe"
            seen: dict[str, list[Any]] = {"GET": [], "POST": []}
            attached = 0
            both = anyio.Event()

            async def subscribe(method: str) -> None:
                nonlocal attached
                async with open_stream(client, path, b"", method=method) as events:
                    async for event in events:
                        seen[method].append(json.loads(event.data))
                        if len(seen[method]) == 1:
                            attached += 1
                            if attached == 2:
                                both.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(subscribe, "GET")
                tg.start_soon(subscribe, "POST")
                await both.wait()
                body = {"message": message("Bo", task_id=waiting["id"])}
                await call(client, "POST", "/rest/message:send", body)
            assert seen["GET"] == seen["POST"]
            assert seen["GET"][0]["task"]["id"] == waiting["id"]
            assert seen["GET"][-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_push_config_routes() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=CONFIG) as client:
            task = (await send(client, "hello"))["task"]
            base = f"/rest/tasks/{task['id']}/pushNotificationConfigs"
            config = {
                "id": "cfg",
                "url": "https://hooks.example.com",
                "authentication": {"scheme": "Bearer", "credentials": "s3cret"},
            }
            status, _, created = await call(client, "POST", base, config)
            assert status == 200
            assert created == {
                "taskId": task["id"],
                "id": "cfg",
                "url": "https://hooks.example.com",
                "authentication": {"scheme": "Bearer"},
            }
            status, _, got = await call(client, "GET", f"{base}/cfg")
            assert (status, got) == (200, created)
            status, _, listed = await call(client, "GET", f"{base}?page_size=10")
            assert (status, listed) == (200, {"configs": [created]})
            for _ in range(2):
                status, _, deleted = await call(client, "DELETE", f"{base}/cfg")
                assert (status, deleted) == (200, {})
            status, _, error = await call(client, "GET", f"{base}/cfg")
            assert status == 404
            assert error["error"]["details"][0]["reason"] == "TASK_NOT_FOUND"
            status, _, error = await call(client, "GET", "/rest/tasks/nope/pushNotificationConfigs")
            assert status == 404


async def test_capabilities_off() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=ServerConfig(streaming=False)) as client:
            task = (await send(client, "hello"))["task"]
            for method, path, body, reason in (
                (
                    "POST",
                    "/rest/message:stream",
                    {"message": message("x")},
                    "UNSUPPORTED_OPERATION",
                ),
                ("GET", f"/rest/tasks/{task['id']}:subscribe", None, "UNSUPPORTED_OPERATION"),
                (
                    "GET",
                    f"/rest/tasks/{task['id']}/pushNotificationConfigs",
                    None,
                    "PUSH_NOTIFICATION_NOT_SUPPORTED",
                ),
                ("GET", "/rest/extendedAgentCard", None, "UNSUPPORTED_OPERATION"),
            ):
                status, _, error = await call(client, method, path, body)
                assert status == 400, path
                assert error["error"]["details"][0]["reason"] == reason, path


async def test_extended_card_route() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=CONFIG) as client:
            status, headers, card = await call(client, "GET", "/rest/extendedAgentCard")
            assert status == 200
            assert headers["content-type"] == "application/json"
            assert card["name"] == "more"


async def _reply_text(client: QuartClient, path: str, body: dict[str, Any]) -> str:
    status, _, result = await call(client, "POST", path, body)
    assert status == 200, result
    return str(result["message"]["parts"][0]["text"])


async def test_tenant_prefixed_routes() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=CONFIG) as client:
            # the path's tenant reaches the agent, and wins over the body's
            tenant = {"message": message("tenant")}
            assert await _reply_text(client, "/rest/acme/message:send", tenant) == "acme"
            both = {**tenant, "tenant": "other"}
            assert await _reply_text(client, "/rest/acme/message:send", both) == "acme"
            assert await _reply_text(client, "/rest/message:send", both) == "other"
            assert await _reply_text(client, "/rest/message:send", tenant) == ""

            # every route is there below the tenant
            status, _, sent = await call(
                client, "POST", "/rest/acme/message:send", {"message": message("hello")}
            )
            assert status == 200
            task_id = sent["task"]["id"]
            status, _, got = await call(client, "GET", f"/rest/acme/tasks/{task_id}")
            assert (status, got["id"]) == (200, task_id)
            status, _, listed = await call(client, "GET", "/rest/acme/tasks?pageSize=5")
            assert status == 200
            assert task_id in [t["id"] for t in listed["tasks"]]
            status, _, events = await call(
                client, "POST", "/rest/acme/message:stream", {"message": message("stream it")}
            )
            assert status == 200
            assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
            status, _, canceled = await call(client, "POST", f"/rest/acme/tasks/{task_id}:cancel")
            assert status == 400  # terminal already: TaskNotCancelable, on the tenant route
            assert canceled["error"]["details"][0]["reason"] == "TASK_NOT_CANCELABLE"

            config = {"url": "https://example.com/hook", "token": "t"}
            status, _, created = await call(
                client, "POST", f"/rest/acme/tasks/{task_id}/pushNotificationConfigs", config
            )
            assert status == 200, created
            configs = f"/rest/acme/tasks/{task_id}/pushNotificationConfigs"
            status, _, fetched = await call(client, "GET", f"{configs}/{created['id']}")
            assert (status, fetched["id"]) == (200, created["id"])
            status, _, page = await call(client, "GET", configs)
            assert [c["id"] for c in page["configs"]] == [created["id"]]
            status, _, _ = await call(client, "DELETE", f"{configs}/{created['id']}")
            assert status == 200

            status, _, card = await call(client, "GET", "/rest/acme/extendedAgentCard")
            assert (status, card["name"]) == (200, "more")

            # unknown below a tenant: 404; a known route with another method: 405
            status, _, _ = await call(client, "GET", "/rest/acme/nothing/here")
            assert status == 404
            status, headers, body = await call(client, "DELETE", "/rest/acme/message:send")
            assert status == 405
            assert headers["allow"] == "POST"
            error = body["error"]
            assert (error["code"], error["status"]) == (405, "UNIMPLEMENTED")
            assert error["details"][0]["reason"] == "METHOD_NOT_ALLOWED"


async def test_a_body_past_the_limit_is_413_resource_exhausted_naming_the_limit() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=ServerConfig(max_body_bytes=512)) as client:
            status, _, body = await call(
                client, "POST", "/rest/message:send", {"message": message("x" * 600)}
            )
            assert status == 413
            error = body["error"]
            assert (error["code"], error["status"]) == (413, "RESOURCE_EXHAUSTED")
            assert error["details"][0]["reason"] == "PAYLOAD_TOO_LARGE"
            assert "limit of 512 bytes" in error["message"]


async def test_tenant_of_each_request_reaches_the_agent() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=CONFIG) as client:
            status, _, first = await call(
                client, "POST", "/rest/acme/message:send", {"message": message("tenant ask")}
            )
            assert status == 200
            task = first["task"]
            assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
            follow_up = message("here", task_id=task["id"], context_id=task["contextId"])
            status, _, second = await call(
                client, "POST", "/rest/beta/message:send", {"message": follow_up}
            )
            assert status == 200, second
            reply = second["task"]["history"][-1]["parts"][0]["text"]
            assert reply == "acme/beta"
