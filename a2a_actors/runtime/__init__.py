"""The actor runtime: agents, task actors, the supervisor, and an in-process client.

anyio only: everything here runs unchanged on trio and asyncio.
"""

from __future__ import annotations

from a2a_actors.runtime._agent import (
    Agent as Agent,
    Delegator as Delegator,
    agent as agent,
    as_agent as as_agent,
)
from a2a_actors.runtime._context import TaskContext as TaskContext
from a2a_actors.runtime._fanout import (
    SubscriberDropped as SubscriberDropped,
    Subscription as Subscription,
)
from a2a_actors.runtime._inprocess import InProcessClient as InProcessClient
from a2a_actors.runtime._interfaces import AgentSpec as AgentSpec, TaskRunner as TaskRunner
from a2a_actors.runtime._replay import ResumeOptions as ResumeOptions
from a2a_actors.runtime._supervisor import (
    EventObserver as EventObserver,
    Supervisor as Supervisor,
    SupervisorStatistics as SupervisorStatistics,
)

__all__ = (
    "Agent",
    "AgentSpec",
    "Delegator",
    "EventObserver",
    "InProcessClient",
    "ResumeOptions",
    "SubscriberDropped",
    "Subscription",
    "Supervisor",
    "SupervisorStatistics",
    "TaskContext",
    "TaskRunner",
    "agent",
    "as_agent",
)
