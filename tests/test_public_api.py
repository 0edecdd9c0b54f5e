"""The public API: every package's ``__all__`` names exactly what it defines or re-exports.

Modelled on anyio's ``test_all_attributes``: a public module must list every public
class and function it defines, list nothing it lacks, and use a tuple.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import pytest

import a2a_actors
import orchestrator

PACKAGES = (a2a_actors, orchestrator)


def public_modules() -> list[ModuleType]:
    modules: list[ModuleType] = []
    for package in PACKAGES:
        modules.append(package)
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if info.name.rsplit(".", 1)[-1].startswith("_") or info.name.endswith("__main__"):
                continue
            modules.append(importlib.import_module(info.name))
    return modules


@pytest.mark.parametrize("module", public_modules(), ids=lambda m: m.__name__)
def test_all_is_a_complete_tuple(module: ModuleType) -> None:
    exported = getattr(module, "__all__", None)
    assert isinstance(exported, tuple), f"{module.__name__}.__all__ must be a tuple"
    missing = [name for name in exported if not hasattr(module, name)]
    assert missing == [], f"{module.__name__}.__all__ lists undefined names {missing}"
    assert len(set(exported)) == len(exported), f"{module.__name__}.__all__ has duplicates"
    defined_here = [
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (inspect.isclass(value) or inspect.isfunction(value))
        and getattr(value, "__module__", None) == module.__name__
    ]
    unlisted = sorted(set(defined_here) - set(exported))
    assert unlisted == [], f"{module.__name__} defines public {unlisted} not in __all__"


def test_top_level_api_names_the_essentials() -> None:
    for name in ("agent", "Agent", "TaskContext", "Supervisor", "serve", "A2AClient"):
        assert name in a2a_actors.__all__
