"""Where a value's large content went: references to objects, and the values with them.

Theory of operation
-------------------
What the cluster writes to NATS — a task's entry in the tasks bucket, a logged event, an
inbox command or reply — is one NATS message, at most the server's ``max_payload`` (1 MB
by default). A value larger than that keeps its shape but not its large content: each
large *part* (the ``text``, ``raw`` or ``data`` of a :class:`~a2a_actors.protocol._models.Part`)
and a large ``private`` (what the agent keeps with a stored task) goes to an object of the
cluster's object store (:mod:`~a2a_actors.cluster._offload`), and the value carries a
:class:`Ref` per moved piece instead: where it was, what kind it was, the object's name and
size. The part itself stays where it was as a *placeholder* — the same part, its
``metadata``, ``filename`` and ``mediaType`` kept, its content an empty ``text`` — so the
value's shape, indices and every other field are unchanged, and only :func:`restore`
(given the objects' bytes) makes it whole again.

Why parts rather than whole snapshots: a task's snapshot is written again at every change,
and a large artifact stays in every later snapshot; moved part by part, each large piece
goes to the object store once (its name is its content's digest, so the next snapshot, the
event that carried it and the inbox reply that returns it all refer to the same object),
and every small field stays inline, readable by the mirror's filters without any object.

This module is pure: no I/O. It finds the pieces worth moving (:func:`pieces`), replaces
them with placeholders (:func:`strip`) and puts content back (:func:`restore`), for the
four shapes that travel: :class:`~a2a_actors.stores._base.StoredTask`,
:class:`~a2a_actors.protocol._models.Task`, :class:`~a2a_actors.protocol._models.Message` and
:class:`~a2a_actors.protocol._models.StreamResponse`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar, cast

import msgspec

from a2a_actors.protocol._models import Artifact, Message, Part, StreamResponse, Task
from a2a_actors.stores._base import StoredTask

__all__ = ("Piece", "Ref", "Refs", "pieces", "restore", "strip")

#: Where a piece is: a part of an artifact (``a``), of a history message (``h``), of the
#: status message (``s``), of a lone message (``m``), or a stored task's private (``p``).
AT_ARTIFACT, AT_HISTORY, AT_STATUS, AT_MESSAGE, AT_PRIVATE = "a", "h", "s", "m", "p"
KINDS = ("text", "raw", "data", "private")


class Ref(msgspec.Struct, frozen=True, array_like=True):
    """One piece moved to an object.

    Attributes:
        at: Where it was (``a``, ``h``, ``s``, ``m`` or ``p``: see the module's constants).
        index: The artifact's or history message's index (0 elsewhere).
        part: The part's index in its artifact or message (0 for ``p``).
        kind: What the part held: ``text`` (UTF-8), ``raw`` (the bytes), ``data`` (its
            JSON), or ``private`` (the private dict's JSON).
        name: The object's name.
        size: The object's size in bytes.
    """

    at: str
    index: int
    part: int
    kind: str
    name: str
    size: int


#: The references a value carries (UNSET when it carries none: encoded as nothing at all).
Refs = tuple[Ref, ...]
V = TypeVar("V", StoredTask, Task, Message, StreamResponse)
_JSON = msgspec.json.Encoder()
_PLACEHOLDER_TEXT = ""


@dataclasses.dataclass(frozen=True, slots=True)
class Piece:
    """A piece of a value that may be moved out.

    Attributes:
        at: Where it is (see :class:`Ref`).
        index: The artifact's or history message's index.
        part: The part's index.
        source: The part (or, for ``p``, the private dict) itself.
        estimate: Its size inline, about (characters of text, base64 of raw, JSON of data).
    """

    at: str
    index: int
    part: int
    source: Part | dict[str, Any]
    estimate: int

    def content(self) -> tuple[str, bytes]:
        """The piece's kind and the bytes its object holds (see :class:`Ref`)."""
        source = self.source
        if isinstance(source, dict):
            return "private", _JSON.encode(source)
        if source.text is not None:
            return "text", source.text.encode()
        if source.raw is not None:
            return "raw", source.raw
        return "data", _JSON.encode(source.data)


def _estimate(part: Part) -> int:
    text = part.text
    if text is not None:
        return len(text) if text.isascii() else len(text.encode())
    if part.raw is not None:
        return (len(part.raw) + 2) // 3 * 4
    if part.data is not msgspec.UNSET and part.data is not None:
        if isinstance(part.data, str | int | float | bool):
            return len(str(part.data))
        return len(_JSON.encode(part.data))
    return 0  # a url part stays inline


def _parts_of(at: str, index: int, parts: Sequence[Part], minimum: int) -> Iterator[Piece]:
    for number, part in enumerate(parts):
        estimate = _estimate(part)
        if estimate >= minimum:
            yield Piece(at, index, number, part, estimate)


def _task_pieces(task: Task, minimum: int) -> Iterator[Piece]:
    for index, artifact in enumerate(task.artifacts):
        yield from _parts_of(AT_ARTIFACT, index, artifact.parts, minimum)
    for index, message in enumerate(task.history):
        yield from _parts_of(AT_HISTORY, index, message.parts, minimum)
    if task.status.message is not None:
        yield from _parts_of(AT_STATUS, 0, task.status.message.parts, minimum)


def pieces(value: StoredTask | Task | Message | StreamResponse, minimum: int) -> list[Piece]:
    """Every piece of ``value`` whose inline size is about ``minimum`` bytes or more."""
    found: list[Piece] = []
    if isinstance(value, StoredTask):
        found.extend(_task_pieces(value.task, minimum))
        private = value.private
        if private:
            size = len(_JSON.encode(private))
            if size >= minimum:
                found.append(Piece(AT_PRIVATE, 0, 0, private, size))
    elif isinstance(value, Task):
        found.extend(_task_pieces(value, minimum))
    elif isinstance(value, Message):
        found.extend(_parts_of(AT_MESSAGE, 0, value.parts, minimum))
    elif value.task is not None:
        found.extend(_task_pieces(value.task, minimum))
    elif value.message is not None:
        found.extend(_parts_of(AT_MESSAGE, 0, value.message.parts, minimum))
    elif value.status_update is not None:
        message = value.status_update.status.message
        if message is not None:
            found.extend(_parts_of(AT_STATUS, 0, message.parts, minimum))
    elif value.artifact_update is not None:
        found.extend(_parts_of(AT_ARTIFACT, 0, value.artifact_update.artifact.parts, minimum))
    return found


def _placeholder(part: Part, kind: str) -> Part:
    if kind == "text":
        return msgspec.structs.replace(part, text=_PLACEHOLDER_TEXT)
    return msgspec.structs.replace(part, text=_PLACEHOLDER_TEXT, raw=None, data=msgspec.UNSET)


def _filled(part: Part, kind: str, content: bytes) -> Part:
    if part.text != _PLACEHOLDER_TEXT:
        raise ValueError("a reference points at a part that is not a placeholder")
    if kind == "text":
        return msgspec.structs.replace(part, text=content.decode())
    if kind == "raw":
        return msgspec.structs.replace(part, text=None, raw=content)
    if kind == "data":
        return msgspec.structs.replace(part, text=None, data=msgspec.json.decode(content))
    raise ValueError(f"a reference of unknown kind {kind!r}")


_Edit = Callable[[Part, Ref], Part]


class _Keep:
    """A stored task's private left as it is."""


_KEEP = _Keep()
_Private = dict[str, Any] | None | _Keep


def _edit_parts(parts: tuple[Part, ...], refs: Sequence[Ref], edit: _Edit) -> tuple[Part, ...]:
    changed = list(parts)
    for ref in refs:
        if not 0 <= ref.part < len(changed):
            raise ValueError(f"a reference points past the parts: {ref}")
        changed[ref.part] = edit(changed[ref.part], ref)
    return tuple(changed)


def _grouped(refs: Sequence[Ref], at: str) -> dict[int, list[Ref]]:
    groups: dict[int, list[Ref]] = {}
    for ref in refs:
        if ref.at == at:
            groups.setdefault(ref.index, []).append(ref)
    return groups


def _edit_message(message: Message, refs: Sequence[Ref], edit: _Edit) -> Message:
    return msgspec.structs.replace(message, parts=_edit_parts(message.parts, refs, edit))


def _edit_artifact(artifact: Artifact, refs: Sequence[Ref], edit: _Edit) -> Artifact:
    return msgspec.structs.replace(artifact, parts=_edit_parts(artifact.parts, refs, edit))


def _edit_messages(
    messages: tuple[Message, ...], groups: Mapping[int, list[Ref]], edit: _Edit
) -> tuple[Message, ...]:
    if not groups:
        return messages
    changed = list(messages)
    for index, refs in groups.items():
        if not 0 <= index < len(changed):
            raise ValueError(f"a reference points past the history: {refs[0]}")
        changed[index] = _edit_message(changed[index], refs, edit)
    return tuple(changed)


def _edit_task(task: Task, refs: Sequence[Ref], edit: _Edit) -> Task:
    artifacts = task.artifacts
    artifact_groups = _grouped(refs, AT_ARTIFACT)
    if artifact_groups:
        changed = list(artifacts)
        for index, group in artifact_groups.items():
            if not 0 <= index < len(changed):
                raise ValueError(f"a reference points past the artifacts: {group[0]}")
            changed[index] = _edit_artifact(changed[index], group, edit)
        artifacts = tuple(changed)
    history = _edit_messages(task.history, _grouped(refs, AT_HISTORY), edit)
    status = task.status
    status_refs = [ref for ref in refs if ref.at == AT_STATUS]
    if status_refs:
        if status.message is None:
            raise ValueError("a reference points at a status message the task lacks")
        status = msgspec.structs.replace(
            status, message=_edit_message(status.message, status_refs, edit)
        )
    return msgspec.structs.replace(task, artifacts=artifacts, history=history, status=status)


_Value = StoredTask | Task | Message | StreamResponse


def _edit_event(value: StreamResponse, refs: Sequence[Ref], edit: _Edit) -> StreamResponse:
    if value.task is not None:
        return StreamResponse(task=_edit_task(value.task, refs, edit))
    if value.message is not None:
        return StreamResponse(message=_edit_message(value.message, refs, edit))
    if value.status_update is not None:
        update = value.status_update
        status = update.status
        if status.message is None:
            raise ValueError("a reference points at a status message the event lacks")
        status = msgspec.structs.replace(status, message=_edit_message(status.message, refs, edit))
        return StreamResponse(status_update=msgspec.structs.replace(update, status=status))
    if value.artifact_update is not None:
        change = value.artifact_update
        artifact = _edit_artifact(change.artifact, refs, edit)
        return StreamResponse(artifact_update=msgspec.structs.replace(change, artifact=artifact))
    return value


def _edit(value: _Value, refs: Sequence[Ref], edit: _Edit, private: _Private) -> _Value:
    # ``refs`` holds parts only; ``private`` is the stored task's new private (or _KEEP).
    if not refs and isinstance(private, _Keep):
        return value
    if isinstance(value, StoredTask):
        task = _edit_task(value.task, refs, edit)
        keep = value.private if isinstance(private, _Keep) else private
        return StoredTask(task, value.owner, value.version, keep)
    if isinstance(value, Task):
        return _edit_task(value, refs, edit)
    if isinstance(value, Message):
        return _edit_message(value, refs, edit)
    return _edit_event(value, refs, edit)


def strip(value: V, refs: Sequence[Ref]) -> V:
    """``value`` with each piece ``refs`` names replaced by its placeholder (a private
    moved out becomes None).

    Raises:
        ValueError: A reference points at no part of ``value``.
    """
    parts = [ref for ref in refs if ref.at != AT_PRIVATE]
    private: _Private = None if len(parts) < len(refs) else _KEEP
    return cast(V, _edit(value, parts, lambda part, ref: _placeholder(part, ref.kind), private))


def restore(value: V, refs: Sequence[Ref], contents: Mapping[str, bytes]) -> V:
    """``value`` made whole: each placeholder ``refs`` names filled with its object's
    bytes from ``contents`` (by object name).

    Raises:
        ValueError: A reference points at no placeholder of ``value``, or an object's
            bytes are not what its kind holds (not UTF-8, not JSON).
        KeyError: An object's bytes are missing from ``contents``.
    """
    private: _Private = _KEEP
    for ref in refs:
        if ref.at == AT_PRIVATE:
            private = msgspec.json.decode(contents[ref.name], type=dict[str, Any])
    parts = [ref for ref in refs if ref.at != AT_PRIVATE]
    filled = _edit(
        value, parts, lambda part, ref: _filled(part, ref.kind, contents[ref.name]), private
    )
    return cast(V, filled)
