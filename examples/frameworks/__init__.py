"""Agents of three frameworks in one multi-hop pipeline, on three servers.

    python -m examples.frameworks                 # the answer as it streams, then the hop tree
    python -m examples.frameworks --json          # the hop tree as JSON
    OPENAI_API_KEY=... python -m examples.frameworks   # real models (not in CI)

A PydanticAI **planner** asks a LangGraph **researcher** (a ``remote_tool``), which asks an
OpenAI Agents **forecaster** (a ``remote_tool`` in its ``ToolNode``); each is served by
a2a-actors on loopback (ephemeral ports) through its framework bridge
(``a2a_actors.frameworks``). One request streams to the planner; the model-initiated calls are
delegations, so the hop tree, rebuilt from the servers' task metadata, shows all three.
Scripted models by default (each framework's own test model, answering from what it was
sent): no network, no API key. Needs the ``pydantic-ai``, ``langgraph`` and
``openai-agents`` extras.
"""

from __future__ import annotations

from .demo import DemoRun, main, run_demo

__all__ = ("DemoRun", "main", "run_demo")
