"""``a2a-actors serve ... --grpc-port`` as a subprocess: the two lines (the URL, then the
``grpc://`` address ``send`` takes), the examples and the conformance agents over gRPC (the
SDK's transport and our CLI), the refusals (trio, flags, a port in use), signals."""

from __future__ import annotations

import errno
import os
import signal
import socket
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import grpc
import grpc.aio
import httpx
import pytest
from a2a.client.transports.grpc import GrpcTransport
from a2a.types import a2a_pb2
from anyio.abc import Process
from google.protobuf import json_format

from .server_helpers import send_request

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
STARTUP = 30.0
GUARD = 120.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the SDK's grpc.aio client needs asyncio; the server is a subprocess


async def _lines(process: Process, count: int) -> list[str]:
    assert process.stdout is not None
    data = b""
    with anyio.fail_after(STARTUP):
        while data.count(b"\n") < count:
            try:
                data += await process.stdout.receive()
            except anyio.EndOfStream:
                assert process.stderr is not None
                errors = b"".join([chunk async for chunk in process.stderr])
                raise AssertionError(f"the server exited: {errors.decode()}") from None
    lines = data.decode().split("\n")
    assert lines[count:] == [""], "nothing after the announced lines"
    return lines[:count]


@asynccontextmanager
async def cli_grpc(*args: str) -> AsyncIterator[tuple[str, str, httpx.AsyncClient]]:
    """``serve ARGS --grpc-port 0``: yield (HTTP URL, gRPC address, http client); SIGTERM."""
    command = [sys.executable, "-m", "a2a_actors.cli", "serve", *args, "--grpc-port", "0"]
    async with await anyio.open_process(command, cwd=ROOT) as process:
        try:
            url, address = await _lines(process, 2)
            async with httpx.AsyncClient(timeout=STARTUP) as http:
                yield url, address, http
            process.send_signal(signal.SIGTERM)
            with anyio.fail_after(STARTUP):
                assert await process.wait() == 0
            assert process.stdout is not None
            assert b"".join([chunk async for chunk in process.stdout]) == b""
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()


async def _card(http: httpx.AsyncClient, url: str) -> a2a_pb2.AgentCard:
    raw = (await http.get(f"{url}/.well-known/agent-card.json")).content
    return json_format.Parse(raw, a2a_pb2.AgentCard(), ignore_unknown_fields=True)


@asynccontextmanager
async def sdk(card: a2a_pb2.AgentCard) -> AsyncIterator[GrpcTransport]:
    """The SDK's gRPC transport at the card's GRPC interface."""
    (target,) = [i.url for i in card.supported_interfaces if i.protocol_binding == "GRPC"]
    async with grpc.aio.insecure_channel(target) as channel:
        yield GrpcTransport(channel, card)


async def test_echo_prints_both_addresses_and_answers_over_grpc() -> None:
    with anyio.fail_after(GUARD):
        async with cli_grpc("examples.echo:agent") as (url, address, http):
            assert url.startswith("http://127.0.0.1:")
            host, _, port = address.rpartition(":")
            assert host == "grpc://127.0.0.1"  # a URL that send takes (below)
            assert port.isdigit()
            card = await _card(http, url)
            grpc_interfaces = [
                (i.url, i.protocol_version)
                for i in card.supported_interfaces
                if i.protocol_binding == "GRPC"
            ]
            assert grpc_interfaces == [(address.removeprefix("grpc://"), "1.0")]
            sent = await anyio.run_process(
                [sys.executable, "-m", "a2a_actors.cli", "send", address, "hello grpc"],
                cwd=ROOT,
                check=False,
            )
            assert sent.returncode == 0, sent.stderr
            assert sent.stdout.decode().splitlines()[1:] == ["hello grpc"]
            async with sdk(card) as transport:
                task = (await transport.send_message(send_request("hello grpc"))).task
                assert task.status.state == a2a_pb2.TASK_STATE_COMPLETED
                assert "hello grpc" in json_format.MessageToJson(task)


async def test_multi_turn_over_grpc() -> None:
    with anyio.fail_after(GUARD):
        async with (
            cli_grpc("examples.multi_turn:agent") as (url, _, http),
            sdk(await _card(http, url)) as transport,
        ):
            asked = (await transport.send_message(send_request("hi"))).task
            assert asked.status.state == a2a_pb2.TASK_STATE_INPUT_REQUIRED
            done = (await transport.send_message(send_request("Ada", task_id=asked.id))).task
            assert done.status.state == a2a_pb2.TASK_STATE_COMPLETED
            assert done.status.message.parts[0].text == "Hello, Ada!"


async def test_sleeper_streams_and_is_cancelled_over_grpc() -> None:
    with anyio.fail_after(GUARD):
        async with (
            cli_grpc("examples.sleeper:agent") as (url, _, http),
            sdk(await _card(http, url)) as transport,
        ):
            stream = transport.send_message_streaming(send_request("forever"))
            first = await anext(stream)
            task_id = first.task.id
            canceled = await transport.cancel_task(a2a_pb2.CancelTaskRequest(id=task_id))
            assert canceled.status.state == a2a_pb2.TASK_STATE_CANCELED
            rest = [event async for event in stream]
            assert rest[-1].status_update.status.state == a2a_pb2.TASK_STATE_CANCELED


@pytest.mark.parametrize("profile", ["agent", "minimal"])
async def test_the_conformance_agents_declare_grpc(profile: str) -> None:
    with anyio.fail_after(GUARD):
        async with cli_grpc(f"examples.conformance:{profile}") as (url, _, http):
            card = await _card(http, url)
            bindings = [i.protocol_binding for i in card.supported_interfaces]
            assert bindings == ["JSONRPC", "HTTP+JSON", "GRPC"]
            async with sdk(card) as transport:
                request = send_request("x", message_id=f"tck-complete-task-{uuid.uuid4()}")
                task = (await transport.send_message(request)).task
                assert task.status.message.parts[0].text == "Hello from TCK"
                if profile == "agent":
                    request = send_request("x", message_id=f"tck-stream-001-{uuid.uuid4()}")
                    events = [e async for e in transport.send_message_streaming(request)]
                    assert events[-1].status_update.status.state == (a2a_pb2.TASK_STATE_COMPLETED)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--backend", "trio", "--grpc-port", "0"],
            "--grpc-port needs --backend asyncio (grpcio's server runs on asyncio)",
        ),
        (["--grpc-host", "127.0.0.1"], "--grpc-host and --grpc-advertise need --grpc-port"),
        (
            ["--grpc-port", "0", "--grpc-advertise", "grpc://x:1"],
            "the advertised gRPC address is host:port, not 'grpc://x:1'",
        ),
    ],
)
async def test_refusals_are_one_line_and_status_2(args: list[str], said: str) -> None:
    command = [sys.executable, "-m", "a2a_actors.cli", "serve", "examples.echo:agent", *args]
    with anyio.fail_after(GUARD):
        result = await anyio.run_process(command, cwd=ROOT, check=False)
    assert result.returncode == 2
    assert result.stdout == b""
    assert result.stderr.decode() == f"a2a-actors serve: {said}\n"


@pytest.mark.parametrize("workers", [[], ["--workers", "2"]], ids=["single", "workers"])
async def test_a_grpc_port_in_use_is_one_line_naming_it(workers: list[str]) -> None:
    # One line of ours, naming the gRPC port (not the HTTP one), and not grpcio's log line.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        command = [sys.executable, "-m", "a2a_actors.cli", "serve", "examples.echo:agent"]
        command += ["--grpc-port", str(port), *workers]
        with anyio.fail_after(GUARD):
            result = await anyio.run_process(command, cwd=ROOT, check=False)
    assert result.returncode == 1
    assert result.stdout == b""
    in_use = f"[Errno {errno.EADDRINUSE}] {os.strerror(errno.EADDRINUSE)}"
    assert result.stderr.decode().splitlines() == [
        f"a2a-actors serve: cannot listen on gRPC port 127.0.0.1:{port}: {in_use}"
    ]
