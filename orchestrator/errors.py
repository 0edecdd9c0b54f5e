"""Errors of delegation: each carries where it began and which hops relayed it.

Hierarchy::

    DelegationError           a delegated task ended FAILED or REJECTED (or its hop broke)
    ├── DepthLimitError       a hop would exceed the maximum depth (refused before any work)
    └── CycleError            a hop path would revisit an agent (refused before any work)

A failure at hop C seen at hop A says: the origin agent and task (C), the origin's state and
message, and the relay path — the agents the error passed through on its way up, nearest
first. When a parent re-raises a child's error, :meth:`DelegationError.relayed_by` returns a
copy with the parent appended to the relay path.
"""

from __future__ import annotations

__all__ = ("CycleError", "DelegationError", "DepthLimitError")


class DelegationError(Exception):
    """A delegated hop failed.

    Attributes:
        origin_agent: The agent whose task failed first.
        origin_task_id: That task's id ("" when the hop failed before a task existed).
        state: The origin task's final state name (e.g. ``TASK_STATE_FAILED``), or "".
        reason: The origin's status message text (or the transport error).
        relay: Agents that relayed the error upwards, nearest to the origin first.
        path: The hop path (root first) where it applies.
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

    def _describe(self) -> str:
        where = f" at {self.origin_agent}" if self.origin_agent else ""
        task = f" (task {self.origin_task_id})" if self.origin_task_id else ""
        via = f"; relayed by {' <- '.join(self.relay)}" if self.relay else ""
        return f"{self.reason}{where}{task}{via}"

    def relayed_by(self, agent: str) -> DelegationError:
        """A copy of this error with ``agent`` appended to the relay path."""
        return type(self)(
            self.reason,
            origin_agent=self.origin_agent,
            origin_task_id=self.origin_task_id,
            state=self.state,
            relay=(*self.relay, agent),
            path=self.path,
        )

    def to_metadata(self) -> dict[str, object]:
        """A JSON object describing the error, for task metadata."""
        return {
            "reason": self.reason,
            "originAgent": self.origin_agent,
            "originTaskId": self.origin_task_id,
            "state": self.state,
            "relay": list(self.relay),
        }


class DepthLimitError(DelegationError):
    """The hop would be deeper than the configured maximum; nothing was started."""


class CycleError(DelegationError):
    """The hop path would visit an agent twice; nothing was started."""
