"""Placeholders and references (pure, no NATS): every shape that travels is stripped of its
large pieces and restored exactly, and the placeholders keep everything but the content."""

from __future__ import annotations

import datetime as dt
from typing import Any

import msgspec
import pytest

from a2a_actors.cluster._object_refs import Ref, pieces, restore, strip
from a2a_actors.protocol import Task, TaskState, TaskStatus
from a2a_actors.protocol._models import (
    Artifact,
    Message,
    Part,
    Role,
    StreamResponse,
    TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
)
from a2a_actors.stores import StoredTask

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
BIG = "é" * 5000  # 10,000 bytes of UTF-8
SMALL = "x" * 10


def message(*parts: Part) -> Message:
    return Message(message_id="m", role=Role.AGENT, parts=parts)


def contents_of(value: Any, minimum: int) -> tuple[list[Ref], dict[str, bytes]]:
    """References and contents for every piece of at least ``minimum`` bytes."""
    refs: list[Ref] = []
    contents: dict[str, bytes] = {}
    for number, piece in enumerate(pieces(value, minimum)):
        kind, content = piece.content()
        name = f"t/{number}"
        refs.append(Ref(piece.at, piece.index, piece.part, kind, name, len(content)))
        contents[name] = content
    return refs, contents


status_message = message(Part(text=BIG), Part(text=SMALL))
task = Task(
    id="t",
    context_id="c",
    status=TaskStatus(state=TaskState.WORKING, timestamp=T0, message=status_message),
    artifacts=(
        Artifact(artifact_id="a0", parts=(Part(text=SMALL),)),
        Artifact(
            artifact_id="a1",
            parts=(
                Part(text=SMALL),
                Part(raw=bytes(range(256)) * 40, filename="f.bin", media_type="x/y"),
                Part(data={"rows": [BIG, 1, None]}, metadata={"k": "v"}),
                Part(url="https://example.com/" + SMALL),
            ),
        ),
    ),
    history=(message(Part(text=SMALL)), message(Part(text=BIG)), status_message),
)
SHAPES = [
    StoredTask(task, "alice", 3, {"conversation": [BIG]}),
    task,
    status_message,
    StreamResponse(task=task),
    StreamResponse(message=status_message),
    StreamResponse(
        status_update=TaskStatusUpdateEvent(task_id="t", context_id="c", status=task.status)
    ),
    StreamResponse(
        artifact_update=TaskArtifactUpdateEvent(
            task_id="t", context_id="c", artifact=task.artifacts[1], append=True
        )
    ),
]


@pytest.mark.parametrize("value", SHAPES, ids=lambda value: type(value).__name__)
def test_every_shape_is_stripped_and_restored_exactly(value: Any) -> None:
    refs, contents = contents_of(value, 1000)
    assert refs  # each shape has a large piece
    stripped = strip(value, refs)
    assert len(msgspec.json.encode(stripped)) < len(msgspec.json.encode(value)) - 9000
    assert pieces(stripped, 1000) == []  # nothing large is left inline
    assert restore(stripped, refs, contents) == value


def test_a_placeholder_keeps_all_but_the_content() -> None:
    part = task.artifacts[1].parts[1]
    refs, _ = contents_of(task, 1000)
    stripped = strip(task, refs)
    placeholder = stripped.artifacts[1].parts[1]
    assert (placeholder.text, placeholder.raw) == ("", None)
    assert (placeholder.filename, placeholder.media_type) == (part.filename, part.media_type)
    assert stripped.artifacts[1].parts[2].metadata == {"k": "v"}
    assert stripped.artifacts[0] == task.artifacts[0]  # small parts untouched


def test_a_stored_tasks_private_goes_whole_and_comes_back() -> None:
    record = StoredTask(task, "alice", 3, {"conversation": [BIG]})
    refs, contents = contents_of(record, 1000)
    assert [ref.kind for ref in refs if ref.at == "p"] == ["private"]
    stripped = strip(record, refs)
    assert stripped.private is None
    assert restore(stripped, refs, contents).private == record.private


def test_a_reference_that_fits_no_placeholder_is_refused() -> None:
    with pytest.raises(ValueError, match="not a placeholder"):
        restore(task, [Ref("h", 1, 0, "text", "t/0", 1)], {"t/0": b"x"})
    with pytest.raises(ValueError, match="past the history"):
        strip(task, [Ref("h", 9, 0, "text", "t/0", 1)])
