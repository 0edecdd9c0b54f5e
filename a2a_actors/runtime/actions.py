"""Every change to one task, made in its actor's own task (a layer of every TaskActor).

Theory of operation
-------------------
:class:`TaskActions` adds to :class:`~a2a_actors.runtime.publication.Publication` the
operations that change a task, each applied to the task's ``TaskMachine`` (which raises,
changing nothing, if it is illegal) and then stored and published:

* those the agent asks for through its :class:`~a2a_actors.runtime.context.TaskContext`:
  :meth:`TaskActions.emit_status`, :meth:`TaskActions.emit_artifact`,
  :meth:`TaskActions.reply`, :meth:`TaskActions.update_metadata`. Agent actions end with a
  checkpoint, so even an agent that only emits in a loop can be cancelled, and
  subscribers get a chance to keep up;
* those the runtime decides when the handler is over: its return value completes the
  task (:func:`_interpret` says how), its exception fails it, a cancel cancels it; and a
  final state forced at shutdown or after an internal error (``_terminate``).

A provisional task is committed (its Task snapshot queued as the first event) right
before its first change. A ``reply`` while it is still provisional commits nothing: the
message goes to the requester and the task is discarded.

Only the actor's own task calls these; the attributes declared here are slots of
:class:`~a2a_actors.runtime.actor.TaskActor`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import anyio.lowlevel
import msgspec

from ..protocol.errors import A2AError, InvalidAgentResponseError
from ..protocol.models import Artifact, Message, StreamResponse, TaskState, utc_now
from .context import agent_message
from .publication import SETTLED_STATES, Publication

if TYPE_CHECKING:
    from .agent import Agent

__all__ = ("TaskActions",)

logger = logging.getLogger("a2a_actors.runtime")

_S = TaskState


class TaskActions(Publication):
    """The changes to one task (see the module docstring); a base of :class:`TaskActor`."""

    __slots__ = ()

    agent: Agent
    _cancel_metadata: dict[str, Any] | None

    # -- changes requested by the handler (the actor's own task) ---------------------

    async def emit_status(
        self,
        state: TaskState,
        *,
        message: Message | None = None,
        metadata: dict[str, Any] | None = None,
        checkpoint: bool = True,
    ) -> None:
        """Move the task to ``state``, then store and publish it.

        With ``checkpoint`` (the default for agent actions) this ends with a checkpoint,
        so an agent emitting in a loop can be cancelled and lets subscribers keep up; the
        change is recorded even if the checkpoint then raises the cancellation.

        Raises:
            IllegalTransitionError: The machine refused; nothing changed.
        """
        machine = self.machine
        pre = None if self._committed else (machine.version, machine.snapshot())
        event = machine.set_status(state, timestamp=utc_now(), message=message, metadata=metadata)
        if pre is not None:
            self._stage_commit(*pre)
        final = state in SETTLED_STATES
        self._pending.append((machine.version, StreamResponse(status_update=event), final))
        await self._flush()
        if checkpoint:
            await anyio.lowlevel.checkpoint()

    async def emit_artifact(
        self,
        artifact: Artifact,
        *,
        append: bool = False,
        last_chunk: bool = False,
        metadata: dict[str, Any] | None = None,
        checkpoint: bool = True,
    ) -> None:
        """Add an artifact (or a chunk of one), then store and publish it.

        Ends with a checkpoint unless ``checkpoint`` is false (see :meth:`emit_status`).

        Raises:
            IllegalTransitionError: The machine refused; nothing changed.
        """
        machine = self.machine
        pre = None if self._committed else (machine.version, machine.snapshot())
        event = machine.add_artifact(
            artifact, append=append, last_chunk=last_chunk, metadata=metadata
        )
        if pre is not None:
            self._stage_commit(*pre)
        self._pending.append((machine.version, StreamResponse(artifact_update=event), False))
        await self._flush()
        if checkpoint:
            await anyio.lowlevel.checkpoint()

    async def reply(self, message: Message) -> None:
        """Answer with a Message: discards a provisional task, else completes the task.

        Raises:
            IllegalTransitionError: The task already ended; nothing changed.
        """
        if self._committed:
            await self.emit_status(_S.COMPLETED, message=message)
            return
        machine = self.machine
        machine.set_status(_S.COMPLETED, timestamp=utc_now())  # refuses a second answer
        if message.context_id != machine.context_id or message.task_id:
            message = msgspec.structs.replace(message, context_id=machine.context_id, task_id="")
        self._reply = message
        if self._fanout is not None:
            self._fanout.publish(
                machine.version,
                StreamResponse(message=message),
                final=True,
                snapshot=machine.snapshot(),
                snapshot_version=machine.version,
            )
        self._end()

    async def update_metadata(self, values: Mapping[str, Any]) -> None:
        """Merge ``values`` into the task metadata, then store it (no event is sent)."""
        self.machine.update_metadata(dict(values))
        if self._committed:
            await self._flush()
        await anyio.lowlevel.checkpoint()

    # -- changes decided by the runtime when the handler is over ----------------------

    async def _finish_canceled(self) -> None:
        if not self.machine.terminal:
            self._terminate(_S.CANCELED, None)
        await self._flush_pending()

    async def _finish_error(self, error: Exception) -> None:
        if self.machine.terminal:
            logger.warning(
                "task %s: agent raised after the task ended; ignored",
                self.task_id,
                exc_info=error,
            )
            await self._flush_pending()
            return
        logger.error("task %s: agent %r failed", self.task_id, self.agent.name, exc_info=error)
        self._terminate(_S.FAILED, str(error) or type(error).__name__)
        await self._flush()

    async def _finish_result(self, result: object) -> None:
        try:
            message, artifacts = _interpret(result)
            for artifact in artifacts:
                await self.emit_artifact(artifact, checkpoint=False)
            await self.emit_status(_S.COMPLETED, message=message, checkpoint=False)
        except A2AError as exc:
            await self._finish_error(exc)

    def _terminate(self, state: TaskState, text: str | None) -> None:
        """Queue a final state (CANCELED/FAILED) decided by the runtime, not the agent."""
        machine = self.machine
        if not self._committed:
            self._stage_commit(machine.version, machine.snapshot())
        message = agent_message(text) if text else None
        if state is _S.CANCELED:
            event = machine.cancel(timestamp=utc_now(), message=message)
            if self._cancel_metadata:
                event = msgspec.structs.replace(event, metadata=self._cancel_metadata)
        else:
            event = machine.set_status(state, timestamp=utc_now(), message=message)
        self._pending.append((machine.version, StreamResponse(status_update=event), True))


def _interpret(result: object) -> tuple[Message | None, tuple[Artifact, ...]]:
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
