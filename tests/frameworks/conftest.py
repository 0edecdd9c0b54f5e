"""The framework bridges run on asyncio only (every framework here does)."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
