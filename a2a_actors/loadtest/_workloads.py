"""The workloads: what one operation is, as a short conversation of HTTP exchanges.

An operation is a :class:`Flow`: :meth:`Flow.begin` gives its first request; each answer goes to
:meth:`Flow.answer`, which returns the next request to send on the same connection, ``None`` when
the operation succeeded, or a :class:`~a2a_actors.loadtest._replies.Failure`. The flow holds the
operation's state; its :class:`Workload` the script (two functions).

``send``
    a blocking SendMessage; succeeds on TASK_STATE_COMPLETED or a Message.
``stream``
    a SendStreamingMessage read to its end; succeeds when the last state is COMPLETED (or
    the stream is one Message). Also measures the time to the first event.
``submit-poll``
    SendMessage with ``returnImmediately``, then GetTask until the task is final; succeeds on
    COMPLETED.
``multi-turn``
    a SendMessage that must end in TASK_STATE_INPUT_REQUIRED, then the same text again as
    the answer on that task (again while input is required, up to 8 turns); succeeds on
    COMPLETED.
``cancel``
    SendMessage with ``returnImmediately`` (the task must still be running), then
    CancelTask; succeeds on TASK_STATE_CANCELED. Measures the cancel's own latency.

Any other state is a ``wrong-state`` error whose sample names the state and the step.
"""

from __future__ import annotations

from collections.abc import Callable

from a2a_actors.loadtest._http1 import Response
from a2a_actors.loadtest._replies import (
    MESSAGE,
    Failure,
    Reply,
    check_send,
    check_stream,
    check_task,
)
from a2a_actors.loadtest._requests import RequestBuilder
from a2a_actors.protocol._models import TaskState
from a2a_actors.protocol._state import TERMINAL_STATES

__all__ = ("WORKLOADS", "Flow", "Verdict", "Workload")

#: What :meth:`Flow.answer` decides: the next request, ``None`` (success), or a failure.
Verdict = bytes | Failure | None

COMPLETED = TaskState.COMPLETED.value
CANCELED = TaskState.CANCELED.value
INPUT_REQUIRED = TaskState.INPUT_REQUIRED.value
_TERMINAL = frozenset(state.value for state in TERMINAL_STATES)
_MAX_TURNS = 8


def _wrong(step: str, got: str, wanted: str) -> Failure:
    return Failure("wrong-state", f"{step}: got {got or 'no state'}, expected {wanted}")


class Flow:
    """One operation: its position in the workload's script, and what it measured.

    ``step`` counts the answers seen so far; ``secondary`` is the workload's second metric
    in seconds (time to first event, a cancel's latency), once measured.
    """

    __slots__ = ("_workload", "binding", "builder", "secondary", "seq", "step")

    def __init__(self, workload: Workload, builder: RequestBuilder, binding: str, seq: int) -> None:
        self._workload = workload
        self.builder = builder
        self.binding = binding
        self.seq = seq
        self.step = 0
        self.secondary: float | None = None

    def begin(self) -> bytes:
        """The first request."""
        return self._workload.begin(self)

    def answer(self, response: Response, started: float, sent: float, now: float) -> Verdict:
        """Check ``response`` (its request went out at ``sent``; the operation started at
        ``started``): the next request, ``None`` when done, or why the operation failed."""
        verdict = self._workload.answer(self, response, started, sent, now)
        self.step += 1
        return verdict

    def send_reply(self, response: Response) -> Reply | Failure:
        """``response`` checked as a SendMessage answer."""
        return check_send(self.binding, response.status, response.body)

    def task_reply(self, response: Response) -> Reply | Failure:
        """``response`` checked as a GetTask or CancelTask answer."""
        return check_task(self.binding, response.status, response.body)


#: A workload's first request, and its decision on each answer.
Begin = Callable[[Flow], bytes]
Answer = Callable[[Flow, Response, float, float, float], Verdict]


def _send_answer(
    flow: Flow, response: Response, started: float, sent: float, now: float
) -> Verdict:
    reply = flow.send_reply(response)
    if isinstance(reply, Failure):
        return reply
    if reply.state in (COMPLETED, MESSAGE):
        return None
    return _wrong("SendMessage", reply.state, COMPLETED)


def _stream_answer(
    flow: Flow, response: Response, started: float, sent: float, now: float
) -> Verdict:
    if response.first_event_at:
        flow.secondary = response.first_event_at - started
    reply = check_stream(flow.binding, response.status, response.event_stream, response.body)
    if isinstance(reply, Failure):
        return reply
    if reply.state in (COMPLETED, MESSAGE):
        return None
    return _wrong("the stream's last event", reply.state, COMPLETED)


_RUNNING = frozenset({"TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"})


def _poll_answer(
    flow: Flow, response: Response, started: float, sent: float, now: float
) -> Verdict:
    first = flow.step == 0
    reply = flow.send_reply(response) if first else flow.task_reply(response)
    if isinstance(reply, Failure):
        return reply
    if reply.state in (COMPLETED, MESSAGE):
        return None
    if reply.state not in _RUNNING:
        return _wrong("SendMessage" if first else "GetTask", reply.state, COMPLETED)
    return flow.builder.get_task(reply.task_id)


def _turn_answer(
    flow: Flow, response: Response, started: float, sent: float, now: float
) -> Verdict:
    turn = flow.step
    reply = flow.send_reply(response)
    if isinstance(reply, Failure):
        return reply
    if reply.state == INPUT_REQUIRED and turn < _MAX_TURNS:
        return flow.builder.answer(flow.seq, turn + 1, reply.task_id)
    if turn == 0:
        return _wrong("the first message", reply.state, INPUT_REQUIRED)
    if reply.state == COMPLETED:
        return None
    return _wrong(f"answer {turn}", reply.state, COMPLETED)


def _cancel_answer(
    flow: Flow, response: Response, started: float, sent: float, now: float
) -> Verdict:
    if flow.step == 0:
        reply = flow.send_reply(response)
        if isinstance(reply, Failure):
            return reply
        if reply.state == MESSAGE or reply.state in _TERMINAL:
            return Failure(
                "wrong-state",
                f"SendMessage: the task was {reply.state} before the cancel; the cancel "
                "workload needs tasks that keep running (e.g. examples.sleeper with "
                "--text forever)",
            )
        return flow.builder.cancel_task(reply.task_id)
    flow.secondary = now - sent
    reply = flow.task_reply(response)
    if isinstance(reply, Failure):
        return reply
    return None if reply.state == CANCELED else _wrong("CancelTask", reply.state, CANCELED)


class Workload:
    """A workload by name: its script (``begin``, ``answer``), and the flows of its operations.

    ``secondary`` names the second metric its flows measure (``first_event``, ``cancel``),
    and ``headline`` the metric the table's percentiles show.
    """

    def __init__(
        self, name: str, begin: Begin, answer: Answer, secondary: str | None, headline: str
    ) -> None:
        self.name = name
        self.begin = begin
        self.answer = answer
        self.secondary = secondary
        self.headline = headline

    def flow(self, builder: RequestBuilder, binding: str, seq: int) -> Flow:
        """The flow of operation number ``seq``."""
        return Flow(self, builder, binding, seq)


WORKLOADS: dict[str, Workload] = {
    "send": Workload("send", lambda f: f.builder.send(f.seq), _send_answer, None, "latency"),
    "stream": Workload(
        "stream", lambda f: f.builder.stream(f.seq), _stream_answer, "first_event", "latency"
    ),
    "submit-poll": Workload(
        "submit-poll", lambda f: f.builder.submit(f.seq), _poll_answer, None, "latency"
    ),
    "multi-turn": Workload(
        "multi-turn", lambda f: f.builder.send(f.seq), _turn_answer, None, "latency"
    ),
    "cancel": Workload(
        "cancel", lambda f: f.builder.submit(f.seq), _cancel_answer, "cancel", "cancel"
    ),
}
