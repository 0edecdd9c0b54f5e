"""Sans-I/O Server-Sent Events (SSE) framing, shared by the server and the client.

Theory of operation
-------------------
Encoding is stateless: :func:`encode_event` turns one event into the exact bytes to put on
the wire (``event:``/``id:``/``retry:`` lines, one ``data:`` line per line of data, then a
blank line), and :func:`encode_comment` produces a comment block used as a keep-alive ping.
The encoder always writes ``\\n`` line endings.

Decoding follows the WHATWG "event stream interpretation" rules
(https://html.spec.whatwg.org/multipage/server-sent-events.html). :class:`SSEParser` is
incremental: the caller pushes whatever bytes the transport produced into
:meth:`SSEParser.feed` and gets back the events those bytes completed. Each chunk is scanned
once for line terminators (LF, CRLF or bare CR); every complete line is interpreted as soon as
it is seen and only the unterminated tail stays buffered, so feeding a stream in tiny chunks
costs linear time. A CR at the very end of a chunk ends its line at once, and a LF at the start
of the next chunk is then dropped, so a CRLF split across chunks counts as one terminator.
Lines are split on bytes and decoded afterwards with replacement characters, which is
equivalent to decoding the whole stream (terminators are ASCII and never occur inside a UTF-8
sequence), so invalid UTF-8 never raises.

The buffered, not-yet-dispatched bytes (the data of the current event plus the unterminated
line) are bounded by ``max_event_bytes``; exceeding it raises :class:`SSEProtocolError`, so a
hostile peer cannot make the parser hold unbounded memory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = (
    "SSEEvent",
    "SSEParser",
    "SSEProtocolError",
    "encode_comment",
    "encode_event",
    "encode_json_event",
)

_EOL = re.compile(rb"\r\n|\r|\n")
_STR_EOL = re.compile(r"\r\n|\r|\n")
_FORBIDDEN = re.compile(r"[\r\n\0]")
_BOM = b"\xef\xbb\xbf"
_MAX_RETRY_DIGITS = 18  # larger "retry" values are ignored rather than parsed


class SSEProtocolError(ValueError):
    """The event stream exceeded a limit of the parser (an event or a line is too large)."""


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched Server-Sent Event.

    Attributes:
        data: The data lines of the event joined with ``"\\n"``.
        event: The event type; ``"message"`` when the stream gave none.
        id: The stream's last event ID when the event was dispatched (per the spec an ``id:``
            persists until changed, so events without an ``id:`` line inherit the previous
            one), or ``None`` when it is empty.
        retry: The reconnection time in milliseconds from a ``retry:`` line in this event's
            block, or ``None``.
    """

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


def _field(name: str, value: str) -> bytes:
    if _FORBIDDEN.search(value):
        raise ValueError(f"SSE {name} must not contain CR, LF or NUL: {value!r}")
    return value.encode()


def encode_event(
    data: str | bytes,
    *,
    event: str | None = None,
    id: str | None = None,
    retry: int | None = None,
) -> bytes:
    """Encode one event.

    Lines appear in the order ``event:``, ``id:``, ``retry:``, ``data:``... then a blank line.
    ``data`` is split on LF, CRLF and bare CR into one ``data:`` line each (so its line endings
    come back as ``"\\n"`` when parsed); single-line data ``d`` gives ``b"data: d\\n\\n"``.
    An ``id`` of ``""`` tells the receiver to clear its last event ID.

    Returns:
        The UTF-8 bytes of the event, terminated by a blank line.

    Raises:
        ValueError: ``event`` or ``id`` contains CR, LF or NUL, ``retry`` is negative, or a
            ``str`` argument cannot be encoded as UTF-8 (lone surrogates).
    """
    raw = data.encode() if isinstance(data, str) else data
    if event is None and id is None and retry is None and b"\n" not in raw and b"\r" not in raw:
        return b"data: " + raw + b"\n\n"  # the common case: one line of JSON
    parts: list[bytes] = []
    if event is not None:
        parts.append(b"event: " + _field("event", event) + b"\n")
    if id is not None:
        parts.append(b"id: " + _field("id", id) + b"\n")
    if retry is not None:
        if retry < 0:
            raise ValueError(f"SSE retry must be non-negative, got {retry}")
        parts.append(b"retry: %d\n" % retry)
    parts.extend(b"data: " + line + b"\n" for line in _EOL.split(raw))
    parts.append(b"\n")
    return b"".join(parts)


def encode_json_event(data: bytes, id: int) -> bytes:
    """Encode one event whose data is one line (JSON, which never holds a raw CR or LF)
    with a numeric ``id``: exactly ``encode_event(data, id=str(id))``, on a faster path
    (the server writes every stream event with it).

    Returns:
        ``b"id: <id>\ndata: <data>\n\n"``.
    """
    return b"id: %d\ndata: %b\n\n" % (id, data)


def encode_comment(text: str = "") -> bytes:
    """Encode a comment block (ignored by receivers; used as a keep-alive ping).

    Multi-line ``text`` becomes one ``:`` line per line.

    Returns:
        ``b": <text>\\n\\n"`` for single-line text.
    """
    lines = _STR_EOL.split(text)
    return "".join(f": {line}\n" for line in lines).encode() + b"\n"


class SSEParser:
    """Incremental WHATWG-conformant event-stream parser (no I/O).

    Feed it bytes with :meth:`feed`, and call :meth:`close` at end of stream.

    Args:
        max_event_bytes: Upper bound on buffered, not-yet-dispatched bytes (the current
            event's data plus any unterminated line).

    Raises:
        ValueError: ``max_event_bytes`` is not positive.
    """

    def __init__(self, *, max_event_bytes: int = 16 * 1024 * 1024) -> None:
        if max_event_bytes <= 0:
            raise ValueError("max_event_bytes must be positive")
        self._max = max_event_bytes
        self._buf = bytearray()  # the unterminated tail; never contains CR or LF between feeds
        self._after_cr = False  # the last line ended with a CR at the very end of a chunk
        self._at_start = True  # no line seen yet (a leading BOM is still to be stripped)
        self._closed = False
        self._failed = False
        self._data: list[bytes] = []
        self._data_size = 0
        self._event = ""
        self._id_buffer = ""
        self._last_id = ""
        self._event_retry: int | None = None
        self._retry: int | None = None

    @property
    def last_event_id(self) -> str | None:
        """The last event ID string per the spec, or ``None`` when it is empty.

        It is updated when an event block ends (at the blank line), even if the block had no
        data, and is what a client sends as ``Last-Event-ID`` when reconnecting.
        """
        return self._last_id or None

    @property
    def retry(self) -> int | None:
        """The latest reconnection time (milliseconds) announced by the stream, or ``None``."""
        return self._retry

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Consume the next bytes of the stream.

        Returns:
            The events completed by this chunk, in stream order (possibly empty).

        Raises:
            SSEProtocolError: The buffered bytes of one event (or one unterminated line) now
                exceed ``max_event_bytes``. The parser is then unusable: later calls raise
                again, and events completed earlier in the same chunk are lost.
            RuntimeError: :meth:`close` was already called.
        """
        if self._failed:
            raise SSEProtocolError("SSE parser already failed")
        if self._closed:
            raise RuntimeError("SSEParser.feed() called after close()")
        if not chunk:
            return []
        if self._after_cr:
            self._after_cr = False
            if chunk[0] == 0x0A:  # second half of a CRLF split across chunks
                chunk = chunk[1:]
        buf = self._buf
        search_from = len(buf)  # the tail holds no terminator: scan only the new bytes
        buf += chunk
        events: list[SSEEvent] = []
        pos = 0
        while (m := _EOL.search(buf, search_from)) is not None:
            self._line(bytes(buf[pos : m.start()]), events)
            pos = search_from = m.end()
        if pos:
            self._after_cr = pos == len(buf) and buf[-1] == 0x0D
            del buf[:pos]
        if len(buf) + self._data_size > self._max:
            self._fail()
        return events

    def close(self) -> list[SSEEvent]:
        """Signal end of stream.

        Per the spec, an event whose block is not terminated by a blank line when the stream
        ends is incomplete and is DISCARDED, as is any unterminated line; so this always
        returns an empty list. It exists so callers can uniformly write
        ``events += parser.close()``. The parser accepts no more input afterwards.

        Returns:
            The events completed at end of stream (always empty under the spec's rules).
        """
        self._closed = True
        self._buf.clear()
        self._data, self._data_size = [], 0
        return []

    def _fail(self) -> None:
        self._failed = True
        self._buf.clear()
        self._data, self._data_size = [], 0
        raise SSEProtocolError(f"SSE event exceeds max_event_bytes={self._max}")

    def _line(self, line: bytes, events: list[SSEEvent]) -> None:
        if self._at_start:
            self._at_start = False
            if line.startswith(_BOM):
                line = line[3:]
        if not line:
            self._dispatch(events)
            return
        if line[0] == 0x3A:  # ':' starts a comment
            return
        name, colon, value = line.partition(b":")
        if colon and value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            self._data.append(value)
            self._data_size += len(value) + 1
            if self._data_size > self._max:
                self._fail()
        elif name == b"event":
            self._event = value.decode("utf-8", "replace")
        elif name == b"id":
            if b"\0" not in value:
                self._id_buffer = value.decode("utf-8", "replace")
        elif name == b"retry" and value.isdigit() and len(value) <= _MAX_RETRY_DIGITS:
            self._retry = self._event_retry = int(value)

    def _dispatch(self, events: list[SSEEvent]) -> None:
        self._last_id = self._id_buffer
        data, self._data, self._data_size = self._data, [], 0
        event, self._event = self._event, ""
        retry, self._event_retry = self._event_retry, None
        if data:
            text = b"\n".join(data).decode("utf-8", "replace")
            events.append(SSEEvent(text, event or "message", self._last_id or None, retry))
