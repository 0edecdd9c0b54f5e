"""A trivial HTTP/1.1 server: fixed answers from a bare ``asyncio.Protocol``.

    python benchmarks/servers/trivial.py [--host 127.0.0.1]

Prints one line on stdout, the base URL; stops on SIGTERM or SIGINT. It parses just enough
HTTP to find where each request ends (headers plus ``Content-Length`` bytes) and answers
``POST /stream`` with a chunked three-event SSE body and everything else with a fixed JSON
body (both the size of the bare Quart answers). No framework: it is many times faster than
any real server, so what a load generator achieves against it is the load generator's own
ceiling (the ``http.loadgen-ceiling`` results of ``bench_http.py``). The answers are valid
A2A 1.0 JSON-RPC results (a completed task; status updates ending COMPLETED), so the
built-in generator, which checks every answer, counts them as successes.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import socket
import sys
from typing import Final

_JSON: Final = (  # a task id and a final state: what a validating generator checks
    b'{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t-1",'
    b'"status":{"state":"TASK_STATE_COMPLETED"}}}}'
)
_BODY: Final = _JSON + b" " * (510 - len(_JSON))  # the size of the bare Quart answer
SEND_RESPONSE: Final = (
    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
    + str(len(_BODY)).encode()
    + b"\r\n\r\n"
    + _BODY
)


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


_EVENT: Final = (
    b'data: {"jsonrpc":"2.0","id":1,"result":{"statusUpdate":{"status":{"state":"%s"}}}}\n\n'
)
STREAM_RESPONSE: Final = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    + b"".join(_chunk(_EVENT % s) for s in (b"TASK_STATE_SUBMITTED", b"TASK_STATE_WORKING"))
    + _chunk(_EVENT % b"TASK_STATE_COMPLETED")
    + b"0\r\n\r\n"
)


class TrivialHTTP(asyncio.Protocol):
    """Answers every complete request in the buffer with a fixed response."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        while True:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(buffer[:end]).lower()
            length = 0
            at = head.find(b"\r\ncontent-length:")
            if at >= 0:
                stop = head.find(b"\r\n", at + 2)
                length = int(head[at + 17 : stop if stop >= 0 else len(head)])
            total = end + 4 + length
            if len(buffer) < total:
                return
            del buffer[:total]
            assert self._transport is not None
            stream = head.startswith(b"post /stream")
            self._transport.write(STREAM_RESPONSE if stream else SEND_RESPONSE)


async def _serve(host: str) -> None:
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind((host, 0))
    server = await loop.create_server(TrivialHTTP, sock=sock, backlog=1024)
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    bound_host, port = sock.getsockname()[:2]
    print(f"http://{bound_host}:{port}", flush=True)
    async with server:
        await stop.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="a trivial fixed-answer HTTP server")
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)
    asyncio.run(_serve(args.host))
    return 0


if __name__ == "__main__":
    sys.exit(main())
