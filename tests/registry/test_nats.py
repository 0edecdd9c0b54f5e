"""The NATS registry against a real nats-server (tests/cluster's helper) and real servers:
publish/resolve/withdraw, watch, ``serve --register`` (a SIGKILLed server vanishes within
its TTL, a stopped one at once), and the CLI (``agents``, ``send NAME --registry``).

asyncio only: nats-py runs on asyncio (the served processes and CLI runs are subprocesses).
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from anyio.abc import Process

from a2a_actors.client import A2AClient
from a2a_actors.client._registry.entries import RegistryChange, UnknownAgentError
from a2a_actors.client._registry.nats import NatsRegistry
from a2a_actors.cluster import NatsServer
from a2a_actors.cluster._directory import AgentRecord
from a2a_actors.protocol import Task
from a2a_actors.protocol._card import AgentCard
from tests.cluster.helpers import nats_server
from tests.registry.helpers import reverser, served, upper

pytestmark = [pytest.mark.anyio, pytest.mark.serial]  # timed by leases and TTLs

ROOT = Path(__file__).resolve().parents[2]
TTL = 1.5
STARTUP = 30.0


@pytest.fixture
def anyio_backend() -> str:
    """nats-py is asyncio-only."""
    return "asyncio"


async def card_of(url: str) -> AgentCard:
    async with await A2AClient.connect(url, card_cache=None) as client:
        assert client.card is not None
        return client.card


async def test_publish_resolve_withdraw_and_list(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as nats,
            served(upper) as up,
            served(reverser) as rev,
            NatsRegistry.open([nats.url], ttl=TTL) as publisher,
            NatsRegistry.open([nats.url], ttl=TTL) as reader,
        ):
            await publisher.publish(await card_of(up), up)
            await publisher.publish(await card_of(rev), rev)
            entry = await reader.resolve("upper")
            assert (entry.name, entry.url) == ("upper", up)
            assert entry.card.skills[0].id == "upper"
            assert [e.name for e in await reader.list()] == ["reverser", "upper"]
            with pytest.raises(UnknownAgentError, match="did you mean 'reverser'"):
                await reader.resolve("reverse")
            await publisher.withdraw("reverser")  # stops refreshing it too
            with pytest.raises(UnknownAgentError):
                await reader.resolve("reverser")
            async with await A2AClient.connect("upper", registry=reader) as client:
                task = await client.send_message("hi")
            assert isinstance(task, Task)
            assert task.status.message is not None
            assert task.status.message.text == "HI"


async def test_an_entry_lives_while_refreshed_and_leaving_withdraws_it(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as nats,
            served(upper) as up,
            NatsRegistry.open([nats.url], ttl=TTL) as reader,
        ):
            async with NatsRegistry.open([nats.url], ttl=TTL) as publisher:
                await publisher.publish(await card_of(up), up)
                published = time.monotonic()
                # Refreshed every TTL/3: still there well after one TTL.
                await anyio.sleep(2 * TTL)  # the time passing is the test, not a sync
                assert time.monotonic() - published >= 2 * TTL
                assert (await reader.resolve("upper")).url == up
            # Leaving the publisher's block withdraws at once, not after the TTL.
            with pytest.raises(UnknownAgentError):
                await reader.resolve("upper")


async def test_watch_sees_entries_changes_and_expiry(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as nats,
            served(upper) as up,
            NatsRegistry.open([nats.url], ttl=TTL) as registry,
        ):
            card = await card_of(up)
            await registry.directory.put(AgentRecord.of(card, up))  # no refreshes
            seen: list[RegistryChange] = []
            async with registry.watch() as changes:
                async for change in changes:
                    seen.append(change)
                    if len(seen) == 1:  # the entry present when the watch started
                        await registry.withdraw("upper")
                    elif len(seen) == 2:  # written once more: it expires after the TTL
                        await registry.directory.put(AgentRecord.of(card, up))
                    elif len(seen) == 4:
                        break
    assert [(c.name, c.entry is not None) for c in seen] == [
        ("upper", True),
        ("upper", False),
        ("upper", True),
        ("upper", False),
    ]


def serve_command(nats: NatsServer, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "a2a_actors.cli",
        "serve",
        "tests.registry.helpers:upper",
        "--register",
        nats.url,
        "--register-ttl",
        str(TTL),
        *extra,
    ]


@asynccontextmanager
async def serving(nats: NatsServer, *extra: str) -> AsyncIterator[tuple[Process, str]]:
    async with await anyio.open_process(serve_command(nats, *extra), cwd=ROOT) as process:
        try:
            yield process, await first_line(process)
        finally:
            if process.returncode is None:
                process.kill()


async def first_line(process: Process) -> str:
    assert process.stdout is not None
    data = b""
    with anyio.fail_after(STARTUP):
        while b"\n" not in data:
            try:
                data += await process.stdout.receive()
            except anyio.EndOfStream:
                assert process.stderr is not None
                errors = b"".join([chunk async for chunk in process.stderr])
                raise AssertionError(f"the server exited: {errors.decode()}") from None
    return data.partition(b"\n")[0].decode()


async def gone(registry: NatsRegistry, name: str) -> bool:
    try:
        await registry.resolve(name)
    except UnknownAgentError:
        return True
    return False


async def test_a_server_killed_with_sigkill_vanishes_within_its_ttl(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with (
            nats_server(tmp_path) as nats,
            NatsRegistry.open([nats.url], ttl=TTL) as registry,
            serving(nats) as (process, url),
        ):
            entry = await registry.resolve("upper")  # registered before the URL is printed
            assert entry.url == url
            # Watched from before the kill: the server's expiry of the entry is a change.
            async with registry.watch() as changes:
                process.send_signal(signal.SIGKILL)
                await process.wait()
                killed = time.monotonic()
                # Its last refresh was at most TTL/3 before the kill; the server expires it
                # TTL after that write (plus the server's expiry check, under a second).
                with anyio.fail_after(TTL + 2.0):
                    async for change in changes:  # the entry, refreshes, then its expiry
                        if change.name == "upper" and change.entry is None:
                            break
            assert time.monotonic() - killed <= TTL + 2.0
            assert await gone(registry, "upper")


async def test_a_stopped_server_withdraws_at_once(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with (
            nats_server(tmp_path) as nats,
            NatsRegistry.open([nats.url], ttl=30) as registry,
            serving(nats) as (process, _),
        ):
            assert (await registry.resolve("upper")).name == "upper"
            process.send_signal(signal.SIGTERM)
            assert await process.wait() == 0
            assert await gone(registry, "upper")  # withdrawn, not expired (TTL 30 s)


async def test_a_cluster_shares_one_entry_that_no_stopping_node_withdraws(
    tmp_path: Path,
) -> None:
    # Two workers (a cluster's nodes) register the agent under its name and their one
    # URL; when they stop, the entry stays until it expires (the bucket's TTL: 30 s), as
    # it must while other nodes of a cluster still serve it (a SIGKILLed server's entry
    # expiring is tested above).
    with anyio.fail_after(90):
        async with (
            nats_server(tmp_path) as nats,
            NatsRegistry.open([nats.url], ttl=30) as registry,
            serving(nats, "--workers", "2") as (process, url),
        ):
            entry = await registry.resolve("upper")  # registered before the URL is printed
            assert entry.url == url
            process.send_signal(signal.SIGTERM)
            assert await process.wait() == 0
            assert (await registry.resolve("upper")).url == url  # not withdrawn


async def run_cli(*args: str) -> tuple[int, str, str]:
    result = await anyio.run_process(
        [sys.executable, "-m", "a2a_actors.cli", *args], cwd=ROOT, check=False
    )
    return result.returncode, result.stdout.decode(), result.stderr.decode()


async def test_the_cli_lists_and_calls_agents_by_name(tmp_path: Path) -> None:
    with anyio.fail_after(90):
        async with nats_server(tmp_path) as nats, serving(nats) as (_, url):
            status, out, err = await run_cli("agents", nats.url)
            assert status == 0, err
            assert out.splitlines() == [
                f"upper  {url}",
                "  Upper-cases text",
                "  skill upper: Upper - Shouts",
                "(1 agent)",
            ]
            status, out, err = await run_cli("send", "upper", "hi", "--registry", nats.url)
            assert status == 0, err
            assert "HI" in out.splitlines()
            status, out, err = await run_cli("send", "uper", "hi", "--registry", nats.url)
            assert status == 1
            assert "no agent named 'uper' is registered; did you mean 'upper'?" in err
            assert out == ""


async def test_register_refuses_what_cannot_work(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        status, _, err = await run_cli(
            "serve", "tests.registry.helpers:upper", "--register", "http://x:4222"
        )
        assert status == 2
        assert "--register takes nats://HOST:PORT URLs" in err
        status, _, err = await run_cli(
            "serve",
            "tests.registry.helpers:upper",
            "--register",
            "nats://127.0.0.1:4222",
            "--backend",
            "trio",
        )
        assert status == 2
        assert "--register needs --backend asyncio" in err
        async with nats_server(tmp_path) as nats:
            port = nats.port
        # nats stopped: nobody listens there any more
        status, out, err = await run_cli(
            "serve", "tests.registry.helpers:upper", "--register", f"nats://127.0.0.1:{port}"
        )
        assert status == 1
        assert "cannot register in nats://127.0.0.1:" in err
        assert out == ""
