"""The workloads: what one operation is, as a short conversation of HTTP exchanges.

An operation is a :class:`Flow`: :meth:`Flow.begin` gives its first request; each answer
goes to :meth:`Flow.answer`, which returns the next request to send on the same
connection, ``None`` when the operation succeeded, or a :class:`~.replies.Failure`.

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

from .http1 import Response
from .replies import MESSAGE, Failure, Reply, check_send, check_stream, check_task
from .requests import RequestBuilder

__all__ = ("WORKLOADS", "Flow", "Verdict", "Workload")

#: What :meth:`Flow.answer` decides: the next request, ``None`` (success), or a failure.
Verdict = bytes | Failure | None

COMPLETED = "TASK_STATE_COMPLETED"
CANCELED = "TASK_STATE_CANCELED"
INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED"
_TERMINAL = frozenset({COMPLETED, CANCELED, "TASK_STATE_FAILED", "TASK_STATE_REJECTED"})
_MAX_TURNS = 8


def _wrong(step: str, got: str, wanted: str) -> Failure:
    return Failure("wrong-state", f"{step}: got {got or 'no state'}, expected {wanted}")


class Flow:
    """One operation (see the module docstring); ``secondary`` is its second metric in s."""

    __slots__ = ("_binding", "_builder", "_seq", "_step", "secondary")

    def __init__(self, builder: RequestBuilder, binding: str, seq: int) -> None:
        self._builder = builder
        self._binding = binding
        self._seq = seq
        self._step = 0
        self.secondary: float | None = None

    def begin(self) -> bytes:
        """The first request."""
        raise NotImplementedError

    def answer(
        self, response: Response, started: float, sent: float, now: float
    ) -> bytes | Failure | None:
        """Check ``response`` (its request went out at ``sent``; the operation started at
        ``started``): the next request, ``None`` when done, or why the operation failed."""
        raise NotImplementedError

    def _send_reply(self, response: Response) -> Reply | Failure:
        return check_send(self._binding, response.status, response.body)


class _Send(Flow):
    __slots__ = ()

    def begin(self) -> bytes:
        return self._builder.send(self._seq)

    def answer(
        self, response: Response, started: float, sent: float, now: float
    ) -> bytes | Failure | None:
        reply = self._send_reply(response)
        if isinstance(reply, Failure):
            return reply
        if reply.state in (COMPLETED, MESSAGE):
            return None
        return _wrong("SendMessage", reply.state, COMPLETED)


class _Stream(Flow):
    __slots__ = ()

    def begin(self) -> bytes:
        return self._builder.stream(self._seq)

    def answer(
        self, response: Response, started: float, sent: float, now: float
    ) -> bytes | Failure | None:
        if response.first_event_at:
            self.secondary = response.first_event_at - started
        reply = check_stream(self._binding, response.status, response.event_stream, response.body)
        if isinstance(reply, Failure):
            return reply
        if reply.state in (COMPLETED, MESSAGE):
            return None
        return _wrong("the stream's last event", reply.state, COMPLETED)


class _SubmitPoll(Flow):
    __slots__ = ()

    def begin(self) -> bytes:
        return self._builder.submit(self._seq)

    def answer(
        self, response: Response, started: float, sent: float, now: float
    ) -> bytes | Failure | None:
        first = self._step == 0
        self._step += 1
        if first:
            reply = self._send_reply(response)
        else:
            reply = check_task(self._binding, response.status, response.body)
        if isinstance(reply, Failure):
            return reply
        if reply.state in (COMPLETED, MESSAGE):
            return None
        if reply.state in _TERMINAL or reply.state not in _RUNNING:
            return _wrong("SendMessage" if first else "GetTask", reply.state, COMPLETED)
        return self._builder.get_task(reply.task_id)


_RUNNING = frozenset({"TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"})


class _MultiTurn(Flow):
    __slots__ = ()

    def begin(self) -> bytes:
        return self._builder.send(self._seq)

    def answer(
        self, response: Response, started: float, sent: float, now: float
    ) -> bytes | Failure | None:
        turn = self._step
        self._step += 1
        reply = self._send_reply(response)
        if isinstance(reply, Failure):
            return reply
        if reply.state == INPUT_REQUIRED and turn < _MAX_TURNS:
            return self._builder.answer(self._seq, turn + 1, reply.task_id)
        if turn == 0:
            return _wrong("the first message", reply.state, INPUT_REQUIRED)
        if reply.state == COMPLETED:
            return None
        return _wrong(f"answer {turn}", reply.state, COMPLETED)


class _Cancel(Flow):
    __slots__ = ()

    def begin(self) -> bytes:
        return self._builder.submit(self._seq)

    def answer(
        self, response: Response, started: float, sent: float, now: float
    ) -> bytes | Failure | None:
        if self._step == 0:
            self._step = 1
            reply = self._send_reply(response)
            if isinstance(reply, Failure):
                return reply
            if reply.state == MESSAGE or reply.state in _TERMINAL:
                return Failure(
                    "wrong-state",
                    f"SendMessage: the task was {reply.state} before the cancel; the cancel "
                    "workload needs tasks that keep running (e.g. examples.sleeper with "
                    "--text forever)",
                )
            return self._builder.cancel_task(reply.task_id)
        self.secondary = now - sent
        reply = check_task(self._binding, response.status, response.body)
        if isinstance(reply, Failure):
            return reply
        return None if reply.state == CANCELED else _wrong("CancelTask", reply.state, CANCELED)


class Workload:
    """A workload by name: makes the flows of its operations.

    ``secondary`` names the second metric its flows measure (``first_event``, ``cancel``),
    and ``headline`` the metric the table's percentiles show.
    """

    def __init__(self, name: str, flow: type[Flow], secondary: str | None, headline: str) -> None:
        self.name = name
        self._flow = flow
        self.secondary = secondary
        self.headline = headline

    def flow(self, builder: RequestBuilder, binding: str, seq: int) -> Flow:
        """The flow of operation number ``seq``."""
        return self._flow(builder, binding, seq)


WORKLOADS: dict[str, Workload] = {
    "send": Workload("send", _Send, None, "latency"),
    "stream": Workload("stream", _Stream, "first_event", "latency"),
    "submit-poll": Workload("submit-poll", _SubmitPoll, None, "latency"),
    "multi-turn": Workload("multi-turn", _MultiTurn, None, "latency"),
    "cancel": Workload("cancel", _Cancel, "cancel", "cancel"),
}
