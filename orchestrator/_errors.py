"""Errors of delegation: each carries where it began and which hops relayed it.

Hierarchy::

    DelegationError           a delegated task ended FAILED, REJECTED or CANCELED, or its hop broke
    ├── DepthLimitError       a hop would exceed the maximum depth (refused before any work)
    └── CycleError            a hop path would revisit an agent (refused before any work)

    InputRequired             not a failure: a child asks for input and the parent chose to
                              answer it itself (``relay_input=False``)

A failure at hop C seen at hop A says: the origin agent and task (C), the origin's state and
status text, and the relay path: the agents the error passed through on its way up, nearest
to the origin first. When a hop fails because of a child's error it re-raises
:meth:`DelegationError.relayed_by` itself, so at the root of ``A -> B -> C`` the error that C
started reads ``origin C, relay (B, A)``; A's *agent* (which receives it from its delegate
call) sees ``relay (B,)``.

Across servers the error travels as JSON (:meth:`DelegationError.to_metadata`) in the failed
task's metadata and status message metadata, under the correlation extension's URI, and is
rebuilt with its class by :meth:`DelegationError.from_metadata`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from a2a_actors.protocol._models import Message
    from orchestrator._outcome import DelegationResult

__all__ = ("CycleError", "DelegationError", "DepthLimitError", "InputRequired")


class DelegationError(Exception):
    """A delegated hop failed.

    Attributes:
        reason: The origin's status message text (or the transport error).
        origin_agent: The agent whose task failed first.
        origin_task_id: That task's id ("" when the hop failed before a task existed).
        state: The origin task's final state name (e.g. ``TASK_STATE_FAILED``), or "".
        relay: Agents that relayed the error upwards, nearest to the origin first.
        path: The hop path (root first) of the origin hop, where known.
    """

    def __init__(
        self,
        reason: str,
        *,
        origin_agent: str = "",
        origin_task_id: str = "",
        state: str = "",
        relay: tuple[str, ...] = (),
        path: tuple[str, ...] = (),
    ) -> None:
        self.reason = reason
        self.origin_agent = origin_agent
        self.origin_task_id = origin_task_id
        self.state = state
        self.relay = relay
        self.path = path
        super().__init__(self._describe())

    def __str__(self) -> str:
        return self._describe()

    def _describe(self) -> str:
        where = ""
        if self.origin_agent:
            state = self.state.removeprefix("TASK_STATE_") or "raised"
            task = f" task {self.origin_task_id}" if self.origin_task_id else ""
            where = f" [{state} at {self.origin_agent}{task}"
            if self.relay:
                where += ", relayed by " + " -> ".join(self.relay)
            where += "]"
        return f"{self.reason}{where}"

    def relayed_by(self, agent: str) -> DelegationError:
        """A copy of this error (same class) with ``agent`` appended to the relay path."""
        return type(self)(
            self.reason,
            origin_agent=self.origin_agent,
            origin_task_id=self.origin_task_id,
            state=self.state,
            relay=(*self.relay, agent),
            path=self.path,
        )

    def to_metadata(self) -> dict[str, Any]:
        """A JSON object describing the error, for task and status metadata."""
        return {
            "type": type(self).__name__,
            "reason": self.reason,
            "originAgent": self.origin_agent,
            "originTaskId": self.origin_task_id,
            "state": self.state,
            "relay": list(self.relay),
            "path": list(self.path),
        }

    @staticmethod
    def from_metadata(data: Mapping[str, Any]) -> DelegationError:
        """The error described by :meth:`to_metadata` output, with its class.

        Unknown ``type`` values give a plain :class:`DelegationError`; missing fields are
        empty.
        """
        cls = _BY_NAME.get(str(data.get("type", "")), DelegationError)
        return cls(
            str(data.get("reason", "")),
            origin_agent=str(data.get("originAgent", "")),
            origin_task_id=str(data.get("originTaskId", "")),
            state=str(data.get("state", "")),
            relay=tuple(str(a) for a in data.get("relay", ()) or ()),
            path=tuple(str(a) for a in data.get("path", ()) or ()),
        )


class DepthLimitError(DelegationError):
    """The hop would be deeper than the configured maximum; nothing was started."""


class CycleError(DelegationError):
    """The hop path would visit an agent twice; nothing was started."""


_BY_NAME: dict[str, type[DelegationError]] = {
    cls.__name__: cls for cls in (DelegationError, DepthLimitError, CycleError)
}


class InputRequired(Exception):
    """A child asks for input and the parent delegated with ``relay_input=False``.

    The child task stays INPUT_REQUIRED (or AUTH_REQUIRED) and is still the parent's:
    answer it with ``result = await exc.answer("...")`` (which may raise ``InputRequired``
    again), or leave it; when the parent's task ends, unanswered children are canceled.

    Attributes:
        question: The child's status message (its question).
        agent: The child's agent name.
        task_id: The child's task id.
        context_id: The child's context id.
        state: ``TASK_STATE_INPUT_REQUIRED`` or ``TASK_STATE_AUTH_REQUIRED``.
    """

    def __init__(
        self,
        question: Message | None,
        *,
        agent: str,
        task_id: str,
        context_id: str,
        state: str,
        answer: Callable[[str | Message], Awaitable[DelegationResult]],
    ) -> None:
        self.question = question
        self.agent = agent
        self.task_id = task_id
        self.context_id = context_id
        self.state = state
        self._answer = answer
        text = question.text if question is not None else ""
        super().__init__(f"{agent} (task {task_id}) asks: {text}")

    @property
    def text(self) -> str:
        """The question's text."""
        return self.question.text if self.question is not None else ""

    async def answer(self, reply: str | Message) -> DelegationResult:
        """Send ``reply`` to the same child task and follow it again.

        Returns:
            The child's ``DelegationResult`` once it ends.

        Raises:
            InputRequired: The child asks again.
            DelegationError: The child failed, was rejected or canceled.
        """
        return await self._answer(reply)
