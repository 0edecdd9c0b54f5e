"""The nats-server process helper, the connection's bounds, and lazy loading of nats-py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from a2a_actors.cluster import ClusterUnavailableError, NatsServer, find_nats_server
from a2a_actors.cluster._connection import ClusterConnection
from a2a_actors.cluster._nats_server import NatsServerError

from .helpers import connect, nats_server

pytestmark = pytest.mark.anyio


def test_the_binary_comes_from_the_cluster_extra() -> None:
    path = find_nats_server()
    assert Path(path).name == "nats-server"
    assert Path(path).is_file()


def test_importing_the_package_does_not_import_nats() -> None:
    code = (
        "import sys, a2a_actors, a2a_actors.cluster;"
        "assert 'nats' not in sys.modules, 'nats imported';"
        "a2a_actors.cluster.ClusterNode;"
        "assert 'nats' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_without_nats_py_the_error_says_what_to_install() -> None:
    code = (
        "import sys; sys.modules['nats'] = None\n"
        "import a2a_actors.cluster as cluster\n"
        "try:\n"
        "    cluster.NatsTaskStore\n"
        "except cluster.ClusterExtraMissingError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], check=True, timeout=60, capture_output=True, text=True
    )
    assert done.stdout == "cluster mode needs nats-py: pip install 'a2a-actors[cluster]'\n"


async def test_the_server_restarts_on_its_port_with_its_store(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with nats_server(tmp_path) as server:
            port, first_pid = server.port, server.pid
            assert port > 0
            assert first_pid is not None
            assert server.url == f"nats://127.0.0.1:{port}"
            async with connect(server) as conn:
                kv = await conn.js.create_key_value(bucket="probe")
                await kv.put("k", b"kept")
            await server.kill()  # SIGKILL: JetStream must still have the acknowledged put
            assert server.pid is None
            await server.start()
            assert (server.port, server.pid != first_pid) == (port, True)
            async with connect(server) as conn:
                kv = await conn.js.key_value("probe")
                assert (await kv.get("k")).value == b"kept"
        assert server.pid is None


async def test_a_server_that_cannot_bind_reports_its_log(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with nats_server(tmp_path) as server:
            with pytest.raises(NatsServerError, match=r"(?s)exited at start.*address already"):
                async with NatsServer.running(tmp_path / "other", port=server.port):
                    pass


async def test_connecting_to_nothing_is_a_bounded_busy_error(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with nats_server(tmp_path) as server:
            url = server.url
        with pytest.raises(ClusterUnavailableError, match="NATS unreachable") as info:
            async with ClusterConnection.open([url], cluster="x", connect_timeout=0.5):
                pass
        assert info.value.code == -32050


async def test_connection_statistics_count_a_reconnect(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with nats_server(tmp_path) as server, connect(server) as conn:
            assert conn.statistics().connected
            await server.stop()
            await server.start()
            await conn.wait_connected()
            stats = conn.statistics()
            assert (stats.connected, stats.disconnects, stats.reconnects) == (True, 1, 1)


def _environ(pid: int | None, name: str) -> str | None:
    """``name`` in the environment the process was started with (Linux's /proc)."""
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    key = name.encode() + b"="
    found = [v.split(b"=", 1)[1].decode() for v in environ if v.startswith(key)]
    return found[-1] if found else None


def _gomaxprocs(pid: int | None) -> str | None:
    return _environ(pid, "GOMAXPROCS")


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads Linux's /proc")
async def test_the_server_runs_on_one_cpu_unless_told_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GOMAXPROCS", raising=False)
    with anyio.fail_after(60):
        async with NatsServer.running(tmp_path / "one") as server:
            assert _gomaxprocs(server.pid) == "1"
        async with NatsServer.running(tmp_path / "two", cpus=2) as server:
            assert _gomaxprocs(server.pid) == "2"
        async with NatsServer.running(tmp_path / "all", cpus=None) as server:
            assert _gomaxprocs(server.pid) is None  # Go's default: every CPU
        monkeypatch.setenv("GOMAXPROCS", "3")  # the environment wins
        async with NatsServer.running(tmp_path / "env") as server:
            assert _gomaxprocs(server.pid) == "3"
            await server.kill()
            await server.start()  # a restart keeps it
            assert _gomaxprocs(server.pid) == "3"
        with pytest.raises(ValueError, match="cpus is at least 1, not 0"):
            async with NatsServer.running(tmp_path / "none", cpus=0):
                pass


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads Linux's /proc")
async def test_the_server_has_a_memory_limit_unless_told_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GOMEMLIMIT", raising=False)
    with anyio.fail_after(60):
        async with NatsServer.running(tmp_path / "default") as server:
            assert _environ(server.pid, "GOMEMLIMIT") == "256MiB"
        async with NatsServer.running(tmp_path / "set", memory_limit="64MiB") as server:
            assert _environ(server.pid, "GOMEMLIMIT") == "64MiB"
        async with NatsServer.running(tmp_path / "off", memory_limit=None) as server:
            assert _environ(server.pid, "GOMEMLIMIT") is None
        monkeypatch.setenv("GOMEMLIMIT", "96MiB")  # the environment wins
        async with NatsServer.running(tmp_path / "env") as server:
            assert _environ(server.pid, "GOMEMLIMIT") == "96MiB"
