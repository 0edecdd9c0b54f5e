"""A trivial A2A server for calibration: fixed, valid answers from a bare asyncio Protocol.

    python -m a2a_actors.loadtest.trivial --binding jsonrpc|rest --workload WORKLOAD

Prints its base URL on stdout, then serves until SIGTERM/SIGINT. It parses just enough
HTTP to find each request's end and just enough of the request to answer what the
workload expects: SendMessage a COMPLETED task (SUBMITTED with ``returnImmediately``
for ``submit-poll``, WORKING for ``cancel``, INPUT_REQUIRED for the first turn of
``multi-turn``), GetTask a COMPLETED task, CancelTask a CANCELED one, and a stream the
task, a WORKING update and a COMPLETED update. It serves no card: the generator is pointed
at it with the binding given. Being many times faster than any real server, what the
generator reaches against it is the generator's own ceiling (:mod:`.calibrate`).
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import socket
import sys

__all__ = ("answer_for", "main")

_TASK = b'{"id":"t-1","contextId":"c-1","status":{"state":"%s"}}'


def _state(name: str) -> bytes:
    return _TASK % f"TASK_STATE_{name}".encode()


def _http(body: bytes, content_type: bytes = b"application/json") -> bytes:
    head = b"HTTP/1.1 200 OK\r\ncontent-type: %s\r\ncontent-length: %d\r\n\r\n"
    return head % (content_type, len(body)) + body


def _result(rest: bool, result: bytes) -> bytes:
    return result if rest else b'{"jsonrpc":"2.0","id":1,"result":' + result + b"}"


def _stream(rest: bool) -> bytes:
    events = (
        b'{"task":' + _state("SUBMITTED") + b"}",
        b'{"statusUpdate":{"taskId":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_WORKING"}}}',
        b'{"statusUpdate":{"taskId":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED"}}}',
    )
    body = b"".join(b"data: " + _result(rest, e) + b"\n\n" for e in events)
    return _http(body, b"text/event-stream")


def answer_for(binding: str, workload: str) -> dict[str, bytes]:
    """The fixed answers, by kind of request (``send``, ``answer``, ``get``, ``cancel``,
    ``stream``)."""
    rest = binding == "rest"
    first = {"submit-poll": "SUBMITTED", "cancel": "WORKING", "multi-turn": "INPUT_REQUIRED"}
    send_state = first.get(workload, "COMPLETED")

    def send(state: str) -> bytes:
        return _http(_result(rest, b'{"task":' + _state(state) + b"}"))

    return {
        "send": send(send_state),
        "answer": send("COMPLETED"),
        "get": _http(_result(rest, _state("COMPLETED"))),
        "cancel": _http(_result(rest, _state("CANCELED"))),
        "stream": _stream(rest),
    }


def _kind(head: bytes, body: bytes) -> str:
    line = head.split(b"\r\n", 1)[0]
    if line.startswith(b"GET ") or b'"GetTask"' in body:
        return "get"
    if b":cancel " in line or b'"CancelTask"' in body:
        return "cancel"
    if b"message:stream" in line or b'"SendStreamingMessage"' in body:
        return "stream"
    return "answer" if b'"taskId"' in body else "send"


class _Trivial(asyncio.Protocol):
    def __init__(self, answers: dict[str, bytes]) -> None:
        self._answers = answers
        self._buffer = bytearray()
        self._transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        while (end := buffer.find(b"\r\n\r\n")) >= 0:
            head = bytes(buffer[:end])
            lower = head.lower()
            at = lower.find(b"\r\ncontent-length:")
            length = int(lower[at + 17 :].split(b"\r\n", 1)[0]) if at >= 0 else 0
            if len(buffer) < end + 4 + length:
                return
            body = bytes(buffer[end + 4 : end + 4 + length])
            del buffer[: end + 4 + length]
            assert self._transport is not None
            self._transport.write(self._answers[_kind(head, body)])


async def _serve(host: str, answers: dict[str, bytes]) -> None:
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((host, 0))
    server = await loop.create_server(lambda: _Trivial(answers), sock=sock, backlog=1024)
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    print(f"http://{host}:{sock.getsockname()[1]}", flush=True)
    async with server:
        await stop.wait()


def main(argv: list[str] | None = None) -> int:
    """Serve until stopped."""
    parser = argparse.ArgumentParser(description="a trivial A2A server (calibration)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--binding", choices=("jsonrpc", "rest"), default="jsonrpc")
    parser.add_argument("--workload", default="send")
    args = parser.parse_args(argv)
    asyncio.run(_serve(args.host, answer_for(args.binding, args.workload)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
