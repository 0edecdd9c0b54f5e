"""What the chaos tests share: the agent they serve, and cluster nodes as processes of
the real CLI (``a2a-actors serve --cluster``), each SIGKILLable by its PID.

A node's stderr goes to a file under the test's ``tmp_path`` (read it with
:meth:`CliNode.log` when a test fails; a pipe nobody reads would fill up and block the
node); its stdout is its URL, then what the agent prints (:meth:`CliNode.next_line`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from a2a_actors.client import A2AClient
from a2a_actors.cluster import NatsServer
from a2a_actors.runtime import TaskContext
from a2a_actors.runtime._agent import Agent
from orchestrator import delegate, orchestrated

__all__ = (
    "AGENT",
    "CHILD",
    "PARENT",
    "CliNode",
    "agent",
    "child",
    "cli_nodes",
    "client_of",
    "parent",
)

ROOT = Path(__file__).resolve().parents[2]
CLI = Path(sys.executable).with_name("a2a-actors")
AGENT = "tests.cluster.chaos_nodes:agent"
CHILD = "tests.cluster.chaos_nodes:child"
PARENT = "tests.cluster.chaos_nodes:parent"
START_S = 60.0


async def handler(ctx: TaskContext) -> None:
    """``tick``: WORKING, prints ``ticking <task id>``, then ``tick 0``, ``tick 1``, …
    every 20 ms until cancelled;
    ``slow-cancel``: WORKING, prints ``waiting <task id>``, then waits until cancelled,
    prints ``cancelling <task id>`` and takes 60 s (shielded) to stop;
    ``work``: WORKING, 0.5 s, then COMPLETED ``done``;
    anything else: WORKING until cancelled."""
    await ctx.start()
    if ctx.text == "tick":
        print("ticking", ctx.task_id, flush=True)
        n = 0
        while True:
            await ctx.update(f"tick {n}")
            n += 1
            await anyio.sleep(0.02)
    if ctx.text == "work":
        await anyio.sleep(0.5)
        await ctx.complete("done")
        return
    if ctx.text == "slow-cancel":
        print("waiting", ctx.task_id, flush=True)
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                print("cancelling", ctx.task_id, flush=True)
                await anyio.sleep(60)  # the test SIGKILLs the node in here
    await anyio.sleep_forever()


agent = Agent(handler=handler, name="chaos")
#: The same, orchestrated: a parent starts it with one SendStreamingMessage and follows
#: that stream (its card declares the correlation extension).
child = orchestrated(Agent(handler=handler, name="chaos-child"))


async def delegating(ctx: TaskContext) -> str:
    """``URL TEXT``: delegates ``TEXT`` to the agent at ``URL``, answers its answer."""
    url, _, text = ctx.text.partition(" ")
    return (await delegate(ctx, url, text)).text


#: An orchestrated parent (``chaos-parent``) of whatever agent its message names.
parent = orchestrated(Agent(handler=delegating, name="chaos-parent"))


class CliNode:
    """One ``a2a-actors serve --cluster`` process (see the module docstring)."""

    def __init__(self, node_id: str, process: Process, log_path: Path) -> None:
        self.node_id = node_id
        self.process = process
        self.url = ""
        self._log_path = log_path
        assert process.stdout is not None
        self._stdout = BufferedByteReceiveStream(process.stdout)

    async def next_line(self) -> str:
        """The next line the node printed on stdout.

        Raises:
            AssertionError: The node exited first (the message has its log).
        """
        try:
            line = await self._stdout.receive_until(b"\n", 65536)
        except (anyio.EndOfStream, anyio.IncompleteRead):
            raise AssertionError(f"node {self.node_id} exited:\n{self.log()}") from None
        return line.decode()

    def kill(self) -> None:
        """SIGKILL: no goodbye; the node's lease must expire."""
        os.kill(self.process.pid, signal.SIGKILL)

    def log(self) -> str:
        """What the node wrote on stderr (its log)."""
        return self._log_path.read_text(errors="replace")

    async def stop(self) -> None:
        """SIGTERM (SIGKILL after 20 s); wait until it is gone."""
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            with anyio.move_on_after(20):
                await self.process.wait()
            if self.process.returncode is None:
                self.process.kill()
        await self.process.wait()


def _command(*args: str) -> list[str]:
    base = [str(CLI)] if CLI.exists() else [sys.executable, "-m", "a2a_actors.cli"]
    return [*base, *args]


@asynccontextmanager
async def _cli_node(
    server: NatsServer, node_id: str, lease: float, logs: Path, extra: Sequence[str], served: str
) -> AsyncIterator[CliNode]:
    argv = _command(
        "serve",
        served,
        "--cluster",
        server.url,
        "--node-id",
        node_id,
        "--cluster-lease",
        str(lease),
        *extra,
    )
    log_path = logs / f"node-{node_id}.log"
    with log_path.open("wb") as stderr:
        process = await anyio.open_process(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stderr=stderr)
    async with process:
        node = CliNode(node_id, process, log_path)
        try:
            with anyio.fail_after(START_S):
                node.url = (await node.next_line()).strip()
            yield node
        finally:
            with anyio.CancelScope(shield=True):
                await node.stop()


@asynccontextmanager
async def cli_nodes(
    server: NatsServer,
    node_ids: Sequence[str],
    tmp_path: Path,
    *,
    lease: float = 2.0,
    extra: Sequence[str] = (),
    served: str = AGENT,
) -> AsyncIterator[list[CliNode]]:
    """Nodes ``node_ids`` of ``served``'s cluster (the ``chaos`` agent by default) on
    ``server``, started at once, with ``extra`` serve flags; each stopped (SIGTERM) on
    leaving unless the test killed it."""
    async with AsyncExitStack() as stack:
        nodes: dict[str, CliNode] = {}

        async def start(node_id: str) -> None:
            nodes[node_id] = await stack.enter_async_context(
                _cli_node(server, node_id, lease, tmp_path, extra, served)
            )

        async with anyio.create_task_group() as tg:
            for node_id in node_ids:
                tg.start_soon(start, node_id)
        yield [nodes[node_id] for node_id in node_ids]


async def client_of(node: CliNode, *, binding: str = "JSONRPC") -> A2AClient:
    """A client of ``node`` speaking ``binding`` (``"HTTP+JSON"``: REST), without a card
    cache or resubscription (a cut stream is an error)."""
    return await A2AClient.connect(node.url, card_cache=None, bindings=(binding,))
