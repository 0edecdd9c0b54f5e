"""The JSON-RPC binding in-process: every method, streams, errors (both backends)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from a2a_actors.server import ExtendedCard, ServerConfig

from .agents import CHUNKS, EXTENSION, QUESTION, REQUIRED_EXTENSION, SKILL
from .helpers import (
    HTTPX_EARLY_EXIT,
    JSON_HEADERS,
    TIMEOUT,
    envelope,
    open_stream,
    post,
    rpc,
    rpc_error,
    rpc_result,
    running_app,
    send_params,
    served,
    sse_data,
    sse_lines,
    stream,
)

pytestmark = pytest.mark.anyio

ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


async def test_send_message_blocking_echo() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            result = await rpc_result(client, "SendMessage", send_params("hello"))
            task = result["task"]
            assert task["status"]["state"] == "TASK_STATE_COMPLETED"
            assert task["artifacts"] == [
                {"artifactId": "echo", "name": "echo", "parts": [{"text": "hello"}]}
            ]
            assert [m["parts"] for m in task["history"]] == [[{"text": "hello"}]]
            assert task["contextId"]


async def test_send_message_reply_is_a_message() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            result = await rpc_result(client, "SendMessage", send_params("message hi"))
            assert set(result) == {"message"}
            assert result["message"]["role"] == "ROLE_AGENT"
            assert result["message"]["parts"] == [{"text": "message hi"}]


async def test_return_immediately_then_cancel() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            params = send_params("sleep", configuration={"returnImmediately": True})
            task = (await rpc_result(client, "SendMessage", params))["task"]
            assert task["status"]["state"] in {"TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"}

            canceled = await rpc_result(client, "CancelTask", {"id": task["id"]})
            assert canceled["id"] == task["id"]
            assert canceled["status"]["state"] == "TASK_STATE_CANCELED"

            error = await rpc_error(client, "CancelTask", {"id": task["id"]})
            assert error["code"] == -32002
            assert error["data"][0]["reason"] == "TASK_NOT_CANCELABLE"


async def test_history_length_zero_omits_history() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            params = send_params("hello", configuration={"historyLength": 0})
            task = (await rpc_result(client, "SendMessage", params))["task"]
            assert "history" not in task
            got = await rpc_result(client, "GetTask", {"id": task["id"], "historyLength": 1})
            assert len(got["history"]) == 1
            got = await rpc_result(client, "GetTask", {"id": task["id"], "history_length": 0})
            assert "history" not in got


async def test_get_unknown_task_exact_error_payload() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            response = await rpc(client, "GetTask", {"id": "nope"}, rid="req-7")
            assert response["id"] == "req-7"
            assert response["jsonrpc"] == "2.0"
            error = response["error"]
            assert error["code"] == -32001
            assert error["data"][0]["@type"] == ERROR_INFO
            assert error["data"][0]["reason"] == "TASK_NOT_FOUND"
            assert error["data"][0]["domain"] == "a2a-protocol.org"


async def test_list_tasks_filters_and_snake_case_params() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            ctx = "ctx-list"
            ids = []
            for text in ("one", "two", "three"):
                result = await rpc_result(client, "SendMessage", send_params(text, context_id=ctx))
                ids.append(result["task"]["id"])
            await rpc_result(client, "SendMessage", send_params("elsewhere"))

            page = await rpc_result(client, "ListTasks", {"context_id": ctx, "page_size": 2})
            assert page["pageSize"] == 2
            assert page["totalSize"] == 3
            assert len(page["tasks"]) == 2
            assert page["nextPageToken"]
            assert all("artifacts" not in t for t in page["tasks"])
            rest = await rpc_result(
                client, "ListTasks", {"contextId": ctx, "pageToken": page["nextPageToken"]}
            )
            assert rest["nextPageToken"] == ""
            listed = {t["id"] for t in (*page["tasks"], *rest["tasks"])}
            assert listed == set(ids)

            with_artifacts = await rpc_result(
                client, "ListTasks", {"contextId": ctx, "include_artifacts": True}
            )
            assert all(t["artifacts"] for t in with_artifacts["tasks"])
            empty = await rpc_result(client, "ListTasks", {"contextId": "no-such-context"})
            assert empty == {"tasks": [], "nextPageToken": "", "pageSize": 50, "totalSize": 0}
            error = await rpc_error(client, "ListTasks", {"pageSize": 1000})
            assert error["code"] == -32602


async def test_multi_turn() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            first = (await rpc_result(client, "SendMessage", send_params("input please")))["task"]
            assert first["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
            assert first["status"]["message"]["parts"] == [{"text": QUESTION}]

            follow_up = send_params("Ada", task_id=first["id"])
            second = (await rpc_result(client, "SendMessage", follow_up))["task"]
            assert second["id"] == first["id"]
            assert second["contextId"] == first["contextId"]
            assert second["status"]["state"] == "TASK_STATE_COMPLETED"
            assert second["artifacts"][0]["parts"] == [{"text": "Ada"}]

            again = await rpc_error(client, "SendMessage", send_params("x", task_id=first["id"]))
            assert again["code"] == -32004
            unknown = await rpc_error(client, "SendMessage", send_params("x", task_id="made-up"))
            assert unknown["code"] == -32001


async def test_streaming_message() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            body = envelope("SendStreamingMessage", send_params("stream it"), rid="s1")
            status, headers, raw = await stream(client, "/", body)
            assert status == 200
            assert headers["content-type"].startswith("text/event-stream")
            assert headers["cache-control"] == "no-store"
            assert headers["x-accel-buffering"] == "no"
            events = sse_data(raw)
            assert all(e["jsonrpc"] == "2.0" and e["id"] == "s1" for e in events)
            results = [e["result"] for e in events]
            assert [next(iter(r)) for r in results] == [
                "task",
                "statusUpdate",
                *["artifactUpdate"] * len(CHUNKS),
                "statusUpdate",
            ]
            chunks = [r["artifactUpdate"] for r in results[2:-1]]
            assert [c.get("append", False) for c in chunks] == [False, True, True]
            assert [c.get("lastChunk", False) for c in chunks] == [False, False, True]
            assert results[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_streaming_message_reply_is_one_message_event() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            body = envelope("SendStreamingMessage", send_params("message only"))
            _, _, raw = await stream(client, "/", body)
            assert [set(e["result"]) for e in sse_data(raw)] == [{"message"}]


async def test_stream_ends_at_input_required() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            body = envelope("SendStreamingMessage", send_params("input"))
            _, _, raw = await stream(client, "/", body)
            last = sse_data(raw)[-1]["result"]["statusUpdate"]
            assert last["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"


async def test_subscribe_two_subscribers_see_the_same_events() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            task = (await rpc_result(client, "SendMessage", send_params("input")))["task"]
            body = envelope("SubscribeToTask", {"id": task["id"]})
            seen: list[list[Any]] = [[], []]
            both_started = anyio.Event()
            first_events = 0

            async def subscriber(index: int) -> None:
                nonlocal first_events
                async with open_stream(client, "/", body) as events:
                    async for event in events:
                        seen[index].append(json.loads(event.data)["result"])
                        if len(seen[index]) == 1:
                            first_events += 1
                            if first_events == 2:
                                both_started.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(subscriber, 0)
                tg.start_soon(subscriber, 1)
                await both_started.wait()
                follow_up = send_params("Grace", task_id=task["id"])
                done = (await rpc_result(client, "SendMessage", follow_up))["task"]
                assert done["status"]["state"] == "TASK_STATE_COMPLETED"

            assert seen[0] == seen[1]
            assert seen[0][0]["task"]["id"] == task["id"]
            assert seen[0][0]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
            assert seen[0][-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


@HTTPX_EARLY_EXIT
async def test_closing_one_subscriber_leaves_the_other() -> None:
    with anyio.fail_after(TIMEOUT):
        async with served() as url, httpx.AsyncClient(base_url=url) as http:
            response = await http.post(
                "/", content=envelope("SendMessage", send_params("input")), headers=JSON_HEADERS
            )
            task = response.json()["result"]["task"]
            body = envelope("SubscribeToTask", {"id": task["id"]})
            async with (
                http.stream("POST", "/", content=body, headers=JSON_HEADERS) as keep,
                sse_lines(keep) as kept,
            ):
                assert (await anext(kept)).startswith("id: ")
                async with (
                    http.stream("POST", "/", content=body, headers=JSON_HEADERS) as other,
                    sse_lines(other) as lines,
                ):
                    assert (await anext(lines)).startswith("id: ")
                # the second subscriber hung up; the first one still gets everything
                follow_up = envelope("SendMessage", send_params("Lin", task_id=task["id"]))
                done = (await http.post("/", content=follow_up, headers=JSON_HEADERS)).json()
                assert done["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
                rest = [json.loads(line[6:]) async for line in kept if line.startswith("data: ")]
            last = rest[-1]["result"]["statusUpdate"]
            assert last["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_subscribe_errors_are_plain_json() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            task = (await rpc_result(client, "SendMessage", send_params("done")))["task"]
            status, headers, raw = await stream(
                client, "/", envelope("SubscribeToTask", {"id": task["id"]})
            )
            assert status == 200
            assert headers["content-type"] == "application/json"
            assert json.loads(raw)["error"]["code"] == -32004
            _, _, raw = await stream(client, "/", envelope("SubscribeToTask", {"id": "nope"}))
            assert json.loads(raw)["error"]["code"] == -32001


async def test_ping_comment_on_idle_stream() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=ServerConfig(ping_interval=0.01)) as client:
            params = send_params("sleep", configuration={"returnImmediately": True})
            task = (await rpc_result(client, "SendMessage", params))["task"]
            async with client.request("/", method="POST", headers=dict(JSON_HEADERS)) as connection:
                await connection.send(envelope("SubscribeToTask", {"id": task["id"]}))
                await connection.send_complete()
                received = b""
                while b": ping\n\n" not in received:
                    received += await connection.receive()
                await rpc_result(client, "CancelTask", {"id": task["id"]})
                while chunk := await connection.receive():
                    received += chunk
            assert received.startswith(b"id: ")
            last = sse_data(received)[-1]["result"]["statusUpdate"]
            assert last["status"]["state"] == "TASK_STATE_CANCELED"


async def test_push_config_crud() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=ServerConfig(push_notifications=True)) as client:
            task = (await rpc_result(client, "SendMessage", send_params("hello")))["task"]
            config = {
                "taskId": task["id"],
                "id": "cfg-1",
                "url": "https://hooks.example.com/a2a",
                "token": "secret-token",
                "authentication": {"scheme": "Bearer", "credentials": "secret-credentials"},
            }
            created = await rpc_result(client, "CreateTaskPushNotificationConfig", config)
            assert created == {
                "taskId": task["id"],
                "id": "cfg-1",
                "url": "https://hooks.example.com/a2a",
                "authentication": {"scheme": "Bearer"},
            }
            replaced = await rpc_result(
                client, "CreateTaskPushNotificationConfig", {**config, "url": "https://b.example"}
            )
            assert replaced["url"] == "https://b.example"
            unnamed = await rpc_result(
                client,
                "CreateTaskPushNotificationConfig",
                {"task_id": task["id"], "url": "https://c.example"},
            )
            assert unnamed["id"]
            assert unnamed["id"] != task["id"]

            got = await rpc_result(
                client, "GetTaskPushNotificationConfig", {"taskId": task["id"], "id": "cfg-1"}
            )
            assert got == {**created, "url": "https://b.example"}
            listed = await rpc_result(
                client, "ListTaskPushNotificationConfigs", {"taskId": task["id"], "pageSize": 1}
            )
            assert [c["id"] for c in listed["configs"]] == ["cfg-1"]
            assert "token" not in listed["configs"][0]
            page2 = await rpc_result(
                client,
                "ListTaskPushNotificationConfigs",
                {"taskId": task["id"], "pageToken": listed["nextPageToken"]},
            )
            assert [c["id"] for c in page2["configs"]] == [unnamed["id"]]
            assert "nextPageToken" not in page2

            for _ in range(2):
                deleted = await rpc_result(
                    client,
                    "DeleteTaskPushNotificationConfig",
                    {"taskId": task["id"], "id": "cfg-1"},
                )
                assert deleted is None
            error = await rpc_error(
                client, "GetTaskPushNotificationConfig", {"taskId": task["id"], "id": "cfg-1"}
            )
            assert error["code"] == -32001
            error = await rpc_error(
                client, "ListTaskPushNotificationConfigs", {"taskId": "no-such-task"}
            )
            assert error["code"] == -32001


async def test_push_config_limit_per_task() -> None:
    config = ServerConfig(push_notifications=True, max_push_configs_per_task=2)
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=config) as client:
            task = (await rpc_result(client, "SendMessage", send_params("hello")))["task"]
            for i in range(2):
                await rpc_result(
                    client,
                    "CreateTaskPushNotificationConfig",
                    {"taskId": task["id"], "id": f"c{i}", "url": "https://x.example"},
                )
            error = await rpc_error(
                client,
                "CreateTaskPushNotificationConfig",
                {"taskId": task["id"], "id": "c9", "url": "https://x.example"},
            )
            assert error["code"] == -32602
            # replacing an existing one is still allowed
            await rpc_result(
                client,
                "CreateTaskPushNotificationConfig",
                {"taskId": task["id"], "id": "c0", "url": "https://y.example"},
            )


async def test_push_methods_refused_when_disabled() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            task = (await rpc_result(client, "SendMessage", send_params("hello")))["task"]
            for method, params in (
                ("CreateTaskPushNotificationConfig", {"taskId": task["id"], "url": "https://x"}),
                ("GetTaskPushNotificationConfig", {"taskId": task["id"], "id": "a"}),
                ("ListTaskPushNotificationConfigs", {"taskId": task["id"]}),
                ("DeleteTaskPushNotificationConfig", {"taskId": task["id"], "id": "a"}),
            ):
                error = await rpc_error(client, method, params)
                assert error["code"] == -32003, method
            inline = send_params(
                "hello", configuration={"taskPushNotificationConfig": {"url": "https://x"}}
            )
            assert (await rpc_error(client, "SendMessage", inline))["code"] == -32003


async def test_inline_push_config_is_registered() -> None:
    # The config is retired once its task's terminal event has been delivered (or given
    # up); a long backoff keeps the undeliverable first attempt's retry far away.
    config = ServerConfig(push_notifications=True, push_backoff_base=3600, push_backoff_max=3600)
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=config) as client:
            inline = {"id": "inline", "url": "https://hooks.example.com", "token": "t"}
            params = send_params("hello", configuration={"taskPushNotificationConfig": inline})
            task = (await rpc_result(client, "SendMessage", params))["task"]
            listed = await rpc_result(
                client, "ListTaskPushNotificationConfigs", {"taskId": task["id"]}
            )
            assert listed["configs"] == [
                {"taskId": task["id"], "id": "inline", "url": "https://hooks.example.com"}
            ]

            body = envelope("SendStreamingMessage", params)
            _, _, raw = await stream(client, "/", body)
            streamed_id = sse_data(raw)[0]["result"]["task"]["id"]
            listed = await rpc_result(
                client, "ListTaskPushNotificationConfigs", {"taskId": streamed_id}
            )
            assert [c["id"] for c in listed["configs"]] == ["inline"]


async def test_inline_push_config_of_a_message_reply_is_discarded() -> None:
    from a2a_actors.server._push_configs import MemoryPushConfigStore

    store = MemoryPushConfigStore()
    config = ServerConfig(push_notifications=True)
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=config, push_store=store) as client:
            inline = {"id": "inline", "url": "https://hooks.example.com"}
            params = send_params("message", configuration={"taskPushNotificationConfig": inline})
            result = await rpc_result(client, "SendMessage", params)
            assert "message" in result
            assert (await rpc_result(client, "ListTasks", {}))["tasks"] == []
            # It was registered while the task was provisional, then discarded with it.
            assert store._by_task == {}
            kept = send_params("hello", configuration={"taskPushNotificationConfig": inline})
            task = (await rpc_result(client, "SendMessage", kept))["task"]
            assert list(store._by_task) == [task["id"]]


async def test_trace_context_headers_reach_the_agent() -> None:
    from a2a_actors.runtime import TaskContext, agent

    @agent(name="tracer")
    async def tracer(ctx: TaskContext) -> str:
        return f"{ctx.headers.get('traceparent', '-')}|{ctx.headers.get('tracestate', '-')}"

    parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    with anyio.fail_after(TIMEOUT):
        async with running_app(tracer) as client:
            result = await rpc_result(
                client,
                "SendMessage",
                send_params("hi"),
                headers={"traceparent": parent, "tracestate": "a=1", "X-Other": "no"},
            )
            status = result["task"]["status"]["message"]["parts"][0]["text"]
            assert status == f"{parent}|a=1"
            plain = await rpc_result(client, "SendMessage", send_params("hi"))
            assert plain["task"]["status"]["message"]["parts"][0]["text"] == "-|-"


async def test_extended_card() -> None:
    extra = SKILL.__class__(id="secret", name="Secret", description="hidden", tags=("x",))
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            error = await rpc_error(client, "GetExtendedAgentCard", {})
            assert error["code"] == -32004
        async with running_app(config=ServerConfig(declare_extended_card=True)) as client:
            error = await rpc_error(client, "GetExtendedAgentCard")
            assert error["code"] == -32007
        config = ServerConfig(extended_card=ExtendedCard(name="Extended", skills=(extra,)))
        async with running_app(config=config) as client:
            card = await rpc_result(client, "GetExtendedAgentCard")
            assert card["name"] == "Extended"
            assert [s["id"] for s in card["skills"]] == ["scenarios", "secret"]
            assert card["capabilities"]["extendedAgentCard"] is True


async def test_extensions_requested_activated_and_required() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            status, headers, raw = await post(
                client,
                "/",
                envelope("SendMessage", send_params("whoami")),
                {"A2A-Extensions": f"{EXTENSION}, urn:unknown"},
            )
            assert status == 200
            text = json.loads(raw)["result"]["message"]["parts"][0]["text"]
            assert text == f"None|{EXTENSION},urn:unknown"
            assert headers["a2a-extensions"] == EXTENSION

        async with running_app(config=ServerConfig(enforce_required_extensions=True)) as client:
            error = await rpc_error(client, "SendMessage", send_params("hello"))
            assert error["code"] == -32008
            assert error["data"][0]["reason"] == "EXTENSION_SUPPORT_REQUIRED"
            ok = await rpc_result(
                client,
                "SendMessage",
                send_params("hello"),
                headers={"A2A-Extensions": REQUIRED_EXTENSION},
            )
            assert ok["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            # only message sending is gated
            await rpc_result(client, "ListTasks", {})


async def test_capacity_refusal_is_429_with_retry_after() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=ServerConfig(max_live_tasks=1)) as client:
            params = send_params("sleep", configuration={"returnImmediately": True})
            task = (await rpc_result(client, "SendMessage", params))["task"]
            status, headers, raw = await post(client, "/", envelope("SendMessage", params))
            assert status == 429
            assert int(headers["retry-after"]) >= 1
            assert json.loads(raw)["error"]["code"] == -32050
            status, headers, raw = await post(
                client, "/rest/message:send", json.dumps(params).encode()
            )
            assert status == 429
            assert "retry-after" in headers
            assert json.loads(raw)["error"]["status"] == "RESOURCE_EXHAUSTED"
            await rpc_result(client, "CancelTask", {"id": task["id"]})


async def test_streaming_refused_when_disabled() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=ServerConfig(streaming=False)) as client:
            for method, params in (
                ("SendStreamingMessage", send_params("hello")),
                ("SubscribeToTask", {"id": "x"}),
            ):
                _, headers, raw = await stream(client, "/", envelope(method, params))
                assert headers["content-type"] == "application/json"
                assert json.loads(raw)["error"]["code"] == -32004


async def test_the_tenant_of_the_params_reaches_the_agent() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            params = {**send_params("tenant"), "tenant": "acme"}
            result = await rpc_result(client, "SendMessage", params)
            assert result["message"]["parts"][0]["text"] == "acme"
            result = await rpc_result(client, "SendMessage", send_params("tenant"))
            assert result["message"]["parts"][0]["text"] == ""


async def test_a_streamed_follow_up_brings_its_own_tenant() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            params = {**send_params("tenant ask"), "tenant": "acme"}
            status, _, body = await stream(client, "/", envelope("SendStreamingMessage", params))
            assert status == 200
            events = sse_data(body)
            task = events[0]["result"]["task"]
            last = events[-1]["result"]["statusUpdate"]["status"]
            assert last["state"] == "TASK_STATE_INPUT_REQUIRED"
            follow_up = {
                **send_params("here", task_id=task["id"], context_id=task["contextId"]),
                "tenant": "beta",
            }
            status, _, body = await stream(client, "/", envelope("SendStreamingMessage", follow_up))
            assert status == 200
            # the follow-up's stream ends with the task's answer
            final = sse_data(body)[-1]["result"]
            status = (final.get("statusUpdate") or final["task"])["status"]
            assert status["state"] == "TASK_STATE_COMPLETED"
            assert status["message"]["parts"][0]["text"] == "acme/beta"
