"""Push configs on NATS: the server's memory store's answers, an exact per-task limit
under concurrent writers on two nodes, and delivery's non-blocking view on every node."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from a2a_actors.cluster._names import task_key
from a2a_actors.cluster._push_configs import MARKER_TTL_S, NatsPushConfigStore
from a2a_actors.protocol._requests import AuthenticationInfo, TaskPushNotificationConfig
from a2a_actors.push._delivery import PushConfigSource
from a2a_actors.server._push_configs import MemoryPushConfigStore, PushConfigStore

from .helpers import connect, nats_server

pytestmark = pytest.mark.anyio


def config(
    task_id: str, config_id: str, url: str = "https://hooks.example.com/a"
) -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(
        url=url,
        id=config_id,
        task_id=task_id,
        token="tok",
        authentication=AuthenticationInfo(scheme="Bearer", credentials="secret"),
    )


async def crud(store: PushConfigStore) -> list[object]:
    out: list[object] = [await store.get("t", "a"), list(await store.list("t"))]
    out.append(await store.put(config("t", "a"), limit=2))
    out.append(await store.put(config("t", "b"), limit=2))
    out.append(await store.put(config("t", "c"), limit=2))  # over the limit: refused
    out.append(await store.put(config("t", "a", "https://hooks.example.com/new"), limit=2))
    out.append(list(await store.list("t")))  # "a" replaced in place
    out.append(await store.get("t", "b"))
    await store.delete("t", "a")
    await store.delete("t", "a")  # absent: fine
    await store.delete("nope", "x")
    out.append(list(await store.list("t")))
    out.append(await store.put(config("t", "c"), limit=2))
    await store.delete("t", "b")
    await store.delete("t", "c")
    out.append(list(await store.list("t")))
    out.append(await store.put(config("t", "d"), limit=1))  # again after all were deleted
    out.append(list(await store.list("t")))
    out.append(list(await store.list("other")))
    return out


async def test_answers_like_the_servers_memory_store(tmp_path: Path) -> None:
    expected = await crud(MemoryPushConfigStore())
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as conn,
            NatsPushConfigStore.open(conn) as store,
        ):
            source: PushConfigSource = store  # the seams, checked by mypy
            assert await crud(store) == expected
            await store.wait_caught_up()
            assert source.configs_for("t") == (config("t", "d"),)


async def test_the_limit_holds_with_writers_on_two_nodes_and_every_node_sees_them(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as a,
            connect(server) as b,
            connect(server) as c,
            NatsPushConfigStore.open(a) as one,
            NatsPushConfigStore.open(b) as two,
            NatsPushConfigStore.open(c) as watcher,
        ):
            results: list[bool] = []

            async def add(store: NatsPushConfigStore, config_id: str) -> None:
                results.append(await store.put(config("t", config_id), limit=5))

            async with anyio.create_task_group() as tg:
                for i in range(12):
                    tg.start_soon(add, one if i % 2 else two, f"c{i:02d}")
            assert sorted(results) == [False] * 7 + [True] * 5
            stored = await watcher.list("t")
            assert len(stored) == 5
            await watcher.wait_caught_up()
            assert watcher.configs_for("t") == tuple(stored)
            await one.forget("t")
            assert await two.list("t") == ()
            await watcher.wait_caught_up()
            assert watcher.configs_for("t") == ()


async def test_a_removal_leaves_a_marker_that_expires_and_no_configs_leave_nothing(
    tmp_path: Path,
) -> None:
    # Retention forgets the configs of every task it deletes: one that had none must not
    # leave a marker (the bucket grew by one per deleted task, for ever), and one that
    # had some leaves a marker JetStream removes itself after MARKER_TTL_S.
    with anyio.fail_after(30):
        async with (
            nats_server(tmp_path) as server,
            connect(server) as a,
            connect(server) as b,
            NatsPushConfigStore.open(a) as one,
            NatsPushConfigStore.open(b) as two,
        ):
            stream = f"KV_{a.names.push_bucket}"

            async def messages() -> int:
                return (await a.js.stream_info(stream)).state.messages

            async def marker_ttl(task_id: str) -> str | None:
                subject = f"$KV.{a.names.push_bucket}.{task_key(task_id)}"
                msg = await a.js.get_last_msg(stream, subject)
                assert (msg.headers or {}).get("KV-Operation") == "PURGE", msg.headers
                return (msg.headers or {}).get("Nats-TTL")

            for task_id in ("never-1", "never-2"):
                await one.forget(task_id)
            assert await messages() == 0

            assert await one.put(config("t", "a"), limit=5)
            assert await one.put(config("u", "a"), limit=5)
            await one.forget("t")  # retention
            await one.delete("u", "a")  # the task's last config
            assert await messages() == 2  # one marker each, nothing else
            assert await marker_ttl("t") == await marker_ttl("u") == str(int(MARKER_TTL_S))
            await two.wait_caught_up()  # the other node saw both removals
            assert two.configs_for("t") == two.configs_for("u") == ()
