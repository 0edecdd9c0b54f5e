"""Cluster tests run on asyncio only (nats-py is asyncio-only), each against a real
nats-server with JetStream that the test starts itself (:func:`nats_server`)."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.fixture
def anyio_backend() -> str:
    """Cluster mode is asyncio-only."""
    return "asyncio"


def pytest_configure(config: pytest.Config) -> None:
    """``slow``: a chaos test that takes tens of seconds on 2 cores (CI runs it; skip it
    locally with ``-m "not slow"``)."""
    config.addinivalue_line("markers", "slow: a chaos test of tens of seconds (CI runs it)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every cluster test is ``serial``: leases, lease expiries and NATS restarts are timed
    in seconds, and a test run beside others on two CPUs can miss them."""
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.serial)
