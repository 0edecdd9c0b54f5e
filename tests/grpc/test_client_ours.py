"""Our gRPC client against our gRPC server: every method, from Python and from the CLI.

The server is ours (``ServerConfig.grpc``, on asyncio) serving the client suite's scenario
agent; its card lists JSON-RPC, HTTP+JSON and GRPC. The client discovers the card over HTTP
and is told to speak gRPC (``bindings=("GRPC",)``, ``--binding grpc``); by default it keeps to
JSON-RPC, which that card lists first.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import msgspec
import pytest

from a2a_actors.client import A2AClient
from a2a_actors.client._cli.commands import main
from a2a_actors.protocol import codec
from a2a_actors.protocol._models import StreamResponse, Task, TaskState
from a2a_actors.protocol._requests import ListTasksResponse, SendMessageResponse
from tests.client.scenarios import MULTI_TURN_QUESTION, STREAM_CHUNKS, TIMEOUT
from tests.grpc.test_client_sdk import SCENARIOS


@asynccontextmanager
async def grpc_client(url: str) -> AsyncIterator[A2AClient]:
    client = await A2AClient.connect(url, bindings=("GRPC",), card_cache=None)
    async with client:
        assert client.card is not None
        (grpc_interface,) = [
            i for i in client.card.supported_interfaces if i.protocol_binding == "GRPC"
        ]
        assert client.interface == grpc_interface
        yield client


@pytest.mark.parametrize("name", SCENARIOS)
async def test_scenario_on_trio(ours_grpc: str, name: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with grpc_client(ours_grpc) as client:
            await SCENARIOS[name](client)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("name", SCENARIOS)
async def test_scenario_on_asyncio(ours_grpc: str, name: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with grpc_client(ours_grpc) as client:
            await SCENARIOS[name](client)


async def test_by_default_the_card_s_first_interface_wins(ours_grpc: str) -> None:
    async with await A2AClient.connect(ours_grpc, card_cache=None) as client:
        assert client.interface.protocol_binding == "JSONRPC"


async def test_leaving_a_stream_midway_then_cancel(ours_grpc: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with grpc_client(ours_grpc) as client:
            async with client.stream_message("sleep a while") as stream:
                async for _event in stream:
                    break
            canceled = await client.cancel_task(stream.task_id)
            assert canceled.status.state is TaskState.CANCELED


# -- the CLI -------------------------------------------------------------------------------


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main([*argv, "--binding", "grpc"])
    out, err = capsys.readouterr()
    return status, out, err


def lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line]


def test_cli_card_and_send(ours_grpc: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "card", ours_grpc)
    assert status == 0
    (selected,) = [line for line in out.splitlines() if line.endswith("(selected)")]
    assert selected.split()[:2] == ["GRPC", "1.0"]

    status, out, err = run(capsys, "send", ours_grpc, "hello cli")
    assert status == 0, err
    first, text = out.splitlines()
    assert first.endswith(": completed")
    assert text == "hello cli"

    status, out, _ = run(capsys, "send", ours_grpc, "stream please", "--stream", "--json")
    assert status == 0
    events = [codec.decode(line, StreamResponse) for line in lines(out)]
    chunks = [e.artifact_update for e in events if e.artifact_update is not None]
    assert [c.artifact.parts[0].text for c in chunks] == list(STREAM_CHUNKS)

    status, out, err = run(capsys, "send", ours_grpc, "input please", "--json")
    task = codec.decode(lines(out)[0], SendMessageResponse).task
    assert task is not None
    assert task.status.state is TaskState.INPUT_REQUIRED
    assert MULTI_TURN_QUESTION in err
    status, out, _ = run(capsys, "send", ours_grpc, "Ada", "--task-id", task.id)
    assert status == 0
    assert out.splitlines() == [f"task {task.id} (context {task.context_id}): completed", "Ada"]


def test_cli_get_list_subscribe_cancel(ours_grpc: str, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "send", ours_grpc, "sleep", "--return-immediately", "--json")
    task = codec.decode(lines(out)[0], SendMessageResponse).task
    assert task is not None

    status, out, _ = run(capsys, "get", ours_grpc, task.id)
    assert status == 0
    assert out.startswith(f"task {task.id} (context {task.context_id}): ")

    status, out, _ = run(capsys, "list", ours_grpc, "--context-id", task.context_id, "--json")
    assert status == 0
    assert [t.id for t in codec.decode(lines(out)[0], ListTasksResponse).tasks] == [task.id]

    statuses: list[int] = []
    follower = threading.Thread(
        target=lambda: statuses.append(
            main(["subscribe", ours_grpc, task.id, "--json", "--binding", "grpc"])
        )
    )
    follower.start()
    try:
        status = main(["cancel", ours_grpc, task.id, "--json", "--binding", "grpc"])
    finally:
        follower.join(TIMEOUT)
    out, _ = capsys.readouterr()
    assert status == 0
    assert statuses == [0]
    printed = [msgspec.json.decode(line) for line in lines(out)]
    (canceled,) = [codec.convert(obj, Task) for obj in printed if "id" in obj]
    assert canceled.status.state is TaskState.CANCELED
    followed = [codec.convert(obj, StreamResponse) for obj in printed if "id" not in obj]
    final = followed[-1].status_update or followed[-1].task
    assert final is not None
    assert final.status.state is TaskState.CANCELED

    status, _, err = run(capsys, "cancel", ours_grpc, task.id)
    assert status == 1
    assert err.startswith("a2a-actors cancel: TaskNotCancelableError (-32002): ")


async def test_a_client_with_a_tenant(ours_grpc: str) -> None:
    # The tenant travels in every request message (the proto's ``tenant`` fields).
    with anyio.fail_after(TIMEOUT):
        async with grpc_client(ours_grpc) as discovered:
            target = discovered.interface.url
        async with A2AClient(target, binding="GRPC", tenant="acme") as client:
            task = await client.send_message("hello tenant")
            assert isinstance(task, Task)
            assert task.status.state is TaskState.COMPLETED
            assert (await client.get_task(task.id)).id == task.id
            async with client.stream_message("stream please") as stream:
                events = [event async for event in stream]
            assert stream.state is TaskState.COMPLETED
            assert events[0].task is not None
