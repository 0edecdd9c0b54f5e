"""Idempotent sends: a retried SendMessage or SendStreamingMessage with the same
``Idempotency-Key`` returns the task the first one created, however many arrive at once."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from quart.testing import QuartClient

from a2a_actors.cli import build_parser
from a2a_actors.runtime import Agent, TaskContext
from a2a_actors.server import ServerConfig
from a2a_actors.server._cli.serve import _config

from .helpers import (
    JSON_HEADERS,
    TIMEOUT,
    envelope,
    post,
    rpc,
    rpc_result,
    running_app,
    send_params,
    sse_data,
    stream,
)

pytestmark = pytest.mark.anyio


class Counted:
    """An agent that counts its runs; ``gate`` runs wait for :attr:`release`."""

    def __init__(self) -> None:
        self.runs = 0
        self.release = anyio.Event()
        self.started = anyio.Event()

    def agent(self) -> Agent:
        async def handle(ctx: TaskContext) -> str | None:
            self.runs += 1
            if ctx.text == "message":
                await ctx.reply("just a message")
                return None
            if ctx.text == "ask":
                reply = await ctx.ask("Which one?")
                return f"chose {reply.text}"
            await ctx.update("working")
            self.started.set()
            if ctx.text == "gate":
                await self.release.wait()
            return f"done {ctx.text}"

        return Agent(handler=handle, name="counted")


def keyed(key: str) -> dict[str, str]:
    return {"Idempotency-Key": key}


async def send(client: QuartClient, text: str, key: str, **kwargs: Any) -> dict[str, Any]:
    return await rpc(client, "SendMessage", send_params(text, **kwargs), headers=keyed(key))


async def test_a_retried_send_returns_the_first_task_and_runs_nothing_again() -> None:
    counted = Counted()
    with anyio.fail_after(TIMEOUT):
        async with running_app(counted.agent()) as client:
            first = (await send(client, "hello", "k-1"))["result"]["task"]
            again = (await send(client, "hello", "k-1"))["result"]["task"]
            assert again == first
            assert first["status"]["state"] == "TASK_STATE_COMPLETED"
            assert counted.runs == 1
            other = (await send(client, "hello", "k-2"))["result"]["task"]  # another key
            assert other["id"] != first["id"]
            plain = await rpc_result(client, "SendMessage", send_params("hello"))  # no key
            assert plain["task"]["id"] not in (first["id"], other["id"])
            assert counted.runs == 3


async def test_retries_arriving_at_once_make_one_task() -> None:
    counted = Counted()
    ids: list[str] = []
    with anyio.fail_after(TIMEOUT):
        async with running_app(counted.agent()) as client:

            async def one() -> None:
                answer = await send(client, "gate", "burst")
                ids.append(answer["result"]["task"]["id"])

            async with anyio.create_task_group() as tg:
                for _ in range(5):
                    tg.start_soon(one)
                await counted.started.wait()
                counted.release.set()
            assert len(ids) == 5
            assert len(set(ids)) == 1
            assert counted.runs == 1


async def test_the_same_key_for_another_request_is_refused() -> None:
    counted = Counted()
    with anyio.fail_after(TIMEOUT):
        async with running_app(counted.agent()) as client:
            await send(client, "hello", "k")
            error = (await send(client, "goodbye", "k"))["error"]
            assert error["code"] == -32602
            assert error["message"] == (
                "Idempotency-Key 'k' was used for another request (within its retention "
                "window); use a new key for a new request"
            )
            # a fresh messageId is the same request (only the content counts)
            again = await send(client, "hello", "k", mid="another-message-id")
            assert again["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            assert counted.runs == 1


async def test_keys_belong_to_their_principal() -> None:
    counted = Counted()
    config = ServerConfig(api_keys={"a-key": "alice", "b-key": "bob"})
    with anyio.fail_after(TIMEOUT):
        async with running_app(counted.agent(), config) as client:
            alice = await rpc(
                client,
                "SendMessage",
                send_params("hi"),
                headers={**keyed("k"), "X-API-Key": "a-key"},
            )
            bob = await rpc(
                client,
                "SendMessage",
                send_params("hi"),
                headers={**keyed("k"), "X-API-Key": "b-key"},
            )
            assert alice["result"]["task"]["id"] != bob["result"]["task"]["id"]
            assert counted.runs == 2


async def test_a_malformed_key_is_refused() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(Counted().agent()) as client:
            error = (await send(client, "hello", "x" * 256))["error"]
            assert error["code"] == -32600
            assert error["message"] == "Idempotency-Key must be 1 to 255 visible ASCII characters"


async def test_a_send_refused_before_its_task_existed_leaves_the_key_free() -> None:
    counted = Counted()
    config = ServerConfig(max_live_tasks=1)
    with anyio.fail_after(TIMEOUT):
        async with running_app(counted.agent(), config) as client:
            held = await rpc_result(client, "SendMessage", send_params("ask"))  # the one live
            status, _, body = await post(
                client, "/", envelope("SendMessage", send_params("hello")), keyed("free")
            )
            assert (status, json.loads(body)["error"]["code"]) == (429, -32050)
            await rpc_result(
                client, "SendMessage", send_params("b", task_id=held["task"]["id"])
            )  # frees the slot
            done = (await send(client, "hello", "free"))["result"]["task"]
            assert done["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_a_message_reply_and_a_follow_up_are_replayed_too() -> None:
    counted = Counted()
    with anyio.fail_after(TIMEOUT):
        async with running_app(counted.agent()) as client:
            first = (await send(client, "message", "m"))["result"]
            assert (await send(client, "message", "m"))["result"] == first
            asked = (await send(client, "ask", "q"))["result"]["task"]
            task_id = asked["id"]
            answered = (await send(client, "blue", "a", task_id=task_id))["result"]["task"]
            again = (await send(client, "blue", "a", task_id=task_id))["result"]["task"]
            assert again == answered  # not delivered twice (the task ended after one)
            assert answered["status"]["state"] == "TASK_STATE_COMPLETED"
            assert counted.runs == 2  # message, ask (its run resumed, not run again)


async def test_a_retried_stream_reattaches_to_the_task() -> None:
    counted = Counted()
    params = send_params("gate")
    with anyio.fail_after(TIMEOUT):
        async with running_app(counted.agent()) as client:
            first_events: list[Any] = []

            async def first() -> None:
                _, _, raw = await stream(
                    client, "/", envelope("SendStreamingMessage", params), keyed("s")
                )
                first_events.extend(sse_data(raw))

            async with anyio.create_task_group() as tg:
                tg.start_soon(first)
                await counted.started.wait()
                retry: list[Any] = []

                async def second() -> None:
                    _, _, raw = await stream(
                        client, "/", envelope("SendStreamingMessage", params), keyed("s")
                    )
                    retry.extend(sse_data(raw))

                tg.start_soon(second)
                await anyio.wait_all_tasks_blocked()
                counted.release.set()
            task_id = first_events[0]["result"]["task"]["id"]
            assert retry[0]["result"]["task"]["id"] == task_id  # the snapshot first
            last = retry[-1]["result"]["statusUpdate"]
            assert (last["taskId"], last["status"]["state"]) == (task_id, "TASK_STATE_COMPLETED")
            # after the end: the final snapshot, as one event
            _, _, raw = await stream(
                client, "/", envelope("SendStreamingMessage", params), keyed("s")
            )
            (only,) = sse_data(raw)
            assert only["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            assert counted.runs == 1


async def test_the_rest_binding_reads_the_header_too() -> None:
    counted = Counted()
    body = json.dumps(send_params("hello")).encode()
    with anyio.fail_after(TIMEOUT):
        async with running_app(counted.agent()) as client:
            headers = {**JSON_HEADERS, **keyed("r")}
            first = await client.post("/rest/message:send", data=body, headers=headers)
            again = await client.post("/rest/message:send", data=body, headers=headers)
            assert (await first.get_json())["task"]["id"] == (await again.get_json())["task"]["id"]
            assert counted.runs == 1


def test_the_serve_flag_sets_how_long_keys_are_kept() -> None:
    base = ServerConfig()
    assert base.idempotency_ttl == 86400
    args = build_parser().parse_args(["serve", "m:a", "--idempotency-ttl", "60"])
    assert _config(base, args).idempotency_ttl == 60
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "m:a", "--idempotency-ttl", "0"])
    with pytest.raises(ValueError, match="idempotency_ttl"):
        ServerConfig(idempotency_ttl=0)
