"""The actor runtime: agents, task actors, the supervisor, and an in-process client.

anyio only: everything here runs unchanged on trio and asyncio.
"""

from __future__ import annotations

from ..protocol.settling import SHUTDOWN_TEXT as SHUTDOWN_TEXT
from ..protocol.state import SETTLED_STATES as SETTLED_STATES
from .actor import ActorStatistics as ActorStatistics, TaskActor as TaskActor
from .admission import AdmissionStatistics as AdmissionStatistics
from .agent import (
    Agent as Agent,
    AgentHandler as AgentHandler,
    Delegator as Delegator,
    agent as agent,
    as_agent as as_agent,
)
from .context import TaskContext as TaskContext
from .fanout import (
    FanoutStatistics as FanoutStatistics,
    SubscriberDropped as SubscriberDropped,
    Subscription as Subscription,
)
from .inprocess import InProcessClient as InProcessClient
from .interfaces import AgentSpec as AgentSpec, TaskRunner as TaskRunner
from .mailbox import Mailbox as Mailbox, MailboxStatistics as MailboxStatistics
from .publication import Publication as Publication
from .replay import ResumeOptions as ResumeOptions
from .supervisor import (
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
