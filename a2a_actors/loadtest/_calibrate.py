"""Calibration: a trivial A2A server, and the generator's own ceiling measured against it.

``--calibrate`` (:func:`calibrate`) starts this module as a server in a subprocess,

    python -m a2a_actors.loadtest._calibrate --binding jsonrpc|rest --workload WORKLOAD

measures it with the same workload, connections and processes as the real run, always in
a closed loop (a ceiling is what the generator reaches when it never waits), for at most
3 s, and returns the operations per second reached. When a target's measured rate comes
close to that ceiling, the generator, not the target, may have set the pace
(:func:`~a2a_actors.loadtest._report.warnings`).

The server prints its base URL on stdout, then serves until SIGTERM/SIGINT: a bare
asyncio Protocol that parses just enough HTTP to find each request's end, and just enough
of the request to answer what the workload expects: SendMessage a COMPLETED task
(SUBMITTED with ``returnImmediately`` for ``submit-poll``, WORKING for ``cancel``,
INPUT_REQUIRED for the first turn of ``multi-turn``), GetTask a COMPLETED task, CancelTask
a CANCELED one, and a stream the task, a WORKING update and a COMPLETED update. It serves
no card. No framework: it is many times faster than any real server.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import socket
import subprocess
import sys
from dataclasses import replace
from urllib.parse import urlsplit

from a2a_actors.loadtest._runner import Options, Progress, measure
from a2a_actors.loadtest._target import BenchError, Endpoint

__all__ = ("answer_for", "calibrate", "main")

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


_MAX_WINDOW_S = 3.0


def calibrate(binding: str, options: Options, progress: Progress | None = None) -> float:
    """The operations per second the generator reaches against a trivial server.

    Raises:
        BenchError: The trivial server did not start.
    """
    command = [sys.executable, "-m", "a2a_actors.loadtest._calibrate", "--binding", binding]
    command += ["--workload", options.workload]
    server = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().decode().strip()
        parts = urlsplit(url)
        if not parts.hostname or not parts.port:
            raise BenchError(f"the calibration server did not start: {url!r}")
        endpoint = Endpoint(
            name="trivial",
            url=url + "/",
            binding=binding,
            host=parts.hostname,
            port=parts.port,
            path="" if binding == "rest" else "/",
        )
        load = replace(
            options.load,
            rate=None,
            warmup=min(options.load.warmup, 0.5),
            duration=min(options.load.duration, _MAX_WINDOW_S),
        )
        tally = measure(endpoint, replace(options, load=load), "calibration", progress)
    finally:
        server.terminate()
        try:
            server.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.communicate()
    if tally.failed:
        samples = "; ".join(s for samples in tally.samples.values() for s in samples[:1])
        raise BenchError(f"calibration answers failed validation: {samples}")
    return tally.ok / tally.window_s if tally.window_s else 0.0


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
