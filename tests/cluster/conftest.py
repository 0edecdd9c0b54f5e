"""Cluster tests run on asyncio only (nats-py is asyncio-only), each against a real
nats-server with JetStream that the test starts itself (:func:`nats_server`)."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    """Cluster mode is asyncio-only."""
    return "asyncio"
