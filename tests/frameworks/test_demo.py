"""``python -m examples.frameworks``: three framework agents on three servers, one request,
the hop tree with every model-initiated call in it (scripted models, no network)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from a2a_actors.protocol import TaskState
from examples.frameworks import run_demo
from examples.frameworks.agents import WEATHER

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]


async def test_the_pipeline_answers_and_its_tree_shows_every_hop() -> None:
    with anyio.fail_after(60):
        run = await run_demo("Plan a day in Porto")
    assert run.task.status.state is TaskState.COMPLETED
    assert run.answer.startswith("Your day, planned. In Porto: the castle at dawn")
    assert WEATHER in run.answer
    hops = [(hop.agent, hop.depth, hop.state) for hop in run.tree.walk()]
    assert hops == [
        ("planner", 0, "TASK_STATE_COMPLETED"),
        ("researcher", 1, "TASK_STATE_COMPLETED"),
        ("forecaster", 2, "TASK_STATE_COMPLETED"),
    ]
    assert {hop.trace_id for hop in run.tree.walk()} == {run.tree.trace_id}


def test_the_demo_prints_the_tree_as_json() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "examples.frameworks", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env={"PATH": "/usr/bin:/bin"},  # no OPENAI_API_KEY: scripted models
    )
    tree: dict[str, Any] = json.loads(done.stdout)
    agents = []
    while tree:
        agents.append((tree["agent"], tree["state"]))
        tree = tree["children"][0] if tree["children"] else {}
    assert agents == [
        ("planner", "TASK_STATE_COMPLETED"),
        ("researcher", "TASK_STATE_COMPLETED"),
        ("forecaster", "TASK_STATE_COMPLETED"),
    ]
