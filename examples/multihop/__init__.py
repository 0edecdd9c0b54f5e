"""The multi-hop delegation demo: several servers, one request, the hop tree.

    python -m examples.multihop                      # the tree, with timings
    python -m examples.multihop --json               # the tree as JSON
    python -m examples.multihop --cancel-after 0.5   # cancel the root mid-flight

Five agents are served on loopback (ephemeral ports): a planner fans out to two researchers,
each researcher asks the archive (which consults a local index), and a writer (with a local
editor) combines the results: four hops deep at most. One request goes to the planner; the
tree is then rebuilt from the hops' task metadata alone (GetTask on each server) and printed:
agent, state, depth, time taken and task id per hop. With ``--cancel-after`` the root is
cancelled after that many seconds and every hop of the tree ends CANCELED.
"""

from __future__ import annotations

from .demo import DemoRun, main, run_demo

__all__ = ("DemoRun", "main", "run_demo")
