"""Run by tests/runtime/test_failure_memory.py in a fresh interpreter (logging as a server
sets it up, not pytest's capture, which keeps every record and its traceback): prints, per
backend, whether the data a failed handler held is still alive with the collector off."""

from __future__ import annotations

import gc
import logging
import sys
import weakref

import anyio

from a2a_actors.protocol import Task, TaskState
from a2a_actors.runtime import InProcessClient, Supervisor, TaskContext


class Big:
    __slots__ = ("__weakref__", "data")

    def __init__(self) -> None:
        self.data = bytearray(8 << 20)


async def main() -> None:
    refs: list[weakref.ref[Big]] = []

    async def greedy(ctx: TaskContext) -> None:
        big = Big()
        refs.append(weakref.ref(big))
        raise RuntimeError("out of ideas")

    async with Supervisor(greedy) as sup:
        task = await InProcessClient(sup).send_message("go")
        assert isinstance(task, Task)
        alive = refs[0]() is not None
    print(f"{task.status.state is TaskState.FAILED} {alive}")


if __name__ == "__main__":
    logging.basicConfig(stream=sys.stderr, level=logging.INFO)
    gc.collect()
    gc.disable()  # only reference counting frees anything from here on
    anyio.run(main, backend=sys.argv[1])
