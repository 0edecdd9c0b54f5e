"""Official a2a-sdk ``AgentExecutor``\\ s served as a2a-actors agents, unchanged.

``as_agent(executor)`` runs an ``a2a.server.agent_execution.AgentExecutor`` (a2a-sdk 1.x)
as an :class:`a2a_actors.Agent`. Needs the ``a2a-sdk`` extra. The executor reads the same
``RequestContext`` and writes the same events as under the SDK's own server; they become
the task's changes through :class:`~._sdk_queue.TaskQueue` (its docstring has the event
table). What a run sees:

==================================  ======================================================
``RequestContext``                  the task
==================================  ======================================================
``message``, ``task_id``,           the client message (protobuf), the task's ids (a new
``context_id``                      task's are a2a-actors', made before ``execute()``)
``current_task``                    None for a new task; for a follow-up, the task as the
                                    SDK shows it: still INPUT_REQUIRED / AUTH_REQUIRED with
                                    the question as status message
``call_context``                    ``user``: the caller a2a-actors authenticated
                                    (``is_authenticated``, ``user_name`` = the principal of
                                    the API key, bearer token or JWT), else unauthenticated;
                                    ``tenant``, ``requested_extensions``, ``state["headers"]``
``metadata``                        the request's metadata
``related_tasks``                   empty (the SDK server's default)
==================================  ======================================================

The lifecycle, as the SDK's ``AgentExecutor`` contract says:

* an interruption (INPUT_REQUIRED, AUTH_REQUIRED) then a return from ``execute()``: the
  task waits (``ctx.ask`` / ``ctx.require_auth``); the client's next message on it runs
  ``execute()`` again, with that message and the current task, on the same task (a
  durable store keeps the waiting state, so this also works after a server restart);
* a CancelTask interrupts ``execute()`` (its ``finally`` runs), then calls the executor's
  ``cancel()`` (shielded, at most :data:`CANCEL_TIMEOUT` s) with the task as
  ``current_task``; the task ends CANCELED. A cancel of a task waiting for input calls
  ``cancel()`` too; a server shutdown or a task timeout interrupts ``execute()`` without
  calling ``cancel()`` (a waiting task kept stored with ``keep_interrupted`` is answered
  after the restart);
* ``execute()`` returning without a final state completes the task (a handler's return
  completes its task, in a2a-actors; the SDK would leave it WORKING);
* ``execute()`` raising fails the task: FAILED, ``"a2a-sdk agent failed: <ExceptionType>:
  <text>"`` (where the SDK's server answers a blocking send with -32603);
* an event the protocol forbids (a change after the final state, an event of another
  task) raises, inside ``enqueue_event``, what any a2a-actors agent's action would
  (``IllegalTransitionError``, ``InvalidAgentResponseError``); the task is left as it was.

Executors run on asyncio, as under the SDK: served on trio, a task fails saying so.

Built as a plain :class:`~a2a_actors.runtime.Agent`, not with ``framework_agent``: an
executor writes protocol events itself, so :class:`~._turn.Turn` (answer chunks, tool
updates, conversation records) has nothing to add, and ``orchestrated`` would start every
task before the executor runs, which turns an executor that answers with a lone
``Message`` into a completed task. ``orchestrated(as_agent(executor))`` adds hop records
when wanted.

``card``, the SDK's protobuf ``AgentCard``, gives the served card its name, description,
version, skills, extensions and media types; the interfaces, URLs, streaming and push
capabilities and security schemes are the a2a-actors server's (provider and documentation
links: ``ServerConfig``).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Final

from a2a_actors.frameworks._extras import require

require("a2a", extra="a2a-sdk", bridge="a2a_actors.frameworks.a2a_sdk")
require("a2a.server.agent_execution", extra="a2a-sdk", bridge="a2a_actors.frameworks.a2a_sdk")

import anyio  # noqa: E402
import sniffio  # noqa: E402
from a2a.auth.user import UnauthenticatedUser, User  # noqa: E402  (after the extra's check)
from a2a.server.agent_execution import AgentExecutor, RequestContext  # noqa: E402
from a2a.server.context import ServerCallContext  # noqa: E402
from a2a.types import a2a_pb2 as pb  # noqa: E402

from a2a_actors.frameworks._sdk_queue import TaskQueue, interrupted  # noqa: E402
from a2a_actors.protocol._card import AgentExtension, AgentSkill  # noqa: E402
from a2a_actors.protocol._models import TaskState  # noqa: E402
from a2a_actors.protocol._protobuf import from_proto, to_proto  # noqa: E402
from a2a_actors.protocol._requests import SendMessageRequest  # noqa: E402
from a2a_actors.protocol._state import TERMINAL_STATES  # noqa: E402
from a2a_actors.runtime import Agent, TaskContext  # noqa: E402

__all__ = ("CANCEL_TIMEOUT", "as_agent")

FRAMEWORK: Final = "a2a-sdk"
#: Seconds the executor's ``cancel()`` may take before the task ends CANCELED anyway.
CANCEL_TIMEOUT: Final = 10.0
#: Key of this bridge's private task data: ``{"waiting": <the interrupted state>}``.
_PRIVATE: Final = "a2a-sdk"
_UNAUTHENTICATED: Final = UnauthenticatedUser()


def as_agent(
    executor: AgentExecutor,
    *,
    card: pb.AgentCard | None = None,
    name: str | None = None,
    description: str | None = None,
    skills: Sequence[AgentSkill] = (),
) -> Agent:
    """Serve ``executor`` (an a2a-sdk ``AgentExecutor``) as an a2a-actors agent.

    Args:
        executor: The executor; it is run as it is, one ``execute()`` at a time per task.
        card: The SDK's ``AgentCard``: the served card takes its name, description,
            version, skills, extensions and default media types (see the module docstring).
        name: The card's name; defaults to the card's, else the executor's class name.
        description: The card's description; defaults to the card's, else the first line
            of the executor class's docstring.
        skills: The card's skills; default to the card's.
    """
    if not isinstance(executor, AgentExecutor):
        raise TypeError(f"expected an a2a-sdk AgentExecutor, got {type(executor).__name__}")
    doc = (inspect.getdoc(type(executor)) or "").splitlines()
    declared = card if card is not None else pb.AgentCard()
    return Agent(
        handler=_Executing(executor),
        name=name or declared.name or type(executor).__name__,
        description=description or declared.description or (doc[0] if doc else ""),
        version=declared.version or "1.0.0",
        skills=tuple(skills) or tuple(from_proto(s, AgentSkill) for s in declared.skills),
        extensions=tuple(from_proto(e, AgentExtension) for e in declared.capabilities.extensions),
        input_modes=tuple(declared.default_input_modes) or ("text/plain",),
        output_modes=tuple(declared.default_output_modes) or ("text/plain",),
    )


class _Caller(User):
    """The principal a2a-actors authenticated for the request (``ctx.caller``)."""

    def __init__(self, principal: str) -> None:
        self._principal = principal

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def user_name(self) -> str:
        return self._principal


def _call_context(ctx: TaskContext) -> ServerCallContext:
    caller = ctx.caller
    return ServerCallContext(
        user=_UNAUTHENTICATED if caller is None else _Caller(caller),
        tenant=ctx.tenant,
        requested_extensions=set(ctx.extensions),
        state={"headers": dict(ctx.headers)},
    )


def _request(ctx: TaskContext) -> pb.SendMessageRequest:
    request = SendMessageRequest(
        message=ctx.message, metadata=ctx.request_metadata, tenant=ctx.tenant
    )
    proto = to_proto(request)
    assert isinstance(proto, pb.SendMessageRequest)
    return proto


def _over(ctx: TaskContext) -> bool:
    return ctx.task.status.state in TERMINAL_STATES


class _Executing:
    """The handler: ``execute()`` once per client message of the task (see the module
    docstring)."""

    __slots__ = ("executor",)

    def __init__(self, executor: AgentExecutor) -> None:
        self.executor = executor

    async def __call__(self, ctx: TaskContext) -> None:
        if sniffio.current_async_library() != "asyncio":
            raise RuntimeError(f"{FRAMEWORK} agents run on asyncio: serve with --backend asyncio")
        queue = TaskQueue(ctx, exists=ctx.resumed)
        current = None
        if ctx.resumed:  # restored after a restart, while it waited: the reply starts a run
            state = ctx.private.get(_PRIVATE, {}).get("waiting", TaskState.INPUT_REQUIRED.value)
            current = interrupted(ctx.task, TaskState(state), ctx.message)
        try:
            while True:
                context = RequestContext(
                    _call_context(ctx),
                    request=_request(ctx),
                    task_id=ctx.task_id,
                    context_id=ctx.context_id,
                    task=current,
                )
                queue.begin()
                try:
                    await self.executor.execute(context, queue)
                except Exception as exc:
                    queue.end()
                    if _over(ctx):
                        raise  # the task ended as the executor said: the runtime logs this
                    await ctx.fail(f"{FRAMEWORK} agent failed: {type(exc).__name__}: {exc}")
                    return
                waiting = queue.end()
                if waiting is None or _over(ctx):
                    return  # ended, or to be completed by the runtime
                state, question = waiting
                await ctx.update_private({_PRIVATE: {"waiting": state.value}})
                if state is TaskState.AUTH_REQUIRED:
                    reply = await ctx.require_auth(question)
                else:
                    reply = await ctx.ask(question)
                current = interrupted(ctx.task, state, reply)
        except anyio.get_cancelled_exc_class():
            # a client's cancel only (not a shutdown); an ended task is not cancelled
            if ctx.cancel_requested and not (queue.self_canceled or _over(ctx)):
                with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_TIMEOUT):
                    await queue.cancel(self.executor, self._cancel_context(ctx))
            raise

    @staticmethod
    def _cancel_context(ctx: TaskContext) -> RequestContext:
        task = to_proto(ctx.task)
        assert isinstance(task, pb.Task)
        return RequestContext(
            _call_context(ctx), task_id=ctx.task_id, context_id=ctx.context_id, task=task
        )
