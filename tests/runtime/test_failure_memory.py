"""A handler that raises lets go of what it held at once, not at the next full collection:
the runtime keeps no reference cycle through the error's traceback (``serve`` collects
rarely: ``gc.freeze()`` and a raised threshold)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_failed_handler_s_data_is_freed_without_a_collection(backend: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.runtime.failure_memory_probe", backend],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.split() == ["True", "False"]  # failed; its data already freed
    assert "RuntimeError: out of ideas" in done.stderr  # the traceback was logged
