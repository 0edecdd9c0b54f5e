"""Paging helpers of the store seam (page tokens, bounds) and memory-store paging by property.

The behavioural contract every store keeps (versions, filters, newest-first cursor paging,
total size) is one suite run against both stores: ``test_sqlite.py``, parametrised over
``kind`` in ("memory", "sqlite").
"""

from __future__ import annotations

import base64
import datetime as dt

import anyio
import msgspec
import pytest
from hypothesis import given, settings, strategies as st

from a2a_actors.protocol import InvalidParamsError, Task, TaskState, TaskStatus
from a2a_actors.stores import MemoryTaskStore, StoredTask, TaskQuery
from a2a_actors.stores._base import decode_page_token, encode_page_token

pytestmark = pytest.mark.anyio

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def record(
    task_id: str,
    *,
    seconds: int = 0,
    state: TaskState = TaskState.COMPLETED,
    context_id: str = "ctx",
    owner: str | None = None,
    version: int = 1,
) -> StoredTask:
    status = TaskStatus(state=state, timestamp=T0 + dt.timedelta(seconds=seconds))
    task = Task(id=task_id, context_id=context_id, status=status)
    return StoredTask(task=task, owner=owner, version=version)


def test_page_size_bounds() -> None:
    for size in (0, 101):
        with pytest.raises(InvalidParamsError, match="pageSize must be between 1 and 100"):
            TaskQuery(page_size=size)
    assert TaskQuery().page_size == 50


def test_page_token_round_trip() -> None:
    key = (T0 + dt.timedelta(microseconds=7), "id-1")
    assert decode_page_token(encode_page_token(key)) == key


def test_naive_timestamp_in_token_is_refused() -> None:
    raw = msgspec.json.encode(("2026-01-01T00:00:00", "x"))
    token = base64.urlsafe_b64encode(raw).decode()
    with pytest.raises(InvalidParamsError):
        decode_page_token(token)


@settings(max_examples=60, deadline=None)
@given(
    stamps=st.lists(st.integers(min_value=0, max_value=5), min_size=0, max_size=30),
    page_size=st.integers(min_value=1, max_value=7),
)
def test_paging_visits_every_record_once_in_order(stamps: list[int], page_size: int) -> None:
    async def scenario() -> list[str]:
        store = MemoryTaskStore()
        for i, seconds in enumerate(stamps):
            await store.save(record(f"t{i:02d}", seconds=seconds))
        seen: list[str] = []
        token = ""
        while True:
            page = await store.list(TaskQuery(page_size=page_size, page_token=token))
            assert page.total_size == len(stamps)
            assert len(page.records) <= page_size
            seen += [r.task.id for r in page.records]
            token = page.next_page_token
            if not token:
                return seen

    seen = anyio.run(scenario)
    expected = sorted(
        (f"t{i:02d}" for i in range(len(stamps))),
        key=lambda name: (stamps[int(name[1:])], name),
        reverse=True,
    )
    assert seen == expected


@settings(max_examples=100)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["save", "delete"]),
            st.integers(0, 5),
            st.sampled_from("ab"),
            st.integers(1, 3),
        ),
        max_size=30,
    )
)
def test_listing_by_context_matches_a_full_scan(steps: list[tuple[str, int, str, int]]) -> None:
    """The context index agrees with filtering every record, whatever was saved (a save
    that moves a task to another context included, and an older version ignored) and
    deleted."""

    async def check() -> None:
        store = MemoryTaskStore()
        for op, n, context, version in steps:
            task_id = f"t{n}"
            if op == "save":
                await store.save(record(task_id, context_id=context, seconds=n, version=version))
            else:
                await store.delete(task_id)
        for context in "ab":
            page = await store.list(TaskQuery(context_id=context, page_size=100))
            expected = sorted(
                (r for r in store.records() if r.task.context_id == context),
                key=lambda r: (r.task.status.timestamp, r.task.id),
                reverse=True,
            )
            assert [r.task.id for r in page.records] == [r.task.id for r in expected]

    anyio.run(check)
