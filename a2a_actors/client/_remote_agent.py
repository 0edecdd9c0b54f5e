"""RemoteAgent: a remote A2A agent used like a local one, with sessions and a tool adapter.

Theory of operation
-------------------
A *session* is a conversation: it maps to one A2A ``contextId`` (the agent's, learned from
its first reply) and remembers the task to continue. While a task is interrupted
(INPUT_REQUIRED, AUTH_REQUIRED) the next call in the session is sent with that ``taskId``, so
the answer continues the same task; once the task is terminal, the next call starts a new task
in the same context. Calls in one session run one at a time, in the order they asked
(``anyio.Lock`` is fair, FIFO); different sessions run concurrently.

A call streams (SendStreamingMessage) when the card says the agent streams, so the task id is
known from the first event and :meth:`RemoteAgent.interrupt` can cancel the remote task while
the call is still waiting; otherwise it is a blocking SendMessage.

:meth:`RemoteAgent.as_tool` makes a call in a session; the tool's shape (name rules, JSON Schema,
:class:`~a2a_actors.client._agent_tool.AgentTool`) is :mod:`a2a_actors.client._agent_tool`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import TracebackType
from typing import Any

import anyio
from msgspec.structs import replace

from a2a_actors.client._agent_tool import AgentTool as AgentTool, agent_tool, tool_name
from a2a_actors.client._call_arguments import text_message
from a2a_actors.client._call_span import ClientSpan
from a2a_actors.client._client import A2AClient
from a2a_actors.client._stream import EventStream
from a2a_actors.protocol._models import Message, Role, StreamResponse, Task, TaskState
from a2a_actors.protocol._state import INTERRUPTED_STATES
from a2a_actors.runtime._tracing import ATTRIBUTES

__all__ = ("AgentTool", "CallResult", "RemoteAgent", "RemoteStream", "Session", "StreamChunk")


@dataclass(frozen=True, slots=True)
class CallResult:
    """What one call produced: a Task, or a direct Message reply.

    Attributes:
        task: The task as it ended the call (terminal or interrupted), or ``None``.
        message: The agent's Message reply; for a task, its status message (the question
            of an INPUT_REQUIRED task, a failure reason …), if any.
    """

    task: Task | None
    message: Message | None

    @property
    def state(self) -> TaskState | None:
        """The task's state, or ``None`` for a Message reply."""
        return self.task.status.state if self.task is not None else None

    @property
    def needs_input(self) -> bool:
        """True when the task waits for the caller (INPUT_REQUIRED or AUTH_REQUIRED)."""
        return self.state in INTERRUPTED_STATES

    @property
    def text(self) -> str:
        """The answer as text.

        A Message reply's text; for an interrupted task its status message (the question);
        otherwise the text of the task's artifacts (one line per artifact), falling back to
        the status message, then to the last agent message in the history.
        """
        task = self.task
        if task is None:
            return self.message.text if self.message is not None else ""
        status_text = task.status.message.text if task.status.message is not None else ""
        if self.needs_input and status_text:
            return status_text
        texts = [t for a in task.artifacts if (t := "".join(p.text or "" for p in a.parts))]
        if texts:
            return "\n".join(texts)
        if status_text:
            return status_text
        agent = [m for m in task.history if m.role is Role.AGENT]
        return agent[-1].text if agent else ""

    @classmethod
    def of(cls, reply: Task | Message) -> CallResult:
        """The result for a SendMessage reply."""
        if isinstance(reply, Message):
            return cls(task=None, message=reply)
        return cls(task=reply, message=reply.status.message)


@dataclass(frozen=True, slots=True)
class StreamChunk:
    """One event of a streamed call and the new text it carries (``""`` when none).

    ``text`` is an artifact chunk's text or a Message reply's text; status changes carry
    none (read them from ``event``).
    """

    text: str
    event: StreamResponse


class Session:
    """One conversation with the remote agent (see the module docstring).

    Attributes:
        key: The session's name.
        context_id: The A2A contextId, ``""`` until the agent assigned one.
        task_id: The task of the running call, or the interrupted task the next call
            continues; ``""`` otherwise.
    """

    def __init__(self, key: str) -> None:
        self.key = key
        self.context_id = ""
        self.task_id = ""
        self.lock = anyio.Lock()
        self._task_known = anyio.Event()

    def _learn(self, task: Task | None, message: Message | None) -> None:
        if task is not None:
            self.context_id = self.context_id or task.context_id
            if not self.task_id:
                self.task_id = task.id
                self._task_known.set()
        elif message is not None:
            self.context_id = self.context_id or message.context_id

    def _settle(self, state: TaskState | None) -> None:
        if state not in INTERRUPTED_STATES:
            self.task_id = ""
            if self._task_known.is_set():  # waiters only ever block on an unset event
                self._task_known = anyio.Event()

    async def wait_task(self) -> str:
        """Wait until the session has a task (a call's task is known) and return its id."""
        while not self.task_id:
            await self._task_known.wait()
        return self.task_id


class RemoteStream:
    """A streamed call: ``async with remote.stream(…) as chunks: async for c in chunks``.

    Entering waits for the session's turn and sends the message; leaving closes the HTTP
    stream and frees the session. :attr:`result` is valid after the last chunk. With
    tracing on, the call is a CLIENT span (``a2a.call <agent>``) from sending to leaving,
    and the request carries its trace context (docs/observability.md).
    """

    def __init__(self, agent: RemoteAgent, message: str | Message, session: Session) -> None:
        self._agent = agent
        self._message = message
        self._session = session
        self._events: EventStream | None = None
        self._reply: Task | Message | None = None
        self._replayed = False
        self._locked = False
        self._span: ClientSpan | None = None

    async def __aenter__(self) -> RemoteStream:
        await self._session.lock.acquire()
        self._locked = True
        agent = self._agent
        span = self._span = ClientSpan(f"a2a.call {agent.name}", {ATTRIBUTES["target"]: agent.name})
        try:
            message = _session_message(self._message, self._session)
            client = agent.client
            with span.sending():
                if agent.streaming:
                    events = client.stream_message(message)
                    await events.__aenter__()
                    self._events = events
                else:
                    self._reply = await client.send_message(message)
                    reply = self._reply
                    self._session._learn(
                        reply if isinstance(reply, Task) else None,
                        reply if isinstance(reply, Message) else None,
                    )
        except BaseException as exc:
            span.end(type(exc).__name__)
            self._release()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if self._events is not None:
                await self._events.aclose()
        finally:
            result = self.result
            # A call that failed before learning anything leaves the session as it was,
            # so an interrupted task can still be answered by a retry.
            if exc is None or result.task is not None or result.message is not None:
                self._session._settle(result.state)
            self._release()
            self._end_span(result, exc)

    def _end_span(self, result: CallResult, exc: BaseException | None) -> None:
        span = self._span
        if span is None:
            return
        task = result.task
        if task is not None:
            span.note(
                {
                    ATTRIBUTES["task_id"]: task.id,
                    ATTRIBUTES["context_id"]: task.context_id,
                    ATTRIBUTES["state"]: task.status.state.value,
                }
            )
        failed = task is not None and task.status.state is TaskState.FAILED
        span.end(type(exc).__name__ if exc is not None else "task failed" if failed else None)

    def _release(self) -> None:
        if self._locked:
            self._locked = False
            self._session.lock.release()

    def __aiter__(self) -> RemoteStream:
        return self

    async def __anext__(self) -> StreamChunk:
        if self._events is None:
            if self._reply is None or self._replayed:
                raise StopAsyncIteration
            self._replayed = True
            return StreamChunk(CallResult.of(self._reply).text, StreamResponse.of(self._reply))
        if self._events.done:  # the task ended or asks for input: the call is over
            raise StopAsyncIteration
        event = await self._events.__anext__()
        self._session._learn(self._events.task, self._events.message)
        return StreamChunk(_delta(event), event)

    @property
    def result(self) -> CallResult:
        """The call's outcome so far (final once iteration has ended)."""
        if self._events is not None:
            task = self._events.task
            message = self._events.message
            if message is None and task is not None:
                message = task.status.message
            return CallResult(task=task, message=message)
        if self._reply is not None:
            return CallResult.of(self._reply)
        return CallResult(task=None, message=None)


def _delta(event: StreamResponse) -> str:
    if event.artifact_update is not None:
        return "".join(p.text or "" for p in event.artifact_update.artifact.parts)
    if event.message is not None:
        return event.message.text
    return ""


class RemoteAgent:
    """A remote A2A agent behind an :class:`~a2a_actors.client._client.A2AClient`.

    Args:
        client: The client to call through (closed by :meth:`aclose` only if ``owns_client``).
        name: Display/tool name; defaults to the card's name.
        description: Defaults to the card's description.
        streaming: Stream calls; by default when the card declares ``streaming``.
        owns_client: Close ``client`` in :meth:`aclose`.
    """

    def __init__(
        self,
        client: A2AClient,
        *,
        name: str | None = None,
        description: str | None = None,
        streaming: bool | None = None,
        owns_client: bool = False,
    ) -> None:
        card = client.card
        self.client = client
        self.name = name or (card.name if card is not None else "remote_agent")
        self.description = description or (card.description if card is not None else "")
        if streaming is None:
            streaming = bool(card is not None and card.capabilities.streaming)
        self.streaming = streaming
        self._owns_client = owns_client
        self._sessions: dict[str, Session] = {}
        self._anonymous = 0

    @classmethod
    async def connect(cls, url: str, **client_options: Any) -> RemoteAgent:
        """Discover the agent at ``url`` (``A2AClient.connect`` options) and own the client."""
        return cls(await A2AClient.connect(url, **client_options), owns_client=True)

    async def aclose(self) -> None:
        """Close the client if this agent owns it."""
        if self._owns_client:
            await self.client.aclose()

    async def __aenter__(self) -> RemoteAgent:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def session(self, key: str) -> Session:
        """The session named ``key`` (created on first use)."""
        found = self._sessions.get(key)
        if found is None:
            found = self._sessions[key] = Session(key)
        return found

    def _resolve(self, session: str | Session | None) -> Session:
        if isinstance(session, Session):
            return session
        if session is None:
            self._anonymous += 1
            return Session(f"<call {self._anonymous}>")
        return self.session(session)

    def stream(
        self, text_or_message: str | Message, *, session: str | Session | None = None
    ) -> RemoteStream:
        """Call the agent and stream the result (see :class:`RemoteStream`).

        ``session=None`` makes a one-off session (no continuity).
        """
        return RemoteStream(self, text_or_message, self._resolve(session))

    async def call(
        self, text_or_message: str | Message, *, session: str | Session | None = None
    ) -> CallResult:
        """Send one message in ``session`` and wait for the task to end or ask for input.

        Returns:
            The result; ``result.needs_input`` says the next call in the session answers.

        Raises:
            A2AError: As ``A2AClient.send_message`` / ``stream_message`` raise.
        """
        async with self.stream(text_or_message, session=session) as chunks:
            async for _ in chunks:
                pass
        return chunks.result

    async def interrupt(self, session: str | Session) -> Task | None:
        """Cancel the session's remote task (running or interrupted).

        Returns:
            The canceled Task, or ``None`` when the session has no task.

        Raises:
            TaskNotCancelableError: The task ended meanwhile.
        """
        target = self._resolve(session)
        if not target.task_id:
            return None
        task = await self.client.cancel_task(target.task_id)
        if not target.lock.locked():
            target._settle(task.status.state)
        return task

    def as_tool(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        session: str | None = "tool",
    ) -> AgentTool:
        """This agent as an async function ``(message: str) -> str`` for an LLM tool loop.

        The function has ``name``, ``description`` and ``json_schema`` attributes
        (``{"name", "description", "parameters": <JSON Schema>}``). Calls share ``session``
        (``None``: a fresh session each call), so an agent's question can be answered by
        the next call. Errors propagate as :class:`~a2a_actors.protocol._errors.A2AError`.
        """
        tool = tool_name(name or self.name)
        key = None if session is None else f"{session}:{tool}"

        async def ask(message: str) -> str:
            return (await self.call(message, session=key)).text

        text = description or self.description or f"Ask the remote agent {self.name}."
        return agent_tool(ask, name=tool, description=text, agent_name=self.name)


def _session_message(text_or_message: str | Message, session: Session) -> Message:
    """The message to send in ``session``: its task and context, unless it names its own."""
    if isinstance(text_or_message, str):
        return text_message(text_or_message, task_id=session.task_id, context_id=session.context_id)
    return replace(
        text_or_message,
        task_id=text_or_message.task_id or session.task_id,
        context_id=text_or_message.context_id or session.context_id,
    )
