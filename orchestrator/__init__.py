"""Delegation across agents with explicit cross-hop correlation (see docs/architecture.md).

This package sits above every ``a2a_actors`` layer: it may import all of them and nothing
imports it.
"""

from __future__ import annotations

__all__: tuple[str, ...] = ()
