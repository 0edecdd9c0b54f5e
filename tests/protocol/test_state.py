"""The task state machine, driven step by step as h11's ``test_state.py`` drives its own.

After every step the *whole* observable state is asserted; every refused step is asserted to
raise and to leave that state exactly as it was.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from a2a_actors.protocol._errors import (
    IllegalTransitionError,
    InvalidParamsError,
    TaskNotCancelableError,
    UnsupportedOperationError,
)
from a2a_actors.protocol._models import (
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_actors.protocol._state import (
    ACTIVE_STATES,
    INTERRUPTED_STATES,
    SETTLED_STATES,
    TERMINAL_STATES,
    TRANSITIONS,
    TaskMachine,
    accepts_input,
    apply_history_length,
    check_cancelable,
    is_terminal,
)

S = TaskState
T0 = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.UTC)


def at(seconds: int) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def user(mid: str, text: str = "hi", context_id: str = "") -> Message:
    return Message(message_id=mid, role=Role.USER, parts=(Part(text=text),), context_id=context_id)


def agent(mid: str, text: str = "ok") -> Message:
    return Message(message_id=mid, role=Role.AGENT, parts=(Part(text=text),))


def bound(message: Message, task_id: str = "t-1", context_id: str = "c-1") -> Message:
    return Message(
        message_id=message.message_id,
        role=message.role,
        parts=message.parts,
        task_id=task_id,
        context_id=context_id,
        metadata=message.metadata,
    )


def art(aid: str, *texts: str, **kw: Any) -> Artifact:
    return Artifact(artifact_id=aid, parts=tuple(Part(text=t) for t in texts), **kw)


@dataclass(frozen=True)
class Observed:
    """Everything a reader can learn from a machine."""

    version: int
    task: Task
    terminal: bool
    interrupted: bool


def observe(m: TaskMachine) -> Observed:
    snap = m.snapshot()
    assert m.status == snap.status
    assert m.state is snap.status.state
    assert m.metadata == snap.metadata
    assert (m.task_id, m.context_id) == (snap.id, snap.context_id)
    return Observed(m.version, snap, m.terminal, m.interrupted)


def expect(
    version: int,
    status: TaskStatus,
    *,
    history: tuple[Message, ...] = (),
    artifacts: tuple[Artifact, ...] = (),
    metadata: dict[str, Any] | None = None,
) -> Observed:
    task = Task(
        id="t-1",
        context_id="c-1",
        status=status,
        history=history,
        artifacts=artifacts,
        metadata=metadata,
    )
    return Observed(
        version,
        task,
        status.state in {S.COMPLETED, S.FAILED, S.CANCELED, S.REJECTED},
        status.state in {S.INPUT_REQUIRED, S.AUTH_REQUIRED},
    )


def new() -> TaskMachine:
    return TaskMachine("t-1", "c-1", timestamp=T0)


# -- the tables ------------------------------------------------------------------------------

TERMINAL = {S.COMPLETED, S.FAILED, S.CANCELED, S.REJECTED}
ALLOWED: dict[TaskState, set[TaskState]] = {
    S.SUBMITTED: {S.WORKING, S.INPUT_REQUIRED, S.AUTH_REQUIRED, *TERMINAL},
    S.WORKING: {S.WORKING, S.INPUT_REQUIRED, S.AUTH_REQUIRED, *TERMINAL},
    S.INPUT_REQUIRED: {S.WORKING, S.CANCELED, S.FAILED, S.REJECTED},
    S.AUTH_REQUIRED: {S.WORKING, S.CANCELED, S.FAILED, S.REJECTED},
    S.COMPLETED: set(),
    S.FAILED: set(),
    S.CANCELED: set(),
    S.REJECTED: set(),
    S.UNSPECIFIED: set(),
}


def test_tables_are_the_documented_lifecycle() -> None:
    assert {k: set(v) for k, v in TRANSITIONS.items()} == ALLOWED
    assert set(TERMINAL_STATES) == TERMINAL
    assert set(INTERRUPTED_STATES) == {S.INPUT_REQUIRED, S.AUTH_REQUIRED}
    assert set(ACTIVE_STATES) == {S.SUBMITTED, S.WORKING}
    assert [s for s in S if is_terminal(s)] == [S.COMPLETED, S.FAILED, S.CANCELED, S.REJECTED]


# -- step by step ----------------------------------------------------------------------------


def test_input_required_round_trip() -> None:
    m = new()
    assert observe(m) == expect(1, TaskStatus(state=S.SUBMITTED, timestamp=T0))

    u1 = m.add_user_message(user("u-1", "book a table"))
    assert u1 == bound(user("u-1", "book a table"))
    assert observe(m) == expect(2, TaskStatus(state=S.SUBMITTED, timestamp=T0), history=(u1,))

    ev = m.set_status(S.WORKING, timestamp=at(1))
    working = TaskStatus(state=S.WORKING, timestamp=at(1))
    assert ev == TaskStatusUpdateEvent(task_id="t-1", context_id="c-1", status=working)
    assert observe(m) == expect(3, working, history=(u1,))

    ev = m.set_status(S.INPUT_REQUIRED, timestamp=at(2), message=agent("a-1", "for how many?"))
    question = bound(agent("a-1", "for how many?"))
    asking = TaskStatus(state=S.INPUT_REQUIRED, message=question, timestamp=at(2))
    assert ev == TaskStatusUpdateEvent(task_id="t-1", context_id="c-1", status=asking)
    assert observe(m) == expect(4, asking, history=(u1, question))

    u2 = m.add_user_message(user("u-2", "four", context_id="c-1"))
    assert observe(m) == expect(5, asking, history=(u1, question, u2))

    m.set_status(S.WORKING, timestamp=at(3))
    resumed = TaskStatus(state=S.WORKING, timestamp=at(3))
    assert observe(m) == expect(6, resumed, history=(u1, question, u2))

    ev = m.set_status(S.COMPLETED, timestamp=at(4), metadata={"took": 4})
    done = TaskStatus(state=S.COMPLETED, timestamp=at(4))
    assert ev == TaskStatusUpdateEvent(
        task_id="t-1", context_id="c-1", status=done, metadata={"took": 4}
    )
    assert observe(m) == expect(7, done, history=(u1, question, u2))


def test_terminal_states_absorb_everything_but_metadata() -> None:
    m = new()
    m.set_status(S.WORKING, timestamp=at(1))
    m.set_status(S.FAILED, timestamp=at(2), message=agent("a-err", "boom"))
    failed = TaskStatus(state=S.FAILED, message=bound(agent("a-err", "boom")), timestamp=at(2))
    before = observe(m)
    assert before == expect(3, failed, history=(bound(agent("a-err", "boom")),))

    for target in S:
        with pytest.raises(IllegalTransitionError, match=r"^Task t-1: illegal transition "):
            m.set_status(target, timestamp=at(9))
        assert observe(m) == before
    with pytest.raises(TaskNotCancelableError, match=r"^Task t-1 is in terminal state: ") as info:
        m.cancel(timestamp=at(9))
    assert info.value.metadata == {"taskId": "t-1"}
    assert observe(m) == before
    with pytest.raises(UnsupportedOperationError, match=r"^Task t-1 is in terminal state: "):
        m.add_user_message(user("u-late"))
    assert observe(m) == before
    with pytest.raises(IllegalTransitionError, match=r"^Task t-1 is terminal; artifact 'x' "):
        m.add_artifact(art("x", "late"))
    assert observe(m) == before

    m.update_metadata({"postmortem": "done"})
    assert observe(m) == expect(
        4, failed, history=(bound(agent("a-err", "boom")),), metadata={"postmortem": "done"}
    )


def test_rollback_returns_to_a_stored_snapshot_even_from_a_terminal_state() -> None:
    m = new()
    m.set_status(S.WORKING, timestamp=at(1))
    stored, stored_version = m.snapshot(), m.version
    before = observe(m)
    m.add_artifact(art("x", "unstored"))
    m.set_status(S.COMPLETED, timestamp=at(2), message=agent("a-done", "done"))
    assert m.terminal
    m.rollback(stored, stored_version)
    assert observe(m) == before
    assert not m.terminal
    m.set_status(S.FAILED, timestamp=at(3))  # the way on from the stored state
    assert m.version == stored_version + 1
    with pytest.raises(ValueError, match=r"^cannot roll back to version 9 from 3$"):
        m.rollback(stored, 9)


def test_illegal_transition_leaves_everything_unchanged() -> None:
    m = new()
    m.add_user_message(user("u-1"))
    m.set_status(S.AUTH_REQUIRED, timestamp=at(1), message=agent("a-1", "log in"))
    before = observe(m)
    for target in (S.SUBMITTED, S.INPUT_REQUIRED, S.AUTH_REQUIRED, S.COMPLETED, S.UNSPECIFIED):
        with pytest.raises(IllegalTransitionError) as info:
            m.set_status(target, timestamp=at(5), message=agent("a-x", "never stored"))
        assert info.value.metadata == {"taskId": "t-1"}
        assert info.value.code == -32006
        assert observe(m) == before
        assert m.snapshot() is before.task  # not even the cached snapshot was dropped


def test_cancel_from_every_non_terminal_state() -> None:
    for state in (S.SUBMITTED, S.WORKING, S.INPUT_REQUIRED, S.AUTH_REQUIRED):
        m = new()
        if state is not S.SUBMITTED:
            m.set_status(state, timestamp=at(1))
        version = m.version
        ev = m.cancel(timestamp=at(2), message=agent("a-c", "stopped"))
        canceled = TaskStatus(
            state=S.CANCELED, message=bound(agent("a-c", "stopped")), timestamp=at(2)
        )
        assert ev.status == canceled
        assert observe(m) == expect(
            version + 1, canceled, history=(bound(agent("a-c", "stopped")),)
        )


def test_working_to_working_is_a_progress_update() -> None:
    m = new()
    m.set_status(S.WORKING, timestamp=at(1))
    m.set_status(S.WORKING, timestamp=at(2), message=agent("p-1", "50%"))
    m.set_status(S.WORKING, timestamp=at(3), message=agent("p-2", "90%"))
    progress = (bound(agent("p-1", "50%")), bound(agent("p-2", "90%")))
    last = TaskStatus(state=S.WORKING, message=progress[1], timestamp=at(3))
    assert observe(m) == expect(4, last, history=progress)


def test_status_timestamps_are_normalised_to_utc() -> None:
    m = new()
    plus_one = dt.timezone(dt.timedelta(hours=1))
    m.set_status(S.WORKING, timestamp=dt.datetime(2026, 1, 1, 13, 0, 1, tzinfo=plus_one))
    assert m.status.timestamp == at(1)
    assert m.status.timestamp is not None
    assert m.status.timestamp.tzinfo is dt.UTC


# -- user messages ---------------------------------------------------------------------------


def test_check_user_message_binds_without_changing_anything() -> None:
    m = new()
    before = observe(m)
    checked = m.check_user_message(user("u-1", context_id="c-1"))
    assert checked == bound(user("u-1"))
    assert observe(m) == before
    other_task = Message(message_id="u-2", role=Role.USER, parts=(Part(text="x"),), task_id="t-9")
    assert m.check_user_message(other_task).task_id == "t-1"


def test_check_user_message_rejects_another_context() -> None:
    m = new()
    before = observe(m)
    with pytest.raises(InvalidParamsError) as info:
        m.check_user_message(user("u-1", context_id="c-other"))
    assert info.value.message == "contextId 'c-other' does not match the context of task t-1"
    assert info.value.field == "message.contextId"
    with pytest.raises(InvalidParamsError):
        m.add_user_message(user("u-1", context_id="c-other"))
    assert observe(m) == before


def test_check_user_message_rejects_agent_messages() -> None:
    m = new()
    before = observe(m)
    with pytest.raises(InvalidParamsError) as info:
        m.add_user_message(agent("a-1"))
    assert info.value.message == "client messages must have role ROLE_USER"
    assert info.value.field == "message.role"
    assert observe(m) == before


def test_terminal_task_rejects_user_messages_before_other_checks() -> None:
    m = new()
    m.set_status(S.REJECTED, timestamp=at(1))
    with pytest.raises(UnsupportedOperationError) as info:
        m.check_user_message(agent("a-1"))  # wrong role too: terminal wins
    assert info.value.message == "Task t-1 is in terminal state: TASK_STATE_REJECTED"
    assert info.value.metadata == {"taskId": "t-1"}


def test_history_is_never_deduplicated() -> None:
    m = new()
    first = m.add_user_message(user("same", "hello"))
    second = m.add_user_message(user("same", "hello"))
    m.set_status(S.WORKING, timestamp=at(1), message=agent("same"))
    m.set_status(S.WORKING, timestamp=at(2), message=agent("same"))
    history = m.snapshot().history
    assert history == (first, second, bound(agent("same")), bound(agent("same")))
    assert m.version == 5


# -- artifacts -------------------------------------------------------------------------------


def test_artifact_chunks_append_and_close() -> None:
    m = new()
    working = TaskStatus(state=S.WORKING, timestamp=at(1))
    m.set_status(S.WORKING, timestamp=at(1))

    ev = m.add_artifact(art("a", "one", name="Report", extensions=("e1",)))
    assert ev == TaskArtifactUpdateEvent(
        task_id="t-1", context_id="c-1", artifact=art("a", "one", name="Report", extensions=("e1",))
    )
    assert observe(m) == expect(
        3, working, artifacts=(art("a", "one", name="Report", extensions=("e1",)),)
    )

    chunk = art("a", "two", description="d", metadata={"k": 1}, extensions=("e1", "e2"))
    ev = m.add_artifact(chunk, append=True, metadata={"n": 2})
    assert ev == TaskArtifactUpdateEvent(
        task_id="t-1", context_id="c-1", artifact=chunk, append=True, metadata={"n": 2}
    )  # the event carries the chunk, not the merged artifact
    merged = art(
        "a",
        "one",
        "two",
        name="Report",
        description="d",
        metadata={"k": 1},
        extensions=("e1", "e2"),
    )
    assert observe(m) == expect(4, working, artifacts=(merged,))

    ev = m.add_artifact(art("a", "three", metadata={"j": 2}), append=True, last_chunk=True)
    assert (ev.append, ev.last_chunk) == (True, True)
    closed = art(
        "a",
        "one",
        "two",
        "three",
        name="Report",
        description="d",
        metadata={"k": 1, "j": 2},
        extensions=("e1", "e2"),
    )
    assert observe(m) == expect(5, working, artifacts=(closed,))

    before = observe(m)
    with pytest.raises(IllegalTransitionError, match=r"artifact 'a' was closed by lastChunk$"):
        m.add_artifact(art("a", "four"), append=True)
    assert observe(m) == before
    with pytest.raises(IllegalTransitionError, match=r"artifact 'a' was closed by lastChunk$"):
        m.add_artifact(art("a", "replacement"))
    assert observe(m) == before


def test_append_to_an_unknown_artifact_is_refused() -> None:
    m = new()
    before = observe(m)
    with pytest.raises(IllegalTransitionError, match=r"cannot append to unknown artifact 'b'$"):
        m.add_artifact(art("b", "x"), append=True)
    assert observe(m) == before


def test_a_new_chunk_without_append_replaces_in_place() -> None:
    m = new()
    m.add_artifact(art("a", "1"))
    m.add_artifact(art("b", "2"))
    m.add_artifact(art("a", "1-bis"))
    status = TaskStatus(state=S.SUBMITTED, timestamp=T0)
    assert observe(m) == expect(4, status, artifacts=(art("a", "1-bis"), art("b", "2")))
    m.add_artifact(art("c", "3"), last_chunk=True)
    assert observe(m) == expect(
        5, status, artifacts=(art("a", "1-bis"), art("b", "2"), art("c", "3"))
    )
    with pytest.raises(IllegalTransitionError):
        m.add_artifact(art("c", "more"), append=True)


# -- snapshots, history length, restore ------------------------------------------------------


def test_snapshot_is_cached_per_version() -> None:
    m = new()
    first = m.snapshot()
    assert m.snapshot() is first
    m.update_metadata({"a": 1})
    second = m.snapshot()
    assert second is not first
    assert m.snapshot() is second
    assert first.metadata is None  # published snapshots never change
    assert second.metadata == {"a": 1}
    exposed = m.metadata
    assert exposed is not None
    exposed["mutated"] = True  # a copy: the machine is untouched
    assert m.metadata == {"a": 1}
    assert m.version == 2


def test_apply_history_length() -> None:
    m = new()
    for i in range(4):
        m.add_user_message(user(f"u-{i}"))
    task = m.snapshot()
    assert apply_history_length(task, None) is task
    assert apply_history_length(task, 4) is task
    assert apply_history_length(task, 10) is task
    assert apply_history_length(task, 2).history == (
        bound(user("u-2")),
        bound(user("u-3")),
    )
    empty = apply_history_length(task, 0)
    assert empty.history == ()
    assert (empty.id, empty.context_id, empty.status, empty.artifacts, empty.metadata) == (
        task.id,
        task.context_id,
        task.status,
        task.artifacts,
        task.metadata,
    )
    assert task.history == tuple(bound(user(f"u-{i}")) for i in range(4))  # original intact
    no_history = new().snapshot()
    assert apply_history_length(no_history, 0) is no_history


def test_restore_from_a_snapshot() -> None:
    m = new()
    m.add_user_message(user("u-1"))
    m.set_status(S.WORKING, timestamp=at(1))
    m.add_artifact(art("a", "x"))
    m.update_metadata({"k": "v"})
    snap = m.snapshot()
    restored = TaskMachine.restore(snap, version=m.version)
    assert observe(restored) == observe(m)
    restored.add_artifact(art("a", "y"), append=True)
    assert restored.snapshot().artifacts == (art("a", "x", "y"),)
    assert m.snapshot() is snap  # the original is untouched


# -- property: random operation sequences ----------------------------------------------------

_ops = st.lists(
    st.one_of(
        st.tuples(st.just("status"), st.sampled_from(list(S))),
        st.tuples(st.just("cancel"), st.none()),
        st.tuples(st.just("user"), st.sampled_from(["c-1", "", "c-2"])),
        st.tuples(st.just("agent-msg"), st.none()),
        st.tuples(
            st.just("artifact"),
            st.tuples(st.sampled_from("xyz"), st.booleans(), st.booleans()),
        ),
        st.tuples(st.just("meta"), st.none()),
    ),
    max_size=40,
)


def _apply(m: TaskMachine, op: str, arg: Any, step: int) -> None:
    if op == "status":
        m.set_status(arg, timestamp=at(step), message=agent(f"s{step}"))
    elif op == "cancel":
        m.cancel(timestamp=at(step))
    elif op == "user":
        m.add_user_message(user(f"u{step}", context_id=arg))
    elif op == "agent-msg":
        m.add_user_message(agent(f"a{step}"))
    elif op == "artifact":
        aid, append, last = arg
        m.add_artifact(art(aid, f"p{step}"), append=append, last_chunk=last)
    else:
        m.update_metadata({"step": step})


@settings(max_examples=300)
@given(_ops)
def test_random_operations_respect_the_tables(ops: list[tuple[str, Any]]) -> None:
    m = new()
    state = S.SUBMITTED
    history = 0
    artifacts: dict[str, int] = {}
    closed: set[str] = set()
    for step, (op, arg) in enumerate(ops):
        before = observe(m)
        terminal = state in TERMINAL
        # The model's verdict, from the literal tables above (not from the module).
        refusal: type[Exception] | None
        if op == "status":
            refusal = None if arg in ALLOWED[state] else IllegalTransitionError
        elif op == "cancel":
            refusal = TaskNotCancelableError if terminal else None
        elif op in ("user", "agent-msg"):
            wrong = op == "agent-msg" or arg == "c-2"
            refusal = (
                UnsupportedOperationError if terminal else (InvalidParamsError if wrong else None)
            )
        elif op == "artifact":
            aid, append, _ = arg
            ok = not terminal and aid not in closed and (aid in artifacts or not append)
            refusal = None if ok else IllegalTransitionError
        else:
            refusal = None

        if refusal is not None:
            with pytest.raises(refusal):
                _apply(m, op, arg, step)
            assert observe(m) == before, (op, arg)
            continue

        _apply(m, op, arg, step)
        after = observe(m)
        assert after.version == before.version + 1, (op, arg)
        if op == "status":
            assert arg in TRANSITIONS[state]
            state = arg
            history += 1
        elif op == "cancel":
            state = S.CANCELED
        elif op == "user":
            history += 1
        elif op == "artifact":
            aid, append, last = arg
            artifacts[aid] = artifacts.get(aid, 0) + 1 if append else 1
            if last:
                closed.add(aid)
        assert after.task.status.state is state
        assert len(after.task.history) == history
        assert {a.artifact_id: len(a.parts) for a in after.task.artifacts} == artifacts
        assert after.terminal is (state in TERMINAL)
        assert after.interrupted is (state in {S.INPUT_REQUIRED, S.AUTH_REQUIRED})
        if before.terminal:  # terminal states absorb: only metadata may change
            assert op == "meta"
            assert after.task.status == before.task.status


# -- the rules used by runtime and server ------------------------------------------------


def test_settled_states_are_terminal_and_interrupted_states() -> None:
    assert SETTLED_STATES == TERMINAL_STATES | INTERRUPTED_STATES
    assert not SETTLED_STATES & ACTIVE_STATES
    assert S.UNSPECIFIED not in SETTLED_STATES


@pytest.mark.parametrize("state", list(S))
def test_only_interrupted_states_accept_input(state: TaskState) -> None:
    assert accepts_input(state) is (state in (S.INPUT_REQUIRED, S.AUTH_REQUIRED))


@pytest.mark.parametrize("state", list(S))
def test_input_acceptance_agrees_with_the_machine(state: TaskState) -> None:
    task = Task(id="t-1", context_id="c-1", status=TaskStatus(state=state, timestamp=T0))
    assert TaskMachine.restore(task).interrupted is accepts_input(state)


@pytest.mark.parametrize("state", [s for s in S if s in TERMINAL_STATES])
def test_a_terminal_task_is_not_cancelable(state: TaskState) -> None:
    with pytest.raises(
        TaskNotCancelableError, match=rf"^Task t-9 is in terminal state: {state.value}$"
    ) as info:
        check_cancelable("t-9", state)
    assert info.value.metadata == {"taskId": "t-9"}


@pytest.mark.parametrize("state", [s for s in S if s in ACTIVE_STATES | INTERRUPTED_STATES])
def test_every_live_state_is_cancelable(state: TaskState) -> None:
    check_cancelable("t-9", state)  # does not raise


@pytest.mark.parametrize("state", [s for s in S if s in TERMINAL_STATES])
def test_the_machine_refuses_cancel_with_the_same_error(state: TaskState) -> None:
    task = Task(id="t-1", context_id="c-1", status=TaskStatus(state=state, timestamp=T0))
    machine = TaskMachine.restore(task, version=4)
    with pytest.raises(TaskNotCancelableError) as from_machine:
        machine.cancel(timestamp=T0)
    with pytest.raises(TaskNotCancelableError) as from_rule:
        check_cancelable("t-1", state)
    assert str(from_machine.value) == str(from_rule.value)
    assert machine.version == 4
    assert machine.state is state
