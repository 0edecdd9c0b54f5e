"""``a2a-actors send`` and its Idempotency-Key: a fixed key makes running the command again
safe, and a send whose answer was lost on the way is repeated with its key and runs once.

The lost answer is real: a TCP relay on 127.0.0.1 between the CLI and the server forwards
the first SendMessage to the server, waits for the server's answer, and closes the CLI's
connection instead of passing it on.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from urllib.parse import urlsplit

import anyio
import anyio.abc
import pytest
from anyio.from_thread import start_blocking_portal

from tests.test_cli_send import _serving, run, served, talker


def _task_id(out: str) -> str:
    task_id: str = json.loads(out.splitlines()[-1])["task"]["id"]
    return task_id


def _task_ids(out: str) -> list[str]:
    return [task["id"] for task in json.loads(out.splitlines()[-1]).get("tasks", [])]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with served(talker) as base:
        yield base


def test_the_same_key_gets_the_same_task(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    first = run(capsys, "send", url, "hello", "--json", "--idempotency-key", "order-42")
    again = run(capsys, "send", url, "hello", "--json", "--idempotency-key", "order-42")
    other = run(capsys, "send", url, "hello", "--json", "--idempotency-key", "order-43")
    assert first[0] == again[0] == other[0] == 0
    assert _task_id(first[1]) == _task_id(again[1]) != _task_id(other[1])

    status, _, err = run(capsys, "send", url, "goodbye", "--idempotency-key", "order-42")
    assert status == 1
    assert "InvalidParamsError" in err
    assert "order-42 was used for another request" in err.replace("'", "")


def test_keys_and_retries_are_checked(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "send", url, "hi", "--idempotency-key", "with space")
    assert status == 2
    assert "1 to 255 visible ASCII characters" in err
    status, _, err = run(capsys, "send", url, "hi", "--retries", "-1")
    assert status == 2
    assert "--retries: expected a whole number, 0 or more" in err


class _Relay:
    """Forwards 127.0.0.1 connections to ``upstream``, except the answer to the first
    request that starts with ``POST``: the relay closes that connection once the server
    starts answering, so the server has run the request and the caller never hears."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.posts = 0

    async def handle(self, client: anyio.abc.SocketStream) -> None:
        losing = False

        async def requests(server: anyio.abc.SocketStream) -> None:
            nonlocal losing
            async for chunk in client:
                if chunk.startswith(b"POST "):
                    self.posts += 1
                    losing = losing or self.posts == 1
                await server.send(chunk)

        async def answers(server: anyio.abc.SocketStream) -> None:
            async for chunk in server:
                if losing:
                    return  # the answer goes nowhere
                await client.send(chunk)

        async with (
            client,
            await anyio.connect_tcp(*self.upstream) as server,
            anyio.create_task_group() as tg,
        ):

            async def pump(flow: Callable[[anyio.abc.SocketStream], Awaitable[None]]) -> None:
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await flow(server)
                tg.cancel_scope.cancel()

            tg.start_soon(pump, requests)
            tg.start_soon(pump, answers)


@asynccontextmanager
async def _relayed(target: object) -> AsyncIterator[tuple[str, _Relay]]:
    async with _serving(target) as url:
        parts = urlsplit(url)
        relay = _Relay((parts.hostname or "127.0.0.1", parts.port or 80))
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        async with listener, anyio.create_task_group() as tg:
            tg.start_soon(listener.serve, relay.handle)
            port = listener.extra(anyio.abc.SocketAttribute.local_port)
            yield f"http://127.0.0.1:{port}", relay
            tg.cancel_scope.cancel()


@contextmanager
def relayed(target: object) -> Iterator[tuple[str, _Relay]]:
    with (
        start_blocking_portal(backend="trio") as portal,
        portal.wrap_async_context_manager(_relayed(target)) as served_,
    ):
        yield served_


@pytest.mark.parametrize(
    ("how", "posts"),
    [
        ([], 3),  # the lost stream, its retry, and the GetTask of the settled task
        (["--stream"], 2),
        (["--return-immediately"], 2),
    ],
)
def test_a_lost_answer_is_retried_with_the_key_and_runs_once(
    how: list[str], posts: int, capsys: pytest.CaptureFixture[str]
) -> None:
    with relayed(talker) as (url, relay):
        status, out, err = run(capsys, "send", url, "hello", "--json", *how)
        assert status == 0, err
        assert relay.posts == posts
        status, listed, _ = run(capsys, "list", url, "--json")
    assert status == 0
    assert len(_task_ids(listed)) == 1  # however many tries, one task
    if not how or how == ["--return-immediately"]:
        assert _task_id(out) == _task_ids(listed)[0]


def test_without_retries_a_lost_answer_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    with relayed(talker) as (url, relay):
        status, _, err = run(capsys, "send", url, "hello", "--retries", "0")
        assert status == 1
        assert "A2AConnectionError" in err
        assert relay.posts == 1
