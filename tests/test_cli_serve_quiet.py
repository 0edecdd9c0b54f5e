"""``a2a-actors serve`` says nothing once it is told to stop: on Ctrl-C (SIGINT to the
parent, the only process a terminal's Ctrl-C reaches) a single server, and the parent of
``--workers N`` with each of its workers, stop without another line on stdout or stderr.

Run as real processes in a session of their own (as a terminal's job); stderr is read to
its end, which comes only once every process holding it (the workers too) has exited.
"""

from __future__ import annotations

import re
import signal
import sys
from pathlib import Path

import anyio
import pytest

from a2a_actors.client import A2AClient
from a2a_actors.protocol._models import Task, TaskState

ROOT = Path(__file__).resolve().parents[1]
GUARD = 120.0

#: What start-up prints on stderr, and nothing else may be printed: (pattern, count per
#: server process). A worker restarted at shutdown would print its lines twice.
SERVER_LINES = (
    (r"INFO serving gRPC on 127\.0\.0\.1:\d+", 1),
    (r"INFO Running on http://127\.0\.0\.1:\d+ \(CTRL \+ C to quit\)", 1),
    (r"INFO serving echo on http://127\.0\.0\.1:\d+ \(asyncio\)", 1),
)
PARENT_LINES = (
    (r"INFO workers: private nats-server nats://127\.0\.0\.1:\d+ \(pid \d+, store \S+\)", 1),
    (r"INFO worker \S+-w\d serving \(pid \d+\)", 1),  # per worker
)


def _needs_workers(workers: int) -> None:
    if workers > 1:
        pytest.importorskip("nats", reason="--workers needs the cluster extra")
        from a2a_actors.cluster._nats_server import find_nats_server

        find_nats_server()


@pytest.mark.parametrize("workers", [1, 2], ids=["single", "workers"])
async def test_ctrl_c_stops_without_a_line_more(workers: int) -> None:
    pytest.importorskip("grpc", reason="the grpc extra is not installed")
    _needs_workers(workers)
    argv = [sys.executable, "-m", "a2a_actors.cli", "serve", "examples.echo:agent"]
    argv += ["--grpc-port", "0", "--workers", str(workers)]
    with anyio.fail_after(GUARD):
        async with await anyio.open_process(argv, cwd=ROOT, start_new_session=True) as process:
            assert process.stdout is not None
            assert process.stderr is not None
            err = bytearray()

            async def read_stderr() -> None:
                assert process.stderr is not None
                async for chunk in process.stderr:
                    err.extend(chunk)

            async with anyio.create_task_group() as tg:
                tg.start_soon(read_stderr)
                out = b""
                while out.count(b"\n") < 2:  # the URL, the grpc:// address: serving
                    out += await process.stdout.receive()
                url, address, rest = out.decode().split("\n")
                assert (address.startswith("grpc://"), rest) == (True, "")
                async with await A2AClient.connect(url, card_cache=None) as client:
                    task = await client.send_message("hi")
                    assert isinstance(task, Task)
                    assert task.status.state is TaskState.COMPLETED
                process.send_signal(signal.SIGINT)  # Ctrl-C
                assert b"".join([chunk async for chunk in process.stdout]) == b""
                assert await process.wait() == 0
            # read_stderr ended: every process holding stderr (the workers too) has exited
    lines = err.decode().splitlines()
    expected = [(p, n * workers) for p, n in SERVER_LINES]
    if workers > 1:
        expected += [(PARENT_LINES[0][0], 1), (PARENT_LINES[1][0], workers)]
    for pattern, count in expected:
        found = [line for line in lines if re.fullmatch(pattern, line)]
        assert len(found) == count, (pattern, lines)
    assert len(lines) == sum(count for _, count in expected), lines  # nothing else
