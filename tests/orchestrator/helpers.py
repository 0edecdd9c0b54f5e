"""Helpers of the orchestrator tests: a journal of agent activity, servers, hop records."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anyio
import anyio.abc

from a2a_actors.client import A2AClient, text_message
from a2a_actors.protocol._models import Task
from a2a_actors.protocol._requests import SendMessageConfiguration, SendMessageRequest
from a2a_actors.runtime import Agent, Supervisor, TaskContext
from orchestrator import CORRELATION_URI, HopRecord, Orchestrator, orchestrated, serve
from orchestrator._correlation import hop_record

TIMEOUT = 20.0


@dataclasses.dataclass
class Visit:
    """What one agent saw when it ran."""

    agent: str
    task_id: str
    context_id: str
    traceparent: str
    extensions: frozenset[str]
    correlation: dict[str, Any] | None


class Journal:
    """Entry and exit of every test agent, to prove no agent code is left running."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []
        self.visits: dict[str, list[Visit]] = {}

    @contextmanager
    def running(self, ctx: TaskContext) -> Iterator[None]:
        """Record that ``ctx``'s agent entered (with what it saw) and, finally, exited."""
        name = ctx.agent.name
        self.events.append((name, "enter"))
        carried = (ctx.metadata or {}).get(CORRELATION_URI)
        self.visits.setdefault(name, []).append(
            Visit(
                agent=name,
                task_id=ctx.task_id,
                context_id=ctx.context_id,
                traceparent=ctx.headers.get("traceparent", ""),
                extensions=ctx.extensions,
                correlation=carried if isinstance(carried, dict) else None,
            )
        )
        try:
            yield
        finally:
            self.events.append((name, "exit"))

    def entered(self, name: str) -> int:
        """How many times ``name`` started."""
        return sum(1 for agent, what in self.events if agent == name and what == "enter")

    def still_running(self) -> list[str]:
        """Agents that entered more often than they exited."""
        balance: dict[str, int] = {}
        for agent, what in self.events:
            balance[agent] = balance.get(agent, 0) + (1 if what == "enter" else -1)
        return sorted(agent for agent, n in balance.items() if n)

    def visit(self, name: str) -> Visit:
        """The (only) visit of ``name``."""
        (only,) = self.visits[name]
        return only


@asynccontextmanager
async def served(
    *agents: Agent, orchestrator: Callable[[], Orchestrator] | None = None
) -> AsyncIterator[list[str]]:
    """Serve each agent (orchestrated) on its own loopback server; yields their base URLs.

    ``orchestrator`` makes each server's Orchestrator (closed afterwards); by default
    ``serve`` makes its own.
    """
    async with anyio.create_task_group() as tg:
        urls: list[str] = []
        for agent in agents:
            if orchestrator is None:
                urls.append(await tg.start(serve, agent))
            else:
                urls.append(await tg.start(_serve_with, agent, orchestrator))
        try:
            yield urls
        finally:
            tg.cancel_scope.cancel()


async def _serve_with(
    agent: Agent,
    make: Callable[[], Orchestrator],
    *,
    task_status: anyio.abc.TaskStatus[str] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """``serve`` with an Orchestrator of ours, closed as soon as that server stops."""
    async with make() as orch:
        await serve(agent, orchestrator=orch, task_status=task_status)


def record_of(task: Task) -> HopRecord:
    """The hop record of ``task`` (asserting it has one)."""
    record = hop_record(task.metadata)
    assert record is not None, task.metadata
    return record


async def get_task(url: str, task_id: str) -> Task:
    """GetTask on the server at ``url``."""
    async with await A2AClient.connect(url) as client:
        return await client.get_task(task_id)


@asynccontextmanager
async def running(root: object, orch: Orchestrator | None = None) -> AsyncIterator[Supervisor]:
    """A supervisor running ``root`` (orchestrated) with an Orchestrator as delegator."""
    async with (
        Orchestrator() if orch is None else orch as used,
        Supervisor(orchestrated(root), delegator=used) as sup,
    ):
        yield sup


async def send(sup: Supervisor, text: str, *, immediately: bool = False) -> Task:
    """SendMessage ``text`` in process (``returnImmediately`` with ``immediately``)."""
    config = SendMessageConfiguration(return_immediately=True) if immediately else None
    reply = await sup.send_message(
        SendMessageRequest(message=text_message(text), configuration=config)
    )
    assert isinstance(reply, Task)
    return reply


def status_text(task: Task) -> str:
    """The text of the task's status message ("" without one)."""
    return task.status.message.text if task.status.message is not None else ""
