"""What the inspector shows of a task: its row, its timeline entries, its hop facts (pure).

Everything here turns wire objects into small JSON-ready dicts and does no I/O. Names on the
page are the A2A 1.0 state names without their prefix, in lower case with dashes
(``TASK_STATE_INPUT_REQUIRED`` is ``input-required``). Texts are cut to :data:`MAX_TEXT`
characters: the page is an overview, GetTask has the whole task.

Hop facts are read from the task metadata an orchestrated hop keeps under the correlation
extension (docs/orchestrator.md, "The hop record"); this layer sits below ``orchestrator``,
so it reads only the fields it shows, with their wire names, and a record it cannot read is
no record.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

import msgspec

from a2a_actors.protocol._models import Message, Part, StreamResponse, Task, TaskState

__all__ = (
    "CORRELATION_URI",
    "MAX_TEXT",
    "ChildFacts",
    "HopFacts",
    "entry_of",
    "hop_facts",
    "http_url",
    "parse_state",
    "row_of",
    "snapshot_timeline",
    "state_name",
)

#: The correlation extension's URI (``orchestrator._correlation.CORRELATION_URI``).
CORRELATION_URI = "urn:a2a-actors:ext:correlation:v1"
#: Longest text shown for one message or artifact.
MAX_TEXT = 500

_PREFIX = "TASK_STATE_"


class ChildFacts(msgspec.Struct, kw_only=True, rename="camel"):
    """One child as its parent recorded it."""

    agent: str = ""
    task_id: str = ""
    context_id: str = ""
    state: str = ""
    depth: int = 0
    url: str = ""
    local: bool = False
    started_at: _dt.datetime | None = None
    ended_at: _dt.datetime | None = None


class HopFacts(msgspec.Struct, kw_only=True, rename="camel"):
    """The parts of a hop record the inspector shows."""

    trace_id: str = ""
    depth: int = 0
    parent_task_id: str = ""
    parent_agent: str = ""
    parent_url: str = ""
    agent: str = ""
    url: str = ""
    started_at: _dt.datetime | None = None
    children: list[ChildFacts] = msgspec.field(default_factory=list)


def hop_facts(metadata: dict[str, Any] | None) -> HopFacts | None:
    """The hop record in task metadata, or None when absent or unreadable."""
    if not metadata:
        return None
    raw = metadata.get(CORRELATION_URI)
    if raw is None:
        return None
    try:
        return msgspec.convert(raw, HopFacts)
    except msgspec.ValidationError:
        return None


def http_url(url: str) -> str:
    """``url`` when it is an ``http(s)`` URL (safe to show as a link), else ``""``."""
    return url if url.startswith(("http://", "https://")) and " " not in url else ""


def state_name(state: TaskState | str) -> str:
    """``TASK_STATE_INPUT_REQUIRED`` -> ``input-required``."""
    value = state.value if isinstance(state, TaskState) else state
    return value.removeprefix(_PREFIX).lower().replace("_", "-")


def parse_state(name: str) -> TaskState:
    """The state a page name or a wire name stands for.

    Raises:
        ValueError: Not a task state.
    """
    wire = name if name.startswith(_PREFIX) else _PREFIX + name.upper().replace("-", "_")
    return TaskState(wire)


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _parts_text(parts: tuple[Part, ...]) -> str:
    pieces = []
    for part in parts:
        if part.text is not None:
            pieces.append(part.text)
        elif part.url is not None:
            pieces.append(f"[file {part.filename or part.url}]")
        elif part.raw is not None:
            pieces.append(f"[{len(part.raw)} bytes {part.media_type}]".replace(" ]", "]"))
        elif part.data is not msgspec.UNSET:
            pieces.append(msgspec.json.encode(part.data).decode())
    return _cut(" ".join(pieces))


def _message(message: Message | None) -> dict[str, str] | None:
    if message is None:
        return None
    return {
        "role": message.role.value.removeprefix("ROLE_").lower(),
        "text": _parts_text(message.parts),
    }


def row_of(task: Task, agent: str, started_at: _dt.datetime | None = None) -> dict[str, Any]:
    """The table row of ``task`` (served by ``agent`` unless its hop record names another).

    Its last message is the status message, else the last message of the history given.
    """
    facts = hop_facts(task.metadata)
    status = task.status
    last = status.message if status.message is not None else (task.history or (None,))[-1]
    row: dict[str, Any] = {
        "id": task.id,
        "contextId": task.context_id,
        "state": state_name(status.state),
        "agent": facts.agent if facts is not None and facts.agent else agent,
        "startedAt": facts.started_at if facts is not None and facts.started_at else started_at,
        "updatedAt": status.timestamp,
        "lastMessage": _message(last),
    }
    if facts is not None:
        row["depth"] = facts.depth
        row["children"] = len(facts.children)
        row["parentTaskId"] = facts.parent_task_id
    return row


def entry_of(event: StreamResponse, now: _dt.datetime) -> dict[str, Any]:
    """The timeline entry of one published event (``now`` dates an artifact)."""
    if event.status_update is not None:
        status = event.status_update.status
        return {
            "kind": "status",
            "at": status.timestamp or now,
            "state": state_name(status.state),
            "message": _message(status.message),
        }
    if event.artifact_update is not None:
        artifact = event.artifact_update.artifact
        return {
            "kind": "artifact",
            "at": now,
            "name": artifact.name or artifact.artifact_id,
            "text": _parts_text(artifact.parts),
            "append": event.artifact_update.append,
        }
    if event.task is not None:
        status = event.task.status
        return {
            "kind": "created",
            "at": status.timestamp or now,
            "state": state_name(status.state),
            "message": _message(status.message),
        }
    return {"kind": "message", "at": now, "message": _message(event.message)}


def snapshot_timeline(task: Task) -> list[dict[str, Any]]:
    """A timeline read from a task snapshot alone (its events were not recorded): the
    history's messages, the artifacts, then the current status."""
    entries: list[dict[str, Any]] = [
        {"kind": "message", "at": None, "message": _message(message)} for message in task.history
    ]
    entries.extend(
        {
            "kind": "artifact",
            "at": None,
            "name": artifact.name or artifact.artifact_id,
            "text": _parts_text(artifact.parts),
            "append": False,
        }
        for artifact in task.artifacts
    )
    status = task.status
    entries.append(
        {
            "kind": "status",
            "at": status.timestamp,
            "state": state_name(status.state),
            "message": _message(status.message),
        }
    )
    return entries
