"""Server tests run on both backends: the app is QuartTrio on trio and Quart on asyncio."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["trio", "asyncio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend
