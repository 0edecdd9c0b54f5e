"""ListTasks pages are bounded in bytes as well as in count: a page ends before the task that
would take it past ``max_page_bytes`` (one task at least), and its token goes on from there."""

from __future__ import annotations

import anyio
import pytest

from a2a_actors.protocol import ListTasksRequest, codec
from a2a_actors.runtime import InProcessClient, Supervisor, TaskContext

from .helpers import as_task

pytestmark = pytest.mark.anyio


async def sized(ctx: TaskContext) -> None:
    """An artifact of as many kilobytes as the message says."""
    await ctx.artifact("x" * (int(ctx.text) * 1000), name="blob")


async def pages(sup: Supervisor, request: ListTasksRequest) -> list[list[str]]:
    found: list[list[str]] = []
    token = ""
    while True:
        page = await sup.list_tasks(
            ListTasksRequest(
                include_artifacts=request.include_artifacts,
                page_size=request.page_size,
                page_token=token,
            )
        )
        found.append([t.id for t in page.tasks])
        assert sum(len(codec.encode(t)) for t in page.tasks) <= 3500 or len(page.tasks) == 1
        token = page.next_page_token
        if not token:
            return found


async def test_pages_end_at_the_byte_bound_and_the_token_carries_on() -> None:
    with anyio.fail_after(10):
        async with Supervisor(sized, max_page_bytes=3500) as sup:
            client = InProcessClient(sup)
            ids = []
            for kilobytes in (1, 1, 1, 5, 1):
                ids.append(as_task(await client.send_message(str(kilobytes))).id)
            newest_first = list(reversed(ids))
            with_artifacts = await pages(sup, ListTasksRequest(include_artifacts=True))
            assert [i for page in with_artifacts for i in page] == newest_first
            assert [len(page) for page in with_artifacts] == [1, 1, 2, 1]  # 5 KB alone
            # Without artifacts every task is small: one page, by count.
            without = await pages(sup, ListTasksRequest(include_artifacts=False))
            assert without == [newest_first]


def test_the_bound_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_page_bytes must be at least 1"):
        Supervisor(sized, max_page_bytes=0)
