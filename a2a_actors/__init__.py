"""a2a-actors: an A2A 1.0 (Agent2Agent) runtime in which every task is an actor.

The curated public API. Everything here is re-exported from its home package:

* the agent API: :func:`agent`, :class:`Agent`, :class:`TaskContext`;
* the runtime: :class:`Supervisor`, :class:`InProcessClient`;
* the server: :func:`serve`, :func:`create_app`, :class:`ServerConfig`, :class:`ServedAgent`;
* the client: :class:`A2AClient`, :class:`RemoteAgent`;
* the wire vocabulary and the error hierarchy, from :mod:`a2a_actors.protocol`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from a2a_actors._version import __version__ as __version__
from a2a_actors.protocol import (
    A2AError as A2AError,
    AgentCard as AgentCard,
    AgentSkill as AgentSkill,
    Artifact as Artifact,
    InvalidParamsError as InvalidParamsError,
    Message as Message,
    Part as Part,
    Role as Role,
    ServerBusyError as ServerBusyError,
    StreamResponse as StreamResponse,
    Task as Task,
    TaskNotCancelableError as TaskNotCancelableError,
    TaskNotFoundError as TaskNotFoundError,
    TaskState as TaskState,
    UnsupportedOperationError as UnsupportedOperationError,
)

if TYPE_CHECKING:
    from a2a_actors.client import A2AClient as A2AClient, RemoteAgent as RemoteAgent
    from a2a_actors.runtime import (
        Agent as Agent,
        InProcessClient as InProcessClient,
        Supervisor as Supervisor,
        TaskContext as TaskContext,
        agent as agent,
    )
    from a2a_actors.server import (
        ServedAgent as ServedAgent,
        ServerConfig as ServerConfig,
        create_app as create_app,
        serve as serve,
    )

# The runtime, server and client import anyio, Quart and httpx; importing them lazily keeps
# ``import a2a_actors.protocol`` free of I/O libraries (a test enforces it).
_LAZY: dict[str, str] = {
    "A2AClient": "a2a_actors.client",
    "RemoteAgent": "a2a_actors.client",
    "Agent": "a2a_actors.runtime",
    "InProcessClient": "a2a_actors.runtime",
    "Supervisor": "a2a_actors.runtime",
    "TaskContext": "a2a_actors.runtime",
    "agent": "a2a_actors.runtime",
    "ServedAgent": "a2a_actors.server",
    "ServerConfig": "a2a_actors.server",
    "create_app": "a2a_actors.server",
    "serve": "a2a_actors.server",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'a2a_actors' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = (
    "A2AClient",
    "A2AError",
    "Agent",
    "AgentCard",
    "AgentSkill",
    "Artifact",
    "InProcessClient",
    "InvalidParamsError",
    "Message",
    "Part",
    "RemoteAgent",
    "Role",
    "ServedAgent",
    "ServerBusyError",
    "ServerConfig",
    "StreamResponse",
    "Supervisor",
    "Task",
    "TaskContext",
    "TaskNotCancelableError",
    "TaskNotFoundError",
    "TaskState",
    "UnsupportedOperationError",
    "__version__",
    "agent",
    "create_app",
    "serve",
)
