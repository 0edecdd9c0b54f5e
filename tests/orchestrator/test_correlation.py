"""The pure part: correlations, hop records, trace context, and errors that carry their path."""

from __future__ import annotations

import datetime as _dt
import re

import pytest

from orchestrator import (
    CORRELATION_URI,
    ChildRecord,
    Correlation,
    CycleError,
    DelegationError,
    DepthLimitError,
    HopRecord,
    child_correlation,
    from_metadata,
    traceparent,
)
from orchestrator._correlation import (
    check_incoming,
    hop_record,
    parse_traceparent,
    root_correlation,
)

TRACE = "0af7651916cd43dd8448eb211c80319c"


def test_a_child_correlation_extends_the_parents() -> None:
    root = root_correlation("a", trace_id=TRACE)
    b = child_correlation(
        root, parent_task_id="t1", parent_context_id="c1", child_agent="b", parent_url="http://a"
    )
    c = child_correlation(b, parent_task_id="t2", parent_context_id="c2", child_agent="c")
    assert root == Correlation(trace_id=TRACE, depth=0, path=("a",))
    assert b == Correlation(
        trace_id=TRACE,
        depth=1,
        path=("a", "b"),
        parent_task_id="t1",
        parent_context_id="c1",
        parent_agent="a",
        parent_url="http://a",
    )
    assert (c.depth, c.path, c.parent_agent, c.agent) == (2, ("a", "b", "c"), "b", "c")
    assert b.to_metadata() == {
        "traceId": TRACE,
        "depth": 1,
        "path": ["a", "b"],
        "parentTaskId": "t1",
        "parentContextId": "c1",
        "parentAgent": "a",
        "parentUrl": "http://a",
    }
    assert from_metadata({CORRELATION_URI: b.to_metadata()}) == b
    assert from_metadata({"other": 1}) is None
    assert from_metadata(None) is None


def test_depth_and_cycles_are_refused_at_the_sender() -> None:
    b = Correlation(trace_id=TRACE, depth=1, path=("a", "b"), parent_task_id="t1")
    with pytest.raises(DepthLimitError) as deep:
        child_correlation(
            b, parent_task_id="t2", parent_context_id="", child_agent="c", max_depth=1
        )
    assert str(deep.value) == (
        "delegation to 'c' refused: it would reach depth 2 (max 1) [raised at b task t2]"
    )
    assert deep.value.path == ("a", "b", "c")
    with pytest.raises(CycleError) as cycle:
        child_correlation(b, parent_task_id="t2", parent_context_id="", child_agent="a")
    assert cycle.value.reason == "delegation to 'a' refused: it would revisit it (path a -> b -> a)"


def test_check_incoming() -> None:
    ok = Correlation(trace_id=TRACE, depth=2, path=("a", "b", "c"))
    check_incoming(ok, "c", max_depth=2)
    check_incoming(Correlation(trace_id=TRACE, depth=1, path=("x",)), "c", max_depth=2)
    with pytest.raises(DepthLimitError, match=re.escape("arrived at depth 2 (max 1)")):
        check_incoming(ok, "c", max_depth=1)
    with pytest.raises(CycleError, match=re.escape("already on the path c -> b -> c")):
        check_incoming(Correlation(trace_id=TRACE, depth=2, path=("c", "b", "c")), "c", max_depth=8)
    with pytest.raises(CycleError):
        check_incoming(Correlation(trace_id=TRACE, depth=2, path=("c", "b", "x")), "c", max_depth=8)


@pytest.mark.parametrize(
    "bad",
    [
        {"traceId": "xyz"},
        {"traceId": "0" * 32},
        {"traceId": TRACE, "depth": -1},
        {"traceId": TRACE, "path": "a"},
    ],
)
def test_a_malformed_correlation_is_a_value_error(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="malformed correlation metadata"):
        from_metadata({CORRELATION_URI: bad})


def test_traceparent_round_trip() -> None:
    value = traceparent(TRACE, span_id="b7ad6b7169203331")
    assert value == f"00-{TRACE}-b7ad6b7169203331-01"
    assert parse_traceparent(value) == (TRACE, "b7ad6b7169203331")
    fresh = parse_traceparent(traceparent(TRACE))
    assert fresh is not None
    assert fresh[0] == TRACE
    for bad in (None, "", "01-" + value[3:], f"00-{'0' * 32}-b7ad6b7169203331-01", "junk"):
        assert parse_traceparent(bad) is None
    assert root_correlation("a").trace_id != root_correlation("a").trace_id


def test_a_hop_record_round_trips_through_task_metadata() -> None:
    at = _dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=_dt.UTC)
    correlation = Correlation(trace_id=TRACE, depth=1, path=("a", "b"), parent_task_id="t1")
    record = HopRecord.of(correlation, agent="b", url="http://b", started_at=at)
    record.children.append(
        ChildRecord(agent="c", task_id="t3", state="TASK_STATE_WORKING", depth=2, started_at=at)
    )
    record.canceled_children.append("t4")
    data = record.to_metadata()
    assert data == {
        "traceId": TRACE,
        "depth": 1,
        "path": ["a", "b"],
        "parentTaskId": "t1",
        "agent": "b",
        "url": "http://b",
        "startedAt": "2026-01-02T03:04:05Z",
        "children": [
            {
                "agent": "c",
                "taskId": "t3",
                "state": "TASK_STATE_WORKING",
                "depth": 2,
                "startedAt": "2026-01-02T03:04:05Z",
            }
        ],
        "canceledChildren": ["t4"],
    }
    assert hop_record({CORRELATION_URI: data}) == record
    assert hop_record({CORRELATION_URI: data}).correlation == correlation  # type: ignore[union-attr]
    assert from_metadata({CORRELATION_URI: data}) == correlation  # a record is a correlation too
    assert hop_record({CORRELATION_URI: {"depth": 1}}) is None
    assert hop_record(None) is None


def test_errors_keep_their_class_origin_and_relay_across_hops() -> None:
    origin = DelegationError(
        "disk on fire",
        origin_agent="c",
        origin_task_id="t3",
        state="TASK_STATE_FAILED",
        path=("a", "b", "c"),
    )
    assert str(origin) == "disk on fire [FAILED at c task t3]"
    at_a = origin.relayed_by("b").relayed_by("a")
    assert at_a.relay == ("b", "a")
    assert str(at_a) == "disk on fire [FAILED at c task t3, relayed by b -> a]"
    back = DelegationError.from_metadata(at_a.to_metadata())
    assert type(back) is DelegationError
    assert back.to_metadata() == at_a.to_metadata()
    cycle = CycleError("loop", origin_agent="b", path=("a", "b", "a")).relayed_by("a")
    assert isinstance(cycle, CycleError)
    assert type(DelegationError.from_metadata(cycle.to_metadata())) is CycleError
    assert type(DelegationError.from_metadata({"type": "Nope", "reason": "x"})) is DelegationError
    assert str(DelegationError("plain")) == "plain"
