"""One embedded server of an agent on a port other processes share (``SO_REUSEPORT``).

    python benchmarks/servers/reuseport.py MODULE:ATTR PORT

Start it N times with one PORT and the kernel spreads new connections over the N
processes: N independent embedded servers behind one address, each with its own tasks and
no NATS, like N replicas behind a load balancer without a cluster. ``bench_cluster.py``
measures them as the ``embedded`` point with N nodes: what N processes cost per task on
the machine, beside what N cluster nodes cost. Prints the URL once serving (Linux only:
``SO_REUSEPORT``).
"""

from __future__ import annotations

import socket
import sys

import anyio

from a2a_actors.server import serve
from a2a_actors.server._cli.serve import load_target


def shared_socket(port: int) -> socket.socket:
    """A socket bound to 127.0.0.1:``port`` that other processes may bind too."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(("127.0.0.1", port))
    return sock


async def main(target: str, port: int) -> None:
    agent = load_target(target)
    sock = shared_socket(port)
    async with anyio.create_task_group() as tg:
        url = await tg.start(lambda task_status: serve(agent, sock=sock, task_status=task_status))
        print(url, flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], int(sys.argv[2]), backend="asyncio")
