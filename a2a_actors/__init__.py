"""a2a-actors: an A2A 1.0 (Agent2Agent) runtime in which every task is an actor."""

from __future__ import annotations

from ._version import __version__ as __version__

__all__ = ("__version__",)
