"""The built-in HTTP/1.1 load generator of ``bench_http.py`` (used when ``wrk`` is absent).

    python benchmarks/servers/loadgen.py --host H --port P --request-file F \\
        --connections N --mode send|stream --start-at T --warmup W --duration D

One process, one thread, ``epoll`` over N keep-alive connections, each a closed loop: send
the pre-built request bytes (read from ``--request-file``), read the whole response, record
its latency, send again at once. Responses are parsed minimally: the status code, then the
body by ``Content-Length`` or by chunked framing (an SSE stream ends with the last chunk), or
up to the close when neither is given. A response counts as an error when its status is not
200, when its body holds a JSON ``"error"`` member (a JSON-RPC error, or an SSE ``error``
event), or, for ``--mode stream``, when it does not reach ``TASK_STATE_COMPLETED``. A
``Connection: close`` answer or a closed socket makes the connection reconnect.

All connections are opened first; requests start at the wall-clock time ``--start-at`` (so
several generator processes share one window), responses completed during the first
``--warmup`` seconds are discarded, and those completed in the next ``--duration`` seconds
are counted. Requests still in flight at the end are abandoned.

Prints one JSON object on stdout: ``completed``, ``errors``, ``error_samples``,
``latencies_us`` (one per completed response), ``window_s``, ``cpu_s`` (this process's
user+system CPU time during the window) and ``reconnects``.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import socket
import sys
import time
from typing import Any

_RECV_SIZE = 262144


class _Conn:
    """One keep-alive connection and the response being read on it."""

    __slots__ = ("body", "buf", "chunked", "close", "length", "pos", "sent_at", "sock", "status")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = bytearray()
        self.sent_at = 0.0
        self.reset()

    def reset(self) -> None:
        self.buf.clear()
        self.status = -1  # -1: headers not read yet
        self.length = -1  # Content-Length, or -1
        self.chunked = False
        self.close = False
        self.pos = 0
        self.body: list[bytes] = []


def _connect(host: str, port: int) -> socket.socket:
    sock = socket.create_connection((host, port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setblocking(False)
    return sock


def _send(sock: socket.socket, request: bytes) -> None:
    sent = sock.send(request)
    if sent < len(request):  # rare: a full socket buffer; finish blocking
        sock.setblocking(True)
        try:
            sock.sendall(request[sent:])
        finally:
            sock.setblocking(False)


def _parse(conn: _Conn) -> bytes | None:
    """The complete response body, or None while more bytes are needed."""
    buf = conn.buf
    if conn.status < 0:
        end = buf.find(b"\r\n\r\n")
        if end < 0:
            return None
        head = bytes(buf[:end]).lower()
        conn.status = int(head[9:12])
        at = head.find(b"\r\ncontent-length:")
        if at >= 0:
            stop = head.find(b"\r\n", at + 2)
            conn.length = int(head[at + 17 : stop if stop >= 0 else len(head)])
        conn.chunked = b"\r\ntransfer-encoding: chunked" in head
        conn.close = b"\r\nconnection: close" in head
        conn.pos = end + 4
    if conn.length >= 0:
        stop = conn.pos + conn.length
        if len(buf) < stop:
            return None
        return bytes(buf[conn.pos : stop])
    if not conn.chunked:
        return None  # body runs until the server closes the connection
    pos = conn.pos
    while True:
        line_end = buf.find(b"\r\n", pos)
        if line_end < 0:
            break
        size = int(bytes(buf[pos:line_end]).split(b";", 1)[0], 16)
        if size == 0:
            if len(buf) < line_end + 4:  # the empty trailer line
                break
            return b"".join(conn.body)
        stop = line_end + 2 + size
        if len(buf) < stop + 2:
            break
        conn.body.append(bytes(buf[line_end + 2 : stop]))
        pos = stop + 2
    conn.pos = pos
    return None


def run(
    host: str,
    port: int,
    request: bytes,
    connections: int,
    mode: str,
    start_at: float,
    warmup: float,
    duration: float,
) -> dict[str, Any]:
    """Run the closed loop; the result object described in the module docstring."""
    epoll = select.epoll()
    conns: dict[int, _Conn] = {}

    def open_conn() -> _Conn:
        conn = _Conn(_connect(host, port))
        conns[conn.sock.fileno()] = conn
        epoll.register(conn.sock.fileno(), select.EPOLLIN)
        return conn

    def drop(conn: _Conn) -> None:
        fd = conn.sock.fileno()
        epoll.unregister(fd)
        del conns[fd]
        conn.sock.close()

    pending = [open_conn() for _ in range(connections)]
    clock = time.perf_counter
    begin = clock() + max(0.0, start_at - time.time())
    measure_from = begin + warmup
    end = measure_from + duration
    while clock() < begin:
        time.sleep(min(0.01, max(0.0, begin - clock())))
    latencies: list[int] = []
    record = latencies.append
    errors = 0
    samples: list[str] = []
    reconnects = 0
    stream = mode == "stream"
    cpu_at_start: float | None = None

    def failed(status: int, body: bytes) -> bool:
        if status != 200 or b'"error"' in body:
            return True
        return stream and b"TASK_STATE_COMPLETED" not in body

    def note(text: str) -> None:
        if len(samples) < 3:
            samples.append(text)

    for conn in pending:
        conn.sent_at = clock()
        _send(conn.sock, request)
    while conns:
        now = clock()
        if now >= end:
            break
        if cpu_at_start is None and now >= measure_from:
            times = os.times()
            cpu_at_start = times.user + times.system
        timeout = end - now if cpu_at_start is not None else min(end - now, 0.05)
        for fd, _ in epoll.poll(timeout):
            found = conns.get(fd)
            if found is None:
                continue
            conn = found
            try:
                data = conn.sock.recv(_RECV_SIZE)
            except BlockingIOError:
                continue
            except OSError as exc:
                data = b""
                note(f"recv: {exc!r}")
            body: bytes | None
            if data:
                conn.buf += data
                body = _parse(conn)
                if body is None:
                    continue
            else:  # closed by the server
                if conn.status >= 0 and conn.length < 0 and not conn.chunked:
                    body = bytes(conn.buf[conn.pos :])  # a body delimited by the close
                else:
                    if conn.buf:  # cut off mid-response
                        now = clock()
                        if measure_from <= now < end:
                            errors += 1
                            note(f"connection closed mid-response: {bytes(conn.buf[:120])!r}")
                    drop(conn)
                    reconnects += 1
                    conn = open_conn()
                    conn.sent_at = clock()
                    _send(conn.sock, request)
                    continue
                conn.close = True
            now = clock()
            if now >= measure_from:
                if now >= end:
                    break
                record(int((now - conn.sent_at) * 1e6))
                if failed(conn.status, body):
                    errors += 1
                    note(f"HTTP {conn.status}: {body[:200]!r}")
            if conn.close:
                drop(conn)
                reconnects += 1
                conn = open_conn()
            else:
                conn.reset()
            conn.sent_at = now
            _send(conn.sock, request)
    times = os.times()
    cpu = times.user + times.system - (cpu_at_start if cpu_at_start is not None else 0.0)
    for conn in list(conns.values()):
        drop(conn)
    epoll.close()
    return {
        "completed": len(latencies),
        "errors": errors,
        "error_samples": samples,
        "latencies_us": latencies,
        "window_s": duration,
        "cpu_s": round(cpu, 4),
        "reconnects": reconnects,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="closed-loop HTTP/1.1 load generator")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--request-file", required=True, help="the raw HTTP request bytes")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--mode", choices=("send", "stream"), default="send")
    parser.add_argument("--start-at", type=float, default=0.0, help="wall-clock start (epoch s)")
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--duration", type=float, default=5.0)
    args = parser.parse_args(argv)
    with open(args.request_file, "rb") as file:
        request = file.read()
    result = run(
        args.host,
        args.port,
        request,
        args.connections,
        args.mode,
        args.start_at,
        args.warmup,
        args.duration,
    )
    json.dump(result, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
