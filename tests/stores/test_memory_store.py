"""The in-memory task store: versions, filters, newest-first cursor paging, total size."""

from __future__ import annotations

import base64
import datetime as dt

import anyio
import msgspec
import pytest
from hypothesis import given, settings, strategies as st

from a2a_actors.protocol import InvalidParamsError, Task, TaskState, TaskStatus
from a2a_actors.stores import (
    MemoryTaskStore,
    StoredTask,
    TaskQuery,
    decode_page_token,
    encode_page_token,
)

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


async def ids(store: MemoryTaskStore, query: TaskQuery) -> list[str]:
    page = await store.list(query)
    return [r.task.id for r in page.records]


async def test_save_get_delete() -> None:
    with anyio.fail_after(5):
        store = MemoryTaskStore()
        assert await store.get("a") is None
        await store.save(record("a"))
        got = await store.get("a")
        assert got is not None
        assert got.task.id == "a"
        await store.delete("a")
        await store.delete("a")  # unknown ids are fine
        assert await store.get("a") is None
        assert len(store) == 0


async def test_save_keeps_the_highest_version() -> None:
    with anyio.fail_after(5):
        store = MemoryTaskStore()
        await store.save(record("a", version=3, state=TaskState.WORKING))
        await store.save(record("a", version=2, state=TaskState.SUBMITTED))
        got = await store.get("a")
        assert got is not None
        assert (got.version, got.task.status.state) == (3, TaskState.WORKING)
        await store.save(record("a", version=4))
        got = await store.get("a")
        assert got is not None
        assert got.version == 4


async def test_filters() -> None:
    with anyio.fail_after(5):
        store = MemoryTaskStore()
        await store.save(record("a", seconds=1, context_id="c1", owner="alice"))
        await store.save(record("b", seconds=2, context_id="c2", state=TaskState.WORKING))
        await store.save(record("c", seconds=3, context_id="c1", owner="bob"))
        assert await ids(store, TaskQuery()) == ["c", "b", "a"]
        assert await ids(store, TaskQuery(context_id="c1")) == ["c", "a"]
        assert await ids(store, TaskQuery(state=TaskState.WORKING)) == ["b"]
        assert await ids(store, TaskQuery(owner="alice")) == ["a"]
        assert await ids(store, TaskQuery(owner=None)) == ["b"]
        after = T0 + dt.timedelta(seconds=2)
        assert await ids(store, TaskQuery(status_timestamp_after=after)) == ["c", "b"]
        assert await ids(store, TaskQuery(context_id="none")) == []


async def test_pagination_newest_first_with_total_size() -> None:
    with anyio.fail_after(5):
        store = MemoryTaskStore()
        for i in range(7):
            await store.save(record(f"t{i}", seconds=i))
        first = await store.list(TaskQuery(page_size=3))
        assert [r.task.id for r in first.records] == ["t6", "t5", "t4"]
        assert first.total_size == 7
        assert first.next_page_token
        second = await store.list(TaskQuery(page_size=3, page_token=first.next_page_token))
        assert [r.task.id for r in second.records] == ["t3", "t2", "t1"]
        third = await store.list(TaskQuery(page_size=3, page_token=second.next_page_token))
        assert [r.task.id for r in third.records] == ["t0"]
        assert third.next_page_token == ""
        assert third.total_size == 7


async def test_equal_timestamps_are_ordered_by_id() -> None:
    with anyio.fail_after(5):
        store = MemoryTaskStore()
        for name in ("b", "a", "c"):
            await store.save(record(name))
        page = await store.list(TaskQuery(page_size=2))
        assert [r.task.id for r in page.records] == ["c", "b"]
        rest = await store.list(TaskQuery(page_size=2, page_token=page.next_page_token))
        assert [r.task.id for r in rest.records] == ["a"]


async def test_empty_listing_has_an_empty_token() -> None:
    with anyio.fail_after(5):
        page = await MemoryTaskStore().list(TaskQuery())
        assert (page.records, page.next_page_token, page.total_size) == ((), "", 0)


async def test_bad_page_token_is_invalid_params() -> None:
    with anyio.fail_after(5):
        store = MemoryTaskStore()
        for token in ("not-a-token", "e30", encode_page_token((T0, "x"))[:-3] + "!!"):
            with pytest.raises(InvalidParamsError) as info:
                await store.list(TaskQuery(page_token=token))
            assert info.value.field == "pageToken"


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
