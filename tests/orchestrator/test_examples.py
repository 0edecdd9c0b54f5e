"""The multi-hop demo and the pipeline example run and show what their docstrings say."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from a2a_actors.protocol._models import TaskState
from examples import pipeline
from examples.multihop import agents as multihop_agents, demo as multihop_demo, run_demo

from .helpers import TIMEOUT

ROOT = Path(__file__).resolve().parents[2]
JSON_KEYS = {
    "agent",
    "taskId",
    "contextId",
    "traceId",
    "parentTaskId",
    "depth",
    "state",
    "durationMs",
    "children",
}


async def test_the_demo_builds_a_four_level_tree_with_timings() -> None:
    with anyio.fail_after(TIMEOUT):
        run = await run_demo(step=0.02)
    assert run.task.status.state is TaskState.COMPLETED
    assert run.task.status.message is not None
    assert run.task.status.message.text.startswith("Report. the history of tea: first")
    shape = [(h.agent, h.depth) for h in run.tree.walk()]
    assert shape == [
        ("planner", 0),
        ("researcher-a", 1),
        ("archive", 2),
        ("index", 3),
        ("researcher-b", 1),
        ("archive", 2),
        ("index", 3),
        ("writer", 1),
        ("editor", 2),
    ]
    hops = list(run.tree.walk())
    assert {h.state for h in hops} == {"TASK_STATE_COMPLETED"}
    assert len({h.trace_id for h in hops}) == 1
    assert all(h.duration_s is not None and h.duration_s > 0 for h in hops)


class _AnyioWith:
    """``anyio`` with another ``sleep``: stands in for it in a module of the demo."""

    def __init__(self, sleep: Callable[[float], Awaitable[None]]) -> None:
        self.sleep = sleep

    def __getattr__(self, name: str) -> Any:
        return getattr(anyio, name)


class _Clockwork:
    """The demo's waits, tied to state instead of time.

    The agents' work takes no time except the index's (the only ``sleep(2 * step)``), which
    lasts until cancelled; the demo's wait before it cancels lasts until every index is at
    work. So the cancel always lands with all four levels in flight, however long the HTTP
    hops take.
    """

    def __init__(self, step: float, indexes: int) -> None:
        self._index_work = 2 * step
        self._indexes = indexes
        self._at_work = 0
        self._changed = anyio.Event()

    async def work(self, seconds: float) -> None:
        if seconds == self._index_work:
            self._at_work += 1
            self._changed.set()
            self._changed = anyio.Event()
            await anyio.sleep_forever()
        await anyio.lowlevel.checkpoint()

    async def until_every_index_works(self, seconds: float) -> None:
        while self._at_work < self._indexes:
            await self._changed.wait()


async def test_the_demo_cancelled_mid_flight_shows_every_hop_canceled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clockwork = _Clockwork(step=1.0, indexes=2)
    monkeypatch.setattr(multihop_agents, "anyio", _AnyioWith(clockwork.work))
    monkeypatch.setattr(multihop_demo, "anyio", _AnyioWith(clockwork.until_every_index_works))
    with anyio.fail_after(TIMEOUT):
        run = await run_demo(cancel_after=1.0, step=1.0)
    assert run.task.status.state is TaskState.CANCELED
    shape = [(h.agent, h.depth) for h in run.tree.walk()]
    assert shape == [
        ("planner", 0),
        ("researcher-a", 1),
        ("archive", 2),
        ("index", 3),
        ("researcher-b", 1),
        ("archive", 2),
        ("index", 3),
    ]
    assert {h.state for h in run.tree.walk()} == {"TASK_STATE_CANCELED"}


def test_the_demo_prints_the_tree_as_json() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "examples.multihop", "--json", "--step", "0.02"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    tree: dict[str, Any] = json.loads(out)

    def check(hop: dict[str, Any], depth: int, parent: str) -> int:
        assert set(hop) == JSON_KEYS
        assert hop["depth"] == depth
        assert hop["parentTaskId"] == parent
        assert hop["traceId"] == tree["traceId"]
        assert hop["state"] == "TASK_STATE_COMPLETED"
        return 1 + sum(check(child, depth + 1, hop["taskId"]) for child in hop["children"])

    assert check(tree, 0, "") == 9


async def test_the_pipeline_example() -> None:
    with anyio.fail_after(TIMEOUT):
        task, tree = await pipeline.run("hello   world")
    assert task.status.state is TaskState.COMPLETED
    assert task.status.message is not None
    assert task.status.message.text == "translator: bonjour monde\ncount: 2 words"
    lines = tree.splitlines()
    assert lines[0].startswith("text-pipeline")
    names = [line.split()[1] for line in lines[1:]]  # after the tree-drawing prefix
    assert names[:2] == ["clean", "translate-and-count"]
    assert sorted(names[2:]) == ["count", "translator"]
