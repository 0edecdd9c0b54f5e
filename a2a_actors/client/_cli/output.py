"""What the client commands print: cards, tasks, stream events, and hints on stderr.

Results go to stdout: human-readable by default, or the A2A wire JSON of each result or
event, one per line (``--json``). Everything meant for the person at the terminal rather
than for a script goes to stderr: a task's id while a blocking ``send`` waits, the command
that answers a task waiting for input (and its question, when stdout is JSON and did not
show it), how to follow or cancel a task that was left running.

A task prints as its state line, ``task ID (context CTX): STATE``, then the text of its
artifacts (one line per artifact), then its status message when it adds something (the
answer, a question, why it failed or was canceled). Only a COMPLETED task with neither
falls back to the last agent message of its history: for a canceled or failed one that
message is stale.
"""

from __future__ import annotations

import shlex
import sys

from a2a_actors.client._client import A2AClient
from a2a_actors.client._stream import EventStream
from a2a_actors.protocol import codec
from a2a_actors.protocol._card import AgentCard
from a2a_actors.protocol._models import Message, Role, StreamResponse, Task, TaskState
from a2a_actors.protocol._state import INTERRUPTED_STATES

__all__ = (
    "emit",
    "follow",
    "note",
    "print_card",
    "print_event",
    "print_reply",
    "state_name",
    "task_lines",
    "waiting_hint",
)


def emit(obj: object) -> None:
    """Print ``obj`` as one line of wire JSON."""
    print(codec.encode(obj).decode(), flush=True)


def note(text: str) -> None:
    """Print ``text`` on stderr (for the person, not for a script reading stdout)."""
    print(text, file=sys.stderr, flush=True)


def state_name(state: TaskState) -> str:
    """``input-required`` for INPUT_REQUIRED."""
    return state.name.lower().replace("_", "-")


def print_card(card: AgentCard, client: A2AClient) -> None:
    """The card, human-readable."""
    print(f"{card.name} (version {card.version})")
    if card.description:
        print(f"  {card.description}")
    print("interfaces:")
    for iface in card.supported_interfaces:
        chosen = " (selected)" if iface == client.interface else ""
        tenant = f" tenant={iface.tenant}" if iface.tenant else ""
        print(f"  {iface.protocol_binding} {iface.protocol_version} {iface.url}{tenant}{chosen}")
    caps = card.capabilities
    flags = [
        name
        for name, on in (
            ("streaming", caps.streaming),
            ("push-notifications", caps.push_notifications),
            ("extended-card", caps.extended_agent_card),
        )
        if on
    ]
    print(f"capabilities: {', '.join(flags) or 'none'}")
    if card.security_schemes:
        print(f"security: {', '.join(card.security_schemes)}")
    if not card.skills:
        print("skills: none")
        return
    print("skills:")
    for skill in card.skills:
        print(f"  {skill.id}: {skill.name} - {skill.description}")


def task_lines(task: Task) -> list[str]:
    """The lines a task prints as (see the module docstring)."""
    lines = [f"task {task.id} (context {task.context_id}): {state_name(task.status.state)}"]
    texts = [t for a in task.artifacts if (t := "".join(p.text or "" for p in a.parts))]
    lines.extend(texts)
    status = task.status.message.text if task.status.message is not None else ""
    if status and status not in texts:
        lines.append(status)
    elif not texts and not status and task.status.state is TaskState.COMPLETED:
        said = [m for m in task.history if m.role is Role.AGENT and m.text]
        if said:
            lines.append(said[-1].text)
    return lines


def print_reply(reply: Task | Message) -> None:
    """A SendMessage answer, GetTask or CancelTask result, human-readable."""
    if isinstance(reply, Message):
        if reply.text:
            print(reply.text, flush=True)
        return
    print("\n".join(task_lines(reply)), flush=True)


def waiting_hint(task: Task | None, url: str, *, as_json: bool) -> None:
    """On stderr, for a task waiting for input: the command that answers it, preceded by the
    question when stdout did not show it (``as_json``: stdout is wire JSON). The
    human-readable output already printed the question: it is not repeated."""
    if task is None or task.status.state not in INTERRUPTED_STATES:
        return
    if as_json:
        question = task.status.message.text if task.status.message is not None else ""
        note(f"{state_name(task.status.state)}: {question or '(the agent asked no question)'}")
    note(f'answer with: a2a-actors send {shlex.quote(url)} "<text>" --task-id {task.id}')


async def follow(stream: EventStream, *, as_json: bool) -> None:
    """Print each event as it arrives: text deltas inline, one line per status change.

    Stops at the first final event (a Message, a terminal or an interrupted state).
    """
    midline = False
    async with stream:
        async for event in stream:
            if as_json:
                emit(event)
            else:
                midline = print_event(event, midline)
            if stream.done:  # terminal, or waiting for input: nothing more to follow
                break
    if midline:
        print(flush=True)


def print_event(event: StreamResponse, midline: bool) -> bool:
    """Print one stream event; returns whether the output now ends mid-line."""

    def line(text: str) -> None:
        print(("\n" if midline else "") + text, flush=True)

    if event.artifact_update is not None:
        text = "".join(p.text or "" for p in event.artifact_update.artifact.parts)
        print(text, end="", flush=True)
        return midline or bool(text)
    if event.message is not None:
        line(event.message.text)
    elif event.task is not None:
        task = event.task
        line(f"task {task.id} (context {task.context_id}): {state_name(task.status.state)}")
        asked = task.status.message
        if asked is not None and asked.text and task.status.state in INTERRUPTED_STATES:
            # A snapshot of a task already waiting (subscribe): its question, as an
            # update would have shown it.
            print(f"[{state_name(task.status.state)}: {asked.text}]", flush=True)
    elif event.status_update is not None:
        status = event.status_update.status
        said = f": {status.message.text}" if status.message is not None else ""
        line(f"[{state_name(status.state)}{said}]")
    return False
