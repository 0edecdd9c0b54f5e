"""No client command hangs: ``--timeout`` bounds finding the agent too, and without it
finding the agent and the quick calls have a default bound; past either, the command says
what it waited for and exits 124.

The silent peer is a listening socket nobody accepts from: the kernel completes the TCP
handshake and takes the request, and no answer ever comes. The half-silent one answers the
card and never a call.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from a2a_actors.client._cli import commands as cli
from a2a_actors.client._cli.commands import main
from a2a_actors.client._cli.deadline import TIMED_OUT


@contextmanager
def silent() -> Iterator[str]:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


@contextmanager
def card_only() -> Iterator[str]:
    """Serves a card naming itself, and never answers a POST (until the block ends)."""
    release = threading.Event()
    base: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            card = {
                "name": "mute",
                "description": "answers nothing",
                "version": "1",
                "supportedInterfaces": [
                    {"url": base[0], "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
                ],
                "capabilities": {"streaming": False},
                "defaultInputModes": ["text/plain"],
                "defaultOutputModes": ["text/plain"],
                "skills": [],
            }
            body = json.dumps(card).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            release.wait()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    base.append(f"http://127.0.0.1:{server.server_port}")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield base[0]
    finally:
        release.set()
        server.shutdown()
        server.server_close()
        thread.join()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, float, str]:
    began = time.monotonic()
    status = main(list(argv))
    took = time.monotonic() - began
    return status, took, capsys.readouterr().err


@pytest.mark.parametrize("command", [["card"], ["send", "hi"], ["get", "t1"], ["list"]])
def test_the_timeout_covers_finding_the_agent(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with silent() as url:
        status, took, err = run(capsys, command[0], url, *command[1:], "--timeout", "0.3")
    assert status == TIMED_OUT
    assert took < 5
    assert err.splitlines() == [
        f"a2a-actors {command[0]}: no answer within 0.3 s (--timeout) for finding the agent {url}"
    ]


@pytest.mark.parametrize("command", [["card"], ["get", "t1"], ["send", "hi"]])
def test_finding_the_agent_has_a_default_bound(
    command: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli, "DEFAULT_BOUND", 0.3)
    with silent() as url:
        status, took, err = run(capsys, command[0], url, *command[1:])
    assert status == TIMED_OUT
    assert took < 5
    assert err.splitlines() == [
        f"a2a-actors {command[0]}: no answer within 0.3 s for finding the agent {url} "
        "(--timeout SECONDS waits longer)"
    ]


def test_a_quick_call_has_a_default_bound(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli, "DEFAULT_BOUND", 0.3)
    with card_only() as url:
        status, _, err = run(capsys, "get", url, "t1")
    assert status == TIMED_OUT
    assert err.splitlines() == [
        f"a2a-actors get: no answer within 0.3 s for the answer of {url} "
        "(--timeout SECONDS waits longer)"
    ]


def test_send_says_what_it_waits_for_and_the_timeout_bounds_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with card_only() as url:
        status, took, err = run(capsys, "send", url, "hi", "--timeout", "0.5")
    assert status == TIMED_OUT
    assert took < 5
    assert err.splitlines() == [
        "waiting for the task (the agent does not stream; --timeout bounds the wait)",
        "a2a-actors send: no answer within 0.5 s, before the agent named a task",
        f"  (it does not stream: a2a-actors list {url} shows its tasks)",
    ]
