"""``a2a-actors serve --inspect`` as a subprocess: the page and its API behind the key."""

from __future__ import annotations

import subprocess
import sys

import anyio
import httpx
import pytest

from tests.server.test_cli import GUARD, ROOT, cli_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "trio"  # the harness side; the server runs on --backend


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
async def test_serve_inspect_serves_the_page_and_its_api_behind_the_key(backend: str) -> None:
    with anyio.fail_after(GUARD):
        args = ("tests.server.agents:scenario_agent", "--inspect", "--api-key", "k1")
        async with cli_server(*args, "--backend", backend) as url, httpx.AsyncClient() as http:
            assert (await http.get(url + "/inspect/")).status_code == 200
            assert (await http.get(url + "/inspect/api/tasks")).status_code == 401
            listed = await http.get(url + "/inspect/api/tasks", headers={"X-API-Key": "k1"})
            assert listed.status_code == 200
            assert listed.json()["agent"] == "scenario-agent"


def test_an_inspect_peer_needs_inspect() -> None:
    command = [sys.executable, "-m", "a2a_actors.cli", "serve", "examples.echo:agent"]
    done = subprocess.run(
        [*command, "--inspect-peer", "http://a.example"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr == "a2a-actors serve: --inspect-peer needs --inspect\n"
    done = subprocess.run(
        [*command, "--inspect", "--inspect-peer", "ftp://a.example"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "inspector peer 'ftp://a.example' is not an http(s) URL" in done.stderr
