"""Registry tests run on both anyio backends (the NATS ones on asyncio only: nats-py)."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["trio", "asyncio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run every ``pytest.mark.anyio`` test once on trio and once on asyncio."""
    backend: str = request.param
    return backend
