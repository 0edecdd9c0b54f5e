"""The one-line error of a framework module whose extra is not installed."""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ("MissingExtraError", "require")


class MissingExtraError(ImportError):
    """A framework bridge was imported without its framework (its extra) installed."""


def require(module: str, *, extra: str, bridge: str) -> ModuleType:
    """Import ``module``, or say in one line which extra brings it.

    Raises:
        MissingExtraError: ``module`` (or one of its own imports) is not installed.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(
            f"{bridge} needs the {extra!r} extra: pip install 'a2a-actors[{extra}]' "
            f"({module} is not installed: {exc})"
        ) from exc
