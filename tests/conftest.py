"""Test-suite wiring.

Async tests run under trio (pytest-trio) unless they carry ``@pytest.mark.anyio``; those
run under anyio's plugin, parametrised over the ``anyio_backend`` fixture, so the runtime
tests exercise both trio and asyncio with the same code.
"""

from __future__ import annotations

import inspect

import pytest
from hypothesis import HealthCheck, settings

# Wall-clock deadlines make property tests flaky on a loaded 2-core machine; the examples
# themselves are the test, not their speed (benchmarks/ measures speed).
settings.register_profile(
    "a2a", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile("a2a")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        func = getattr(item, "obj", None)
        if func is None:
            continue
        inner = getattr(getattr(func, "hypothesis", None), "inner_test", func)
        if inspect.iscoroutinefunction(inner) and item.get_closest_marker("anyio") is None:
            item.add_marker(pytest.mark.trio)
