"""What a handler's output means: agent messages from text, and return values.

The rule for return values (``None``, ``str``, ``Message``, ``Artifact`` or a sequence of
them) is stated once, for users, in :mod:`~a2a_actors.runtime._agent`; :func:`interpret`
applies it. The actor then emits the artifacts and completes the task; an unsupported value
fails it. Pure functions: no I/O, no state.
"""

from __future__ import annotations

from uuid import uuid4

from a2a_actors.protocol._errors import InvalidAgentResponseError
from a2a_actors.protocol._models import Artifact, Message, Part, Role

__all__ = ("agent_message", "interpret")


def agent_message(content: str | Message) -> Message:
    """``content`` as an agent Message: a string becomes one text part with a fresh id."""
    if isinstance(content, Message):
        return content
    return Message(message_id=uuid4().hex, role=Role.AGENT, parts=(Part(text=content),))


def interpret(result: object) -> tuple[Message | None, tuple[Artifact, ...]]:
    """Split a handler's return value into a status message and artifacts.

    Raises:
        InvalidAgentResponseError: The value is not None, str, Message or Artifact(s).
    """
    if result is None:
        return None, ()
    if isinstance(result, str | Message):
        return agent_message(result), ()
    if isinstance(result, Artifact):
        return None, (result,)
    if isinstance(result, list | tuple) and all(isinstance(a, Artifact) for a in result):
        return None, tuple(result)
    raise InvalidAgentResponseError(
        f"agent returned an unsupported value of type {type(result).__name__}; expected "
        "None, str, Message, Artifact or a sequence of Artifacts"
    )
