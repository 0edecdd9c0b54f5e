"""Reading HTTP/1.1 responses off a raw socket, incrementally and cheaply.

:class:`ResponseReader` is fed the bytes of one connection as they arrive and hands back
each complete :class:`Response`. It parses only what a load generator needs: the status,
``Content-Length``, chunked framing (the body is de-chunked), ``Connection: close``, and
whether the body is an event stream (``text/event-stream``). A body with neither length nor
chunking runs until the server closes the connection (:meth:`ResponseReader.eof`).

For event streams it also notes when the first complete event arrived (a blank line in
the body), which is the time to first event of a streamed call.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ("ProtocolError", "Response", "ResponseReader")


class ProtocolError(Exception):
    """The bytes are not an HTTP/1.1 response this reader understands."""


@dataclass(frozen=True, slots=True)
class Response:
    """One complete response."""

    status: int
    body: bytes
    event_stream: bool
    close: bool  #: the server asked to close the connection after it
    first_event_at: float  #: when the first event was complete; 0.0 if none or not a stream


def _header(head: bytes, name: bytes) -> bytes | None:
    """The value of header ``name`` (lower case, with its colon) in the lower-cased ``head``."""
    at = head.find(b"\r\n" + name)
    if at < 0:
        return None
    stop = head.find(b"\r\n", at + 2)
    return head[at + 2 + len(name) : stop if stop >= 0 else len(head)].strip()


class ResponseReader:
    """The response being read on one connection (see the module docstring)."""

    __slots__ = (
        "_buf",
        "_chunked",
        "_close",
        "_first_event_at",
        "_length",
        "_pieces",
        "_pos",
        "_scanned",
        "_status",
        "_stream",
    )

    def __init__(self) -> None:
        self._buf = bytearray()
        self.reset()

    def reset(self) -> None:
        """Forget the response read so far (a new request is about to go out)."""
        self._buf.clear()
        self._status = -1  # -1: the head is not complete yet
        self._length = -1
        self._chunked = False
        self._close = False
        self._stream = False
        self._pos = 0
        self._pieces: list[bytes] = []
        self._scanned = 0
        self._first_event_at = 0.0

    @property
    def pending(self) -> bool:
        """Whether any byte of a response has arrived since the last :meth:`reset`."""
        return bool(self._buf)

    def feed(self, data: bytes, now: float) -> Response | None:
        """Add ``data`` (arrived at ``now``); the response once complete, else None.

        Raises:
            ProtocolError: The bytes cannot be an HTTP/1.1 response.
        """
        buf = self._buf
        buf += data
        if self._status < 0 and not self._read_head():
            return None
        if self._length >= 0:
            stop = self._pos + self._length
            if self._stream and not self._first_event_at:
                self._look_for_event(bytes(buf[self._pos : min(stop, len(buf))]), now)
            if len(buf) < stop:
                return None
            return self._done(bytes(buf[self._pos : stop]))
        if self._chunked:
            return self._read_chunks(now)
        if self._stream and not self._first_event_at:
            self._look_for_event(bytes(buf[self._pos :]), now)
        return None  # the body runs until the server closes the connection

    def eof(self, now: float) -> Response | None:
        """The server closed the connection: the close-delimited response, or None if cut."""
        if self._status < 0 or self._length >= 0 or self._chunked:
            return None
        body = bytes(self._buf[self._pos :])
        if self._stream and not self._first_event_at:
            self._look_for_event(body, now)
        self._close = True
        return self._done(body)

    def _read_head(self) -> bool:
        buf = self._buf
        end = buf.find(b"\r\n\r\n")
        if end < 0:
            if len(buf) > 65536:
                raise ProtocolError("no end of the response head in 64 KiB")
            return False
        head = bytes(buf[:end]).lower()
        if not head.startswith(b"http/1.") or len(head) < 12:
            raise ProtocolError(f"not an HTTP/1.x response: {bytes(buf[:80])!r}")
        try:
            self._status = int(head[9:12])
            length = _header(head, b"content-length:")
            self._length = int(length) if length is not None else -1
        except ValueError:
            raise ProtocolError(f"bad response head: {bytes(buf[:200])!r}") from None
        self._chunked = b"chunked" in (_header(head, b"transfer-encoding:") or b"")
        self._close = (_header(head, b"connection:") or b"") == b"close"
        self._stream = b"text/event-stream" in (_header(head, b"content-type:") or b"")
        self._pos = end + 4
        return True

    def _read_chunks(self, now: float) -> Response | None:
        buf = self._buf
        pos = self._pos
        try:
            while True:
                line_end = buf.find(b"\r\n", pos)
                if line_end < 0:
                    return None
                size = int(bytes(buf[pos:line_end]).split(b";", 1)[0], 16)
                if size == 0:
                    if buf.find(b"\r\n\r\n", line_end) < 0:  # trailers, then a blank line
                        return None
                    return self._done(b"".join(self._pieces))
                stop = line_end + 2 + size
                if len(buf) < stop + 2:
                    return None
                piece = bytes(buf[line_end + 2 : stop])
                self._pieces.append(piece)
                if self._stream and not self._first_event_at:
                    self._look_for_event(b"".join(self._pieces), now)
                pos = self._pos = stop + 2
        except ValueError:
            raise ProtocolError(f"bad chunk size: {bytes(buf[pos : pos + 40])!r}") from None

    def _look_for_event(self, body: bytes, now: float) -> None:
        # An event is complete at its blank line; scan only what is new (and 3 bytes back).
        start = max(0, self._scanned - 3)
        if body.find(b"\n\n", start) >= 0 or body.find(b"\r\n\r\n", start) >= 0:
            self._first_event_at = now
        self._scanned = len(body)

    def _done(self, body: bytes) -> Response:
        response = Response(self._status, body, self._stream, self._close, self._first_event_at)
        self.reset()
        return response
