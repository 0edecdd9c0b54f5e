"""The owner's side of the inbox, over the node's own :class:`~a2a_actors.runtime.Supervisor`.

:class:`SupervisorInbox` answers the commands other nodes send to this node's inbox
(:mod:`~a2a_actors.cluster._inbox`) with the supervisor's own public methods, so a cancel or
an input from another node does exactly what the same request does locally:

* ``cancel`` is :meth:`Supervisor.cancel_task`: the handler is interrupted at its next
  await, and the reply is the task once CANCELED (or the final state it reached first);
* ``input`` is :meth:`Supervisor.send_message` with ``returnImmediately``: the message is
  delivered to the task's mailbox (its parked ``ctx.ask()`` gets it) and the reply is the
  task as soon as it is WORKING again — the requesting node follows the rest through the
  event log.

Ownership by caller is checked by the supervisor, as locally: another principal's task is
TaskNotFoundError.
"""

from __future__ import annotations

import msgspec

from a2a_actors.cluster._inbox import CancelCommand, InputCommand
from a2a_actors.protocol._models import Message, Task
from a2a_actors.protocol._requests import SendMessageConfiguration
from a2a_actors.runtime._supervisor import Supervisor

__all__ = ("SupervisorInbox",)


class SupervisorInbox:
    """An :class:`~a2a_actors.cluster._inbox.InboxHandler` over a local supervisor."""

    def __init__(self, supervisor: Supervisor) -> None:
        self._supervisor = supervisor

    async def cancel(self, command: CancelCommand) -> Task:
        """Cancel the task here; the task once final.

        Raises:
            TaskNotFoundError: Unknown here, or not the caller's.
            TaskNotCancelableError: Already final.
        """
        return await self._supervisor.cancel_task(
            command.task_id, caller=command.caller, metadata=command.metadata
        )

    async def give_input(self, command: InputCommand) -> Task | Message:
        """Deliver the message to its task here; the task once it took it.

        Raises:
            TaskNotFoundError: Unknown here, or not the caller's.
            UnsupportedOperationError: The task is not waiting for input.
            InvalidParamsError: The message does not fit the task.
        """
        request = command.request
        config = request.configuration or SendMessageConfiguration()
        immediate = msgspec.structs.replace(config, return_immediately=True)
        return await self._supervisor.send_message(
            msgspec.structs.replace(request, configuration=immediate),
            caller=command.caller,
            extensions=frozenset(command.extensions),
        )
