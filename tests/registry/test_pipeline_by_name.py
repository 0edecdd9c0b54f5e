"""Pipelines whose steps are names run end to end against servers found by name: with a
static registry file (``A2A_ACTORS_REGISTRY``, trio and asyncio), with a NATS registry given
to the Orchestrator, and all from the CLI (``serve --register`` for the steps, the pipeline
served with ``A2A_ACTORS_REGISTRY``, called by name)."""

from __future__ import annotations

import json
import os
import sys
from functools import partial
from pathlib import Path

import anyio
import pytest

from a2a_actors.client import A2AClient, AgentCardError
from a2a_actors.client._registry.registry import REGISTRY_ENV, StaticRegistry
from a2a_actors.protocol import Message, Task, TaskState
from orchestrator import Orchestrator
from orchestrator.serving import serve as serve_orchestrated
from tests.registry.helpers import pipeline, reverser, served, upper

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]


def as_task(result: Task | Message) -> Task:
    assert isinstance(result, Task), f"expected a Task, got {result!r}"
    return result


def status_text(task: Task) -> str:
    return task.status.message.text if task.status.message is not None else ""


async def run_pipeline(orch: Orchestrator | None, text: str) -> Task:
    async with anyio.create_task_group() as tg:
        url = await tg.start(partial(serve_orchestrated, pipeline, orchestrator=orch))
        async with await A2AClient.connect(url, card_cache=None) as client:
            task = as_task(await client.send_message(text))
        tg.cancel_scope.cancel()
    return task


async def test_steps_found_in_the_registry_file_named_by_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with anyio.fail_after(20):
        async with served(upper) as up, served(reverser) as rev:
            file = tmp_path / "agents.json"
            file.write_text(json.dumps({"upper": up, "reverser": rev}))
            monkeypatch.setenv(REGISTRY_ENV, str(file))
            task = await run_pipeline(None, "abc")
            assert task.status.state is TaskState.COMPLETED
            assert status_text(task) == "CBA"
            file.write_text(json.dumps({"upper": up, "reverse": rev}))
            failed = await run_pipeline(None, "abc")
    assert failed.status.state is TaskState.FAILED
    assert "no agent named 'reverser' is registered; did you mean 'reverse'?" in status_text(failed)


async def test_steps_found_in_a_registry_given_to_the_orchestrator() -> None:
    with anyio.fail_after(20):
        async with served(upper) as up, served(reverser) as rev:
            registry = StaticRegistry({"upper": up, "reverser": rev})
            async with Orchestrator(registry=registry) as orch:
                task = await run_pipeline(orch, "hello")
                await registry.withdraw("reverser")
                failed = await run_pipeline(orch, "hello")
    assert status_text(task) == "OLLEH"
    assert failed.status.state is TaskState.FAILED
    assert "no agent named 'reverser'" in status_text(failed)


async def test_without_a_registry_a_name_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REGISTRY_ENV, raising=False)
    with anyio.fail_after(20):
        task = await run_pipeline(None, "x")
    assert task.status.state is TaskState.FAILED
    assert f"set {REGISTRY_ENV} or pass registry=" in status_text(task)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the harness side; nats-py
async def test_the_whole_flow_from_the_cli_with_nats(tmp_path: Path) -> None:
    from tests.cluster.helpers import nats_server
    from tests.registry.test_nats import first_line, run_cli

    async def serve_cli(target: str, env: dict[str, str]) -> anyio.abc.Process:
        command = [sys.executable, "-m", "a2a_actors.cli", "serve", target]
        command += ["--register", nats.url]
        return await anyio.open_process(command, cwd=ROOT, env=env)

    with anyio.fail_after(120):
        async with nats_server(tmp_path) as nats:
            env = {**os.environ, REGISTRY_ENV: nats.url}
            async with (
                await serve_cli("tests.registry.helpers:upper", env) as a,
                await serve_cli("tests.registry.helpers:reverser", env) as b,
                await serve_cli("tests.registry.helpers:pipeline", env) as p,
            ):
                try:
                    for process in (a, b, p):
                        await first_line(process)
                    status, out, err = await run_cli(
                        "send", "shout-and-mirror", "abc", "--registry", nats.url
                    )
                    assert status == 0, err
                    assert "CBA" in out.splitlines()
                    status, out, err = await run_cli("agents", nats.url)
                    assert status == 0, err
                    names = [line.split()[0] for line in out.splitlines() if line[:1] != " "]
                    assert names == ["reverser", "shout-and-mirror", "upper", "(3"]
                finally:
                    for process in (a, b, p):
                        process.terminate()


async def test_a_name_that_is_not_registered_for_connect() -> None:
    with pytest.raises(AgentCardError, match="no agent named 'nobody'"):
        await A2AClient.connect("nobody", registry=StaticRegistry())
