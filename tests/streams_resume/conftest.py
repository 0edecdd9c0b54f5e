"""Resumable streams: every test runs on both backends (QuartTrio on trio, Quart on asyncio),
except the cluster ones (asyncio only, as nats-py)."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["trio", "asyncio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend
