"""A2A 1.0 core wire objects as msgspec Structs.

Theory of operation
-------------------
Every Struct here mirrors one message of the A2A 1.0 proto (package ``lf.a2a.v1``) in its
ProtoJSON form:

* field names are snake_case in Python and camelCase on the wire (``rename="camel"``);
  snake_case and integer enum values are also accepted on input, by
  :mod:`a2a_actors.protocol.codec`, which owns all decoding;
* default values are omitted on output (``omit_defaults=True``), as ProtoJSON does, and
  fields the proto marks ``optional`` are ``None`` when absent, so an explicit ``false``
  or ``0`` still reaches the wire;
* unknown fields are ignored (peers may be newer than us);
* Structs are frozen and repeated fields are tuples: a decoded object, or a task snapshot
  published by an actor, can be shared between readers without copying;
* a proto ``oneof`` is a set of optional members plus an exactly-one check in
  ``__post_init__``, which msgspec turns into a ``ValidationError`` with the field path;
* instances are not tracked by the cycle collector (``gc=False``; see WireStruct);
* timestamps are timezone-aware datetimes, normalised to UTC so that they are written
  with a ``Z`` suffix; 0, 3, 6 or 9 fractional digits are accepted on input.

Nothing in this module performs I/O.
"""

from __future__ import annotations

import datetime as _dt
import enum
from typing import Annotated, Any

import msgspec
from msgspec.structs import force_setattr

__all__ = (
    "Artifact",
    "JSONObject",
    "Message",
    "Part",
    "Role",
    "StreamResponse",
    "TaskArtifactUpdateEvent",
    "Task",
    "TaskState",
    "TaskStatus",
    "TaskStatusUpdateEvent",
    "Timestamp",
    "WireStruct",
    "utc_now",
)

#: A ``google.protobuf.Struct``: an arbitrary JSON object.
JSONObject = dict[str, Any]

#: A ``google.protobuf.Timestamp``: RFC 3339, timezone required.
Timestamp = Annotated[_dt.datetime, msgspec.Meta(tz=True)]


def utc_now() -> _dt.datetime:
    """Return the current time as an aware UTC datetime (what every status carries)."""
    return _dt.datetime.now(_dt.UTC)


class WireStruct(
    msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel", frozen=True, gc=False
):
    """Base of every A2A wire object: camelCase, defaults omitted, immutable.

    ``gc=False``: wire objects are immutable trees (frozen Structs, tuples, JSON values)
    and cannot form reference cycles, so the cycle collector need not track them. A server
    keeps every finished task; untracked snapshots keep full collections (and their pauses)
    from growing with the number of stored tasks.
    """


def _exactly_one(obj: WireStruct, names: tuple[str, ...], what: str) -> None:
    present = [n for n in names if getattr(obj, n) is not None]
    if len(present) != 1:
        wire = ", ".join(_camel(n) for n in names)
        if present:
            got = ", ".join(_camel(n) for n in present)
            raise ValueError(f"{what} must hold exactly one of {wire}; got {got}")
        raise ValueError(f"{what} must hold exactly one of {wire}")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def _as_utc(obj: WireStruct, name: str) -> None:
    value: _dt.datetime | None = getattr(obj, name)
    if value is None:
        return
    offset = value.utcoffset()
    if offset is None:
        # A naive datetime would silently be read as local time.
        raise ValueError(f"{_camel(name)} must be timezone-aware")
    if offset != _dt.timedelta(0):
        try:
            force_setattr(obj, name, value.astimezone(_dt.UTC))
        except OverflowError:  # e.g. 0001-01-01T00:00:00+01:00
            raise ValueError(f"{_camel(name)} is out of range in UTC") from None
    elif value.tzinfo is not _dt.UTC:
        force_setattr(obj, name, value.replace(tzinfo=_dt.UTC))


class TaskState(enum.Enum):
    """The lifecycle state of a task (proto ``TaskState``).

    ``UNSPECIFIED`` exists on the wire but is never a valid state of a task.
    """

    UNSPECIFIED = "TASK_STATE_UNSPECIFIED"
    SUBMITTED = "TASK_STATE_SUBMITTED"
    WORKING = "TASK_STATE_WORKING"
    COMPLETED = "TASK_STATE_COMPLETED"
    FAILED = "TASK_STATE_FAILED"
    CANCELED = "TASK_STATE_CANCELED"
    INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED"
    REJECTED = "TASK_STATE_REJECTED"
    AUTH_REQUIRED = "TASK_STATE_AUTH_REQUIRED"


class Role(enum.Enum):
    """The sender of a message (proto ``Role``)."""

    UNSPECIFIED = "ROLE_UNSPECIFIED"
    USER = "ROLE_USER"
    AGENT = "ROLE_AGENT"


class Part(WireStruct, frozen=True):
    """One piece of content: exactly one of ``text``, ``raw``, ``url`` or ``data``.

    ``raw`` is bytes (base64 on the wire); ``data`` is any JSON value, ``null`` included,
    so its absence is ``msgspec.UNSET`` rather than ``None``.
    """

    text: str | None = None
    raw: bytes | None = None
    url: str | None = None
    data: Any = msgspec.UNSET
    metadata: JSONObject | None = None
    filename: str = ""
    media_type: str = ""

    def __post_init__(self) -> None:
        count = (
            (self.text is not None)
            + (self.raw is not None)
            + (self.url is not None)
            + (self.data is not msgspec.UNSET)
        )
        if count != 1:
            raise ValueError(
                "Part must hold exactly one of text, raw, url, data"
                + ("" if count == 0 else f"; got {count}")
            )

    @property
    def kind(self) -> str:
        """Which content member is present: ``"text"``, ``"raw"``, ``"url"`` or ``"data"``."""
        if self.text is not None:
            return "text"
        if self.raw is not None:
            return "raw"
        if self.url is not None:
            return "url"
        return "data"


class Message(WireStruct, frozen=True):
    """One turn of communication (proto ``Message``)."""

    message_id: str
    role: Role
    parts: tuple[Part, ...]
    context_id: str = ""
    task_id: str = ""
    metadata: JSONObject | None = None
    extensions: tuple[str, ...] = ()
    reference_task_ids: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.message_id:
            raise ValueError("messageId is required")
        if self.role is Role.UNSPECIFIED:
            raise ValueError("role must be ROLE_USER or ROLE_AGENT")
        if not self.parts:
            raise ValueError("parts must not be empty")

    @property
    def text(self) -> str:
        """The concatenated text of every text part (empty when there is none)."""
        return "".join(p.text for p in self.parts if p.text is not None)


class TaskStatus(WireStruct, frozen=True):
    """The state of a task, with an optional agent message and a UTC timestamp."""

    state: TaskState
    message: Message | None = None
    timestamp: Timestamp | None = None

    def __post_init__(self) -> None:
        _as_utc(self, "timestamp")


class Artifact(WireStruct, frozen=True):
    """An output of a task (proto ``Artifact``)."""

    artifact_id: str
    # REQUIRED in the spec, yet ProtoJSON (the official SDK) leaves an empty list out.
    parts: tuple[Part, ...] = ()
    name: str = ""
    description: str = ""
    metadata: JSONObject | None = None
    extensions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.artifact_id:
            raise ValueError("artifactId is required")


class Task(WireStruct, frozen=True):
    """A unit of work and everything known about it (proto ``Task``)."""

    id: str
    status: TaskStatus
    context_id: str = ""
    artifacts: tuple[Artifact, ...] = ()
    history: tuple[Message, ...] = ()
    metadata: JSONObject | None = None

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("id is required")


class TaskStatusUpdateEvent(WireStruct, frozen=True):
    """A change of a task's status, as streamed (no ``final`` flag in 1.0)."""

    task_id: str
    context_id: str
    status: TaskStatus
    metadata: JSONObject | None = None


class TaskArtifactUpdateEvent(WireStruct, frozen=True):
    """A new artifact or a chunk of one, as streamed.

    ``append`` adds the parts to the artifact already sent under the same id;
    ``last_chunk`` marks the artifact's final chunk.
    """

    task_id: str
    context_id: str
    artifact: Artifact
    append: bool = False
    last_chunk: bool = False
    metadata: JSONObject | None = None


class StreamResponse(WireStruct, frozen=True):
    """One streamed item: exactly one of ``task``, ``message``, ``status_update``,
    ``artifact_update``. Also the body of a push notification."""

    task: Task | None = None
    message: Message | None = None
    status_update: TaskStatusUpdateEvent | None = None
    artifact_update: TaskArtifactUpdateEvent | None = None

    def __post_init__(self) -> None:
        _exactly_one(
            self, ("task", "message", "status_update", "artifact_update"), "StreamResponse"
        )

    @property
    def payload(self) -> Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent:
        """The one member that is present."""
        for value in (self.task, self.message, self.status_update, self.artifact_update):
            if value is not None:
                return value
        raise AssertionError("unreachable: validated in __post_init__")

    @classmethod
    def of(
        cls, payload: Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent
    ) -> StreamResponse:
        """Wrap a payload in the matching member."""
        if isinstance(payload, Task):
            return cls(task=payload)
        if isinstance(payload, Message):
            return cls(message=payload)
        if isinstance(payload, TaskStatusUpdateEvent):
            return cls(status_update=payload)
        return cls(artifact_update=payload)
