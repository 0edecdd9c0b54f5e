"""The client CLI with a registry file: ``agents FILE`` (an unreachable agent shown as such),
``send NAME --registry FILE``, ``A2A_ACTORS_REGISTRY``, and the usage errors."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest

from a2a_actors.client._registry.registry import REGISTRY_ENV
from tests.registry.helpers import served, upper

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def anyio_backend() -> str:
    return "trio"  # the harness side; the CLI runs in subprocesses


async def cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    environ = {k: v for k, v in os.environ.items() if k != REGISTRY_ENV}
    result = await anyio.run_process(
        [sys.executable, "-m", "a2a_actors.cli", *args],
        cwd=ROOT,
        check=False,
        env={**environ, **(env or {})},
    )
    return result.returncode, result.stdout.decode(), result.stderr.decode()


async def test_agents_and_send_by_name_with_a_file(tmp_path: Path) -> None:
    file = tmp_path / "agents.json"
    with anyio.fail_after(90):
        async with served(upper) as url:
            file.write_text(json.dumps({"shout": url, "gone": "http://127.0.0.1:9"}))
            status, out, err = await cli("agents", str(file))
            assert status == 0, err
            lines = out.splitlines()
            assert lines[0] == "gone  http://127.0.0.1:9"
            assert lines[1].startswith("  unreachable: A2AConnectionError: ")
            assert lines[2:] == [
                f"shout  {url}",
                "  Upper-cases text",
                "  skill upper: Upper - Shouts",
                "(2 agents)",
            ]
            status, out, err = await cli("agents", str(file), "--json")
            assert status == 0, err
            shout = json.loads(out.splitlines()[1])
            assert (shout["name"], shout["url"], shout["card"]["name"]) == ("shout", url, "upper")
            status, out, err = await cli("send", "shout", "hi", "--registry", str(file))
            assert status == 0, err
            assert "HI" in out.splitlines()
            status, out, err = await cli("card", "shout", env={REGISTRY_ENV: str(file)})
            assert status == 0, err
            assert out.startswith("upper (version")


async def test_usage_errors() -> None:
    with anyio.fail_after(60):
        status, out, err = await cli("send", "translator", "hi")
        assert (status, out) == (2, "")
        assert "'translator' is not an http(s) URL; to find an agent by name, pass" in err
        status, _, err = await cli("send", "translator", "hi", "--registry", "missing.json")
        assert status == 2
        assert "cannot read the registry file 'missing.json'" in err
        status, _, err = await cli("agents", "missing.toml")
        assert status == 2
        assert "cannot read the registry file 'missing.toml'" in err
