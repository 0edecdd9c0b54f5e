"""The actor runtime: agents, task actors, the supervisor, and an in-process client.

anyio only: everything here runs unchanged on trio and asyncio.
"""

from __future__ import annotations

from a2a_actors.protocol.settling import SHUTDOWN_TEXT as SHUTDOWN_TEXT
from a2a_actors.protocol.state import SETTLED_STATES as SETTLED_STATES
from a2a_actors.runtime.actor import ActorStatistics as ActorStatistics, TaskActor as TaskActor
from a2a_actors.runtime.admission import AdmissionStatistics as AdmissionStatistics
from a2a_actors.runtime.agent import (
    Agent as Agent,
    AgentHandler as AgentHandler,
    Delegator as Delegator,
    agent as agent,
    as_agent as as_agent,
)
from a2a_actors.runtime.context import TaskContext as TaskContext
from a2a_actors.runtime.fanout import (
    FanoutStatistics as FanoutStatistics,
    SubscriberDropped as SubscriberDropped,
    Subscription as Subscription,
)
from a2a_actors.runtime.inprocess import InProcessClient as InProcessClient
from a2a_actors.runtime.interfaces import AgentSpec as AgentSpec, TaskRunner as TaskRunner
from a2a_actors.runtime.mailbox import Mailbox as Mailbox, MailboxStatistics as MailboxStatistics
from a2a_actors.runtime.publication import Publication as Publication
from a2a_actors.runtime.replay import ResumeOptions as ResumeOptions
from a2a_actors.runtime.supervisor import (
    EventObserver as EventObserver,
    Supervisor as Supervisor,
    SupervisorStatistics as SupervisorStatistics,
)

__all__ = (
    "SETTLED_STATES",
    "SHUTDOWN_TEXT",
    "ActorStatistics",
    "AdmissionStatistics",
    "Agent",
    "AgentHandler",
    "AgentSpec",
    "Delegator",
    "EventObserver",
    "FanoutStatistics",
    "InProcessClient",
    "Mailbox",
    "MailboxStatistics",
    "Publication",
    "ResumeOptions",
    "SubscriberDropped",
    "Subscription",
    "Supervisor",
    "SupervisorStatistics",
    "TaskActor",
    "TaskContext",
    "TaskRunner",
    "agent",
    "as_agent",
)
