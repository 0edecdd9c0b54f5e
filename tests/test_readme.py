"""The README stays true: its two commands exist as written, and its agent snippet runs."""

from __future__ import annotations

import re
from pathlib import Path

import anyio

from a2a_actors.protocol import Task, TaskState
from a2a_actors.runtime import Agent, InProcessClient, Supervisor

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()

DEMO = " && ".join(
    (
        "python3 -m venv .venv",
        ".venv/bin/pip install -q -e .",
        ".venv/bin/python -m examples.multihop",
    )
)
TESTS = "bash .ci/run"


def test_the_two_commands_are_stated_and_exist() -> None:
    assert DEMO in README
    assert TESTS in README
    assert (ROOT / ".ci" / "run").is_file()
    assert (ROOT / "examples" / "multihop" / "__main__.py").is_file()
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'pip install --quiet -e ".[dev]"' in ci
    assert "pytest" in ci


def test_the_first_agent_says_where_to_save_it() -> None:
    first = README[README.index("## A first agent") : README.index("What an agent can do")]
    assert "Save this as `mymodule.py`" in first
    assert "a2a-actors serve mymodule:greeter" in first  # the module the file makes


def test_the_test_command_says_what_it_does_and_takes() -> None:
    said = README[README.index("**Run the tests**") : README.index(TESTS)]
    ci = (ROOT / ".ci" / "run").read_text()
    assert "apt-get install" in ci
    assert "chromium" in ci
    assert "installs Chromium" in said
    assert "when `apt-get` is available" in said
    assert "about 12 minutes" in said


def readme_agent() -> Agent:
    block = re.search(r"```python\n(.*?)```", README, re.S)
    assert block is not None, "the README has a python example"
    namespace: dict[str, object] = {}
    exec(compile(block.group(1), "README.md", "exec"), namespace)
    found = [value for value in namespace.values() if isinstance(value, Agent)]
    assert len(found) == 1
    return found[0]


async def test_the_readme_agent_runs_as_documented() -> None:
    greeter = readme_agent()
    with anyio.fail_after(5):
        async with Supervisor(greeter) as sup:
            client = InProcessClient(sup)
            asked = await client.send_message(" ")
            assert isinstance(asked, Task)
            assert asked.status.state is TaskState.INPUT_REQUIRED
            assert asked.status.message is not None
            assert asked.status.message.text == "What is your name?"
            done = await client.send_message("Ada", task_id=asked.id)
            assert isinstance(done, Task)
            assert done.status.message is not None
            assert done.status.message.text == "Hello, Ada!"
            direct = await client.send_message("Bob")
            assert isinstance(direct, Task)
            assert direct.status.state is TaskState.COMPLETED
            assert [p.text for a in direct.artifacts for p in a.parts] == ["Hello, Bob!"]
