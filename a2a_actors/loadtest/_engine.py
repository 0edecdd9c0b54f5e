"""The load generator of one process: raw sockets, ``epoll``, one thread.

:class:`Engine` keeps ``connections`` keep-alive HTTP/1.1 connections to one host and runs
operations (:class:`~a2a_actors.loadtest._workloads.Flow`) on them, one at a time per connection.
Operations wait in a queue for a free connection; their latency runs from the moment they *should*
have started, so time spent queued is counted.

* **Closed loop** (``rate is None``): ``concurrency`` operations are in flight; each one
  that ends starts the next at once.
* **Open loop** (``rate`` operations/s): operation *i* is due at ``begin + i / rate``
  whether or not earlier ones have finished. Its latency is measured from that intended
  start, so a server that stalls shows the stall in every operation that was due meanwhile
  (no coordinated omission). ``epoll`` sleeps in whole milliseconds, so an operation may
  go out up to about 1 ms late, and that is counted too.

The run: connect every connection first (:meth:`Engine.open`), then from ``begin`` (a wall-clock
time shared by all generator processes) run ``warmup`` seconds whose results are dropped, then
``duration`` seconds that are counted into a :class:`~a2a_actors.loadtest._tally.Tally`. With
``tls``, every connection is wrapped in TLS (the handshake happens when it opens). An exchange that
takes longer than ``timeout`` fails with ``timeout``; a connection the server closes mid-response
fails its operation with ``closed`` and is reopened; a connection the server closes while idle is
reopened silently.
"""

from __future__ import annotations

import os
import select
import socket
import ssl
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from a2a_actors.loadtest._http1 import ProtocolError, Response, ResponseReader
from a2a_actors.loadtest._replies import Failure
from a2a_actors.loadtest._tally import Tally
from a2a_actors.loadtest._workloads import Flow

__all__ = ("Engine", "Load")

_RECV = 262144
_TICK = 0.1  # how often timeouts are checked and broken connections retried


@dataclass(frozen=True, slots=True)
class Load:
    """What one generator process is asked to do."""

    connections: int
    concurrency: int  #: operations in flight (closed loop)
    rate: float | None  #: operations per second (open loop), or None for a closed loop
    warmup: float
    duration: float
    timeout: float
    phase: float = 0.0  #: open loop: the first operation is due this long after the start


class _Conn:
    __slots__ = ("flow", "reader", "sent", "sock", "started")

    def __init__(self) -> None:
        self.sock: socket.socket | None = None
        self.reader = ResponseReader()
        self.flow: Flow | None = None
        self.started = 0.0
        self.sent = 0.0


class Engine:
    """One process's generator (see the module docstring).

    Args:
        host, port: Where to connect.
        load: The load to apply.
        make_flow: Builds operation number ``seq`` (0, 1, …).
    """

    def __init__(
        self,
        host: str,
        port: int,
        load: Load,
        make_flow: Callable[[int], Flow],
        *,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self._address = (host, port)
        self._tls = tls
        self._load = load
        self._make_flow = make_flow
        self._epoll = select.epoll()
        self._by_fd: dict[int, _Conn] = {}
        self._conns = [_Conn() for _ in range(max(1, load.connections))]
        self._idle: list[_Conn] = []
        self._broken: list[_Conn] = []
        self._waiting: deque[float] = deque()
        self._seq = 0
        self._tally = Tally()
        self._measure_from = 0.0
        self._end = 0.0

    def open(self) -> None:
        """Connect every connection.

        Raises:
            OSError: A connection could not be made.
        """
        for conn in self._conns:
            self._connect(conn, timeout=10.0)
            self._idle.append(conn)

    def _connect(self, conn: _Conn, timeout: float) -> None:
        sock = socket.create_connection(self._address, timeout=timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self._tls is not None:  # the handshake runs here, blocking, within the timeout
            try:
                sock = self._tls.wrap_socket(sock, server_hostname=self._address[0])
            except OSError:
                sock.close()
                raise
        sock.setblocking(False)
        conn.sock = sock
        self._by_fd[sock.fileno()] = conn
        self._epoll.register(sock.fileno(), select.EPOLLIN)

    def _disconnect(self, conn: _Conn) -> None:
        sock = conn.sock
        if sock is not None:
            self._epoll.unregister(sock.fileno())
            del self._by_fd[sock.fileno()]
            sock.close()
            conn.sock = None
        conn.reader.reset()

    def _reopen(self, conn: _Conn) -> bool:
        """Replace ``conn``'s socket; False (and the connection parked) when that fails."""
        self._disconnect(conn)
        self._tally.reconnects += 1
        try:
            self._connect(conn, timeout=min(self._load.timeout, 5.0))
        except OSError:
            if conn not in self._broken:
                self._broken.append(conn)
            return False
        if conn in self._broken:
            self._broken.remove(conn)
        return True

    def close(self) -> None:
        """Close every connection."""
        for conn in self._conns:
            self._disconnect(conn)
        self._epoll.close()

    # -- operations ------------------------------------------------------------------------

    def _start(self, conn: _Conn, started: float, now: float) -> None:
        flow = self._make_flow(self._seq)
        self._seq += 1
        conn.flow = flow
        conn.started = started
        self._send(conn, flow.begin(), now)

    def _send(self, conn: _Conn, request: bytes, now: float) -> None:
        conn.sent = now
        conn.reader.reset()
        for attempt in (0, 1):
            sock = conn.sock
            try:
                if sock is None:
                    raise ConnectionError("not connected")
                try:
                    sent = sock.send(request)
                except (BlockingIOError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
                    sent = 0
                if sent < len(request):  # a full socket buffer: finish blocking
                    sock.setblocking(True)
                    try:
                        sock.sendall(request[sent:])
                    finally:
                        sock.setblocking(False)
                return
            except OSError as exc:
                # The server may have closed an idle keep-alive connection: one retry.
                if attempt == 1 or not self._reopen(conn):
                    kind = "closed" if conn.sock is not None else "connect"
                    self._finish(conn, Failure(kind, f"send: {exc!r}"), now)
                    return

    def _finish(self, conn: _Conn, verdict: Failure | None, now: float) -> None:
        flow = conn.flow
        conn.flow = None
        tally = self._tally
        if flow is not None and self._measure_from <= now < self._end:
            if verdict is None:
                tally.ok += 1
                tally.latency.record(int((now - conn.started) * 1e6))
                if flow.secondary is not None:
                    tally.secondary.record(int(flow.secondary * 1e6))
            else:
                tally.error(verdict.kind, verdict.detail)
        if self._load.rate is None:
            self._waiting.append(now)  # closed loop: the next operation starts now
        if conn.sock is not None:
            self._idle.append(conn)

    def _answered(self, conn: _Conn, response: Response, now: float) -> None:
        flow = conn.flow
        assert flow is not None
        if self._measure_from <= now < self._end:
            self._tally.requests += 1
        verdict = flow.answer(response, conn.started, conn.sent, now)
        if response.close:
            self._reopen(conn)
        if isinstance(verdict, bytes):
            self._send(conn, verdict, now)
        else:
            self._finish(conn, verdict, now)

    def _readable(self, conn: _Conn, now: float) -> None:
        sock = conn.sock
        assert sock is not None
        try:
            data = sock.recv(_RECV)
            while data and isinstance(sock, ssl.SSLSocket) and sock.pending():
                data += sock.recv(_RECV)  # decrypted bytes epoll cannot see
        except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return
        except OSError as exc:
            data, error = b"", repr(exc)
        else:
            error = "the server closed the connection"
        if conn.flow is None:  # idle: closed by the server (or stray bytes): start afresh
            self._idle.remove(conn)
            if self._reopen(conn):
                self._idle.append(conn)
            return
        try:
            response = conn.reader.feed(data, now) if data else conn.reader.eof(now)
        except ProtocolError as exc:
            self._reopen(conn)
            self._finish(conn, Failure("malformed", str(exc)), now)
            return
        if response is not None:
            self._answered(conn, response, now)
        elif not data:
            self._reopen(conn)
            self._finish(conn, Failure("closed", f"{error} before the answer was complete"), now)

    def _tick(self, now: float) -> None:
        for conn in self._conns:
            if conn.flow is not None and now - conn.sent > self._load.timeout:
                self._reopen(conn)
                self._finish(conn, Failure("timeout", f"no answer in {self._load.timeout} s"), now)
        for conn in list(self._broken):
            self._broken.remove(conn)
            if self._reopen(conn):
                self._idle.append(conn)

    # -- the run ---------------------------------------------------------------------------

    def run(self, begin_at: float) -> Tally:
        """Run from wall-clock time ``begin_at``; the tally of the measured window."""
        load = self._load
        clock = time.perf_counter
        begin = clock() + max(0.0, begin_at - time.time())
        self._measure_from = begin + load.warmup
        self._end = end = self._measure_from + load.duration
        while clock() < begin:
            time.sleep(min(0.01, max(0.0, begin - clock())))
        waiting, idle, by_fd = self._waiting, self._idle, self._by_fd
        poll = self._epoll.poll
        interval = 1.0 / load.rate if load.rate else 0.0
        next_due = begin + load.phase
        if not interval:
            waiting.extend([begin] * max(1, load.concurrency))
        cpu_from: float | None = None
        next_tick = begin + _TICK
        while True:
            now = clock()
            if now >= end:
                break
            if cpu_from is None and now >= self._measure_from:
                times = os.times()
                cpu_from = times.user + times.system
            if interval:
                while next_due <= now:
                    waiting.append(next_due)
                    next_due += interval
            while waiting and idle:
                self._start(idle.pop(), waiting.popleft(), now)
            if now >= next_tick:
                self._tick(now)
                next_tick = now + _TICK
            timeout = min(end, next_tick) - now
            if cpu_from is None:
                timeout = min(timeout, self._measure_from - now)
            if interval:
                timeout = min(timeout, next_due - now)
            for fd, _ in poll(max(0.0, timeout)):
                conn = by_fd.get(fd)
                if conn is not None:
                    self._readable(conn, clock())
        times = os.times()
        tally = self._tally
        tally.cpu_s = times.user + times.system - (cpu_from if cpu_from is not None else 0.0)
        tally.window_s = load.duration
        tally.processes = 1
        tally.max_cpu_share = tally.cpu_s / load.duration if load.duration else 0.0
        tally.in_flight = sum(1 for conn in self._conns if conn.flow is not None)
        if interval:
            tally.backlog = sum(1 for due in waiting if due < end)
        return tally
