"""A framework bridge without its framework: one line naming the extra, from Python and from
``a2a-actors serve``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BRIDGES = [
    ("pydantic_ai", "pydantic_ai", "pydantic-ai"),
    ("langgraph", "langgraph", "langgraph"),
    ("openai_agents", "agents", "openai-agents"),
    ("agentscope", "agentscope", "agentscope"),
    ("a2a_sdk", "a2a", "a2a-sdk"),
]


def run_without(
    framework: str, code: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter where ``framework`` cannot be imported."""
    blocked = f"import sys; sys.modules[{framework!r}] = None\n"
    return subprocess.run(
        [sys.executable, "-c", blocked + code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=cwd,
    )


@pytest.mark.parametrize(("module", "framework", "extra"), BRIDGES)
def test_importing_a_bridge_without_its_framework_names_the_extra(
    module: str, framework: str, extra: str
) -> None:
    done = run_without(framework, f"import a2a_actors.frameworks.{module}")
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(
        f"a2a_actors.frameworks._extras.MissingExtraError: a2a_actors.frameworks.{module} "
        f"needs the {extra!r} extra: pip install 'a2a-actors[{extra}]' ({framework} is not "
        "installed: "
    ), last


def test_serve_says_so_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "mine.py").write_text(
        "from a2a_actors.frameworks.pydantic_ai import as_agent\n", encoding="utf-8"
    )
    done = run_without(
        "pydantic_ai",
        "from a2a_actors.cli import main; sys.exit(main(['serve', 'mine:agent']))",
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "a2a-actors serve: cannot import 'mine': a2a_actors.frameworks.pydantic_ai needs the "
        "'pydantic-ai' extra: pip install 'a2a-actors[pydantic-ai]' (pydantic_ai is not "
        "installed: import of pydantic_ai halted; None in sys.modules)"
    )
