"""The Python example of docs/cluster.md runs as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_python_example_of_the_cluster_docs_runs() -> None:
    text = (ROOT / "docs" / "cluster.md").read_text()
    section = text.split("### Composing the parts by hand (Python)", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert found is not None
    done = subprocess.run(
        [sys.executable, "-c", found.group(1)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    lines = done.stdout.splitlines()
    assert len(lines) == 2
    assert "TASK_STATE_CANCELED" in lines[1]
