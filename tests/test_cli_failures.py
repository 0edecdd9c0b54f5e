"""What the commands say when a call cannot be made as asked, each in one line of ours:
a reader that went away (``list | head``), ``--binding`` naming a binding the agent does not
offer, ``https://`` to a plain-HTTP server, a flag whose extra is not installed.

The agent runs on a real server (127.0.0.1, port 0) in a background thread; the CLI runs
in-process through ``main(argv)``, or as a subprocess where its stdout or its imports are
what the test is about.
"""

from __future__ import annotations

import os
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import partial
from pathlib import Path

import anyio
import pytest
from anyio.abc import SocketAttribute, SocketStream
from anyio.from_thread import start_blocking_portal
from anyio.streams.tls import TLSListener, TLSStream

from a2a_actors.cli import BROKEN_PIPE, main
from a2a_actors.runtime import Agent, TaskContext
from a2a_actors.server import serve

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 30.0
#: ``serve`` with JWT validation (every partner flag given: only the extra is missing).
JWKS_FLAGS = [
    "serve",
    "examples.echo:agent",
    "--jwks",
    "k.json",
    "--jwt-issuer",
    "i",
    "--jwt-audience",
    "a",
]


async def _echo(ctx: TaskContext) -> str:
    return ctx.text


echo = Agent(handler=_echo, name="echo")


@asynccontextmanager
async def _serving(target: object) -> AsyncIterator[str]:
    async with anyio.create_task_group() as tg:
        with anyio.fail_after(TIMEOUT):
            url: str = await tg.start(partial(serve, target))
        yield url
        tg.cancel_scope.cancel()


@contextmanager
def served(target: object) -> Iterator[str]:
    """Serve ``target`` (plain HTTP) from a background thread; yields its base URL."""
    with (
        start_blocking_portal(backend="trio") as portal,
        portal.wrap_async_context_manager(_serving(target)) as url,
    ):
        yield url


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with served(echo) as base:
        yield base


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def command(*argv: str, blocked: str = "") -> list[str]:
    """``a2a-actors ARGV`` in a fresh interpreter; ``blocked``: a package it cannot import."""
    block = f"sys.modules[{blocked!r}] = None; " if blocked else ""
    code = f"import sys; {block}from a2a_actors.cli import main; sys.exit(main())"
    return [sys.executable, "-c", code, *argv]


# -- a reader that went away -----------------------------------------------------------------


@pytest.mark.parametrize("argv", [["list"], ["card"], ["send", "hello", "--return-immediately"]])
def test_a_closed_stdout_ends_the_command_quietly(url: str, argv: list[str]) -> None:
    reader, writer = os.pipe()
    os.close(reader)  # the reader is gone before the command writes (`... | head -0`)
    try:
        done = subprocess.run(
            command(argv[0], url, *argv[1:]),
            cwd=ROOT,
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(writer)
    assert done.stderr == ""  # no traceback, no "Exception ignored", no error line
    assert done.returncode == BROKEN_PIPE


# -- --binding the card does not offer -------------------------------------------------------


def test_binding_grpc_to_an_agent_without_grpc_names_what_it_offers(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _, listed, _ = run(capsys, "list", url)
    status, out, err = run(capsys, "send", url, "hi", "--binding", "grpc")
    assert status == 2
    assert out == ""
    assert err == (
        "a2a-actors send: the agent's card offers no gRPC interface "
        "(it offers JSONRPC 1.0, HTTP+JSON 1.0, JSONRPC 0.3)\n"
    )
    status, out, _ = run(capsys, "list", url)  # nothing was sent
    assert (status, out) == (0, listed)
    status, out, _ = run(capsys, "send", url, "hi", "--binding", "rest")  # one it offers
    assert (status, out.splitlines()[1:]) == (0, ["hi"])


# -- TLS --------------------------------------------------------------------------------------


def test_https_to_a_plain_http_server_names_the_tls_failure(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    where = url.removeprefix("http://").rstrip("/")
    for argv in (
        ["card", url.replace("http://", "https://")],
        ["send", url.replace("http", "https"), "hi"],
    ):
        status, out, err = run(capsys, *argv)
        assert status == 1
        assert out == ""
        assert err == (
            f"a2a-actors {argv[0]}: TLS handshake with {where} failed: "
            "the server does not speak TLS (try http://)\n"
        )


@asynccontextmanager
async def _untrusted_tls() -> AsyncIterator[int]:
    """A TLS port whose certificate no one trusts (a fresh CA's); yields the port."""
    trustme = pytest.importorskip("trustme")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    trustme.CA().issue_cert("127.0.0.1").configure_cert(context)
    tcp = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = tcp.extra(SocketAttribute.local_port)

    async def close(stream: TLSStream | SocketStream) -> None:
        await stream.aclose()

    async with TLSListener(tcp, context) as listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, close)
        yield port
        tg.cancel_scope.cancel()


def test_an_untrusted_certificate_is_named_as_such(capsys: pytest.CaptureFixture[str]) -> None:
    with (
        start_blocking_portal(backend="trio") as portal,
        portal.wrap_async_context_manager(_untrusted_tls()) as port,
    ):
        status, out, err = run(capsys, "card", f"https://127.0.0.1:{port}")
    assert (status, out) == (1, "")
    assert err.startswith(
        f"a2a-actors card: TLS handshake with 127.0.0.1:{port} failed: certificate verify failed: "
    ), err
    assert err.count("\n") == 1


# -- missing extras: the same words for every flag --------------------------------------------


@pytest.mark.parametrize(
    ("blocked", "argv", "line"),
    [
        (
            "prometheus_client",
            ["serve", "examples.echo:agent", "--metrics"],
            "a2a-actors serve: --metrics needs the metrics extra: "
            "pip install 'a2a-actors[metrics]'",
        ),
        (
            "prometheus_client",
            ["serve", "examples.echo:agent", "--metrics-public"],
            "a2a-actors serve: --metrics-public needs the metrics extra: "
            "pip install 'a2a-actors[metrics]'",
        ),
        (
            "grpc",
            ["serve", "examples.echo:agent", "--grpc-port", "0"],
            "a2a-actors serve: --grpc-port needs the grpc extra: pip install 'a2a-actors[grpc]'",
        ),
        (
            "nats",
            ["serve", "examples.echo:agent", "--cluster", "nats://127.0.0.1:1"],
            "a2a-actors serve: --cluster needs the cluster extra: "
            "pip install 'a2a-actors[cluster]'",
        ),
        (
            "nats",
            ["serve", "examples.echo:agent", "--register", "nats://127.0.0.1:1"],
            "a2a-actors serve: --register needs the cluster extra: "
            "pip install 'a2a-actors[cluster]'",
        ),
        (
            "nats",
            ["serve", "examples.echo:agent", "--workers", "2"],
            "a2a-actors serve: --workers needs the cluster extra: "
            "pip install 'a2a-actors[cluster]'",
        ),
        (
            "jwt",
            JWKS_FLAGS,
            "a2a-actors serve: --jwks needs the jwt extra: pip install 'a2a-actors[jwt]'",
        ),
        (
            "rfc8785",
            ["serve", "examples.echo:agent", "--sign-card", "k.pem", "--sign-kid", "k"],
            "a2a-actors serve: --sign-card needs the signing extra: "
            "pip install 'a2a-actors[signing]'",
        ),
        (
            "grpc",
            ["send", "grpc://127.0.0.1:1", "hi"],
            "a2a-actors send: grpc://127.0.0.1:1 needs the grpc extra: "
            "pip install 'a2a-actors[grpc]'",
        ),
        (
            "nats",
            ["agents", "nats://127.0.0.1:1"],
            "a2a-actors agents: a NATS registry needs the cluster extra: "
            "pip install 'a2a-actors[cluster]'",
        ),
    ],
)
def test_a_missing_extra_is_one_line_and_status_2(blocked: str, argv: list[str], line: str) -> None:
    done = subprocess.run(
        command(*argv, blocked=blocked),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (2, "", line + "\n")
