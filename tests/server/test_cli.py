"""``a2a-actors serve`` as a subprocess: the URL line, both conformance profiles, signals."""

from __future__ import annotations

import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from anyio.abc import Process

from a2a_actors.cli import build_parser, main
from a2a_actors.server._cli.serve import GC_THRESHOLD

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
STARTUP = 30.0
GUARD = 120.0  # the whole test, subprocess start-up included
V1 = {"A2A-Version": "1.0", "Content-Type": "application/json"}


@pytest.fixture
def anyio_backend() -> str:
    return "trio"  # the harness side; the served backend is the --backend flag


@asynccontextmanager
async def cli_server(*args: str, stop: signal.Signals = signal.SIGTERM) -> AsyncIterator[str]:
    """Run ``python -m a2a_actors.cli serve ARGS``; yield its URL line; stop it by its PID."""
    command = [sys.executable, "-m", "a2a_actors.cli", "serve", *args]
    async with await anyio.open_process(command, cwd=ROOT) as process:
        try:
            url = await _first_line(process)
            yield url
            process.send_signal(stop)
            with anyio.fail_after(STARTUP):
                code = await process.wait()
            assert code == 0
            assert process.stdout is not None
            rest = b"".join([chunk async for chunk in process.stdout])
            assert rest == b"", "the URL must be the only line on stdout"
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()


async def _first_line(process: Process) -> str:
    assert process.stdout is not None
    data = b""
    with anyio.fail_after(STARTUP):
        while b"\n" not in data:
            try:
                data += await process.stdout.receive()
            except anyio.EndOfStream:
                assert process.stderr is not None
                errors = b"".join([chunk async for chunk in process.stderr])
                raise AssertionError(f"the server exited: {errors.decode()}") from None
    line, _, rest = data.partition(b"\n")
    assert rest == b""
    return line.decode()


async def _rpc(http: httpx.AsyncClient, url: str, method: str, params: Any, **headers: str) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    response = await http.post(f"{url}/", json=body, headers={**V1, **headers})
    return response.json()


def _send(message_id: str, text: str = "hi") -> dict[str, Any]:
    return {"message": {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}}


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
async def test_conformance_full_profile(backend: str) -> None:
    with anyio.fail_after(GUARD):
        async with (
            cli_server("examples.conformance:agent", "--port", "0", "--backend", backend) as url,
            httpx.AsyncClient(timeout=STARTUP) as http,
        ):
            assert url.startswith("http://127.0.0.1:")
            response = await http.get(f"{url}/.well-known/agent-card.json")
            assert response.status_code == 200
            assert {"etag", "last-modified", "cache-control"} <= set(response.headers)
            card = response.json()
            capabilities = card["capabilities"]
            assert capabilities["streaming"] is True
            assert capabilities["pushNotifications"] is True
            assert capabilities["extendedAgentCard"] is True
            assert capabilities["extensions"] == [
                {
                    "uri": "urn:a2a:tck:required-extension",
                    "description": "Required by the TCK (CORE-CAP-004)",
                    "required": True,
                }
            ]
            assert "url" not in card  # a pure 1.0 card

            answer = await _rpc(http, url, "SendMessage", _send("tck-complete-task-cli"))
            status = answer["result"]["task"]["status"]
            assert status["state"] == "TASK_STATE_COMPLETED"
            assert status["message"]["parts"] == [{"text": "Hello from TCK"}]

            refused = await _rpc(http, url, "SendMessage", _send("tck-cap-ext-004-jsonrpc"))
            assert refused["error"]["code"] == -32008
            accepted = await _rpc(
                http,
                url,
                "SendMessage",
                _send("tck-cap-ext-004-jsonrpc"),
                **{"A2A-Extensions": "urn:a2a:tck:required-extension"},
            )
            assert accepted["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            card = await _rpc(http, url, "GetExtendedAgentCard", {})  # no credentials needed
            assert [s["id"] for s in card["result"]["skills"]] == ["tck", "tck-extended"]


async def test_conformance_minimal_profile() -> None:
    with anyio.fail_after(GUARD):
        async with (
            cli_server("examples.conformance:minimal", stop=signal.SIGINT) as url,
            httpx.AsyncClient(timeout=STARTUP) as http,
        ):
            card = (await http.get(f"{url}/.well-known/agent-card.json")).json()
            assert card["capabilities"] == {
                "streaming": False,
                "pushNotifications": False,
                "extendedAgentCard": False,
            }
            answer = await _rpc(http, url, "SendMessage", _send("tck-message-response-1"))
            assert answer["result"]["message"]["parts"] == [{"text": "Direct message response"}]
            task = (await _rpc(http, url, "SendMessage", _send("tck-send-003")))["result"]["task"]
            assert task["status"]["state"] == "TASK_STATE_COMPLETED"
            for method, params, code in (
                ("SendStreamingMessage", _send("tck-stream-001"), -32004),
                (
                    "CreateTaskPushNotificationConfig",
                    {"taskId": task["id"], "url": "https://x"},
                    -32003,
                ),
                ("GetExtendedAgentCard", {}, -32004),
            ):
                assert (await _rpc(http, url, method, params))["error"]["code"] == code
            response = await http.post(
                f"{url}/rest/message:stream", json=_send("tck-stream-002"), headers=V1
            )
            assert response.status_code == 400


async def test_api_key_flag() -> None:
    with anyio.fail_after(GUARD):
        async with (
            cli_server("examples.echo:agent", "--api-key", "s3cret", "--max-tasks", "5") as url,
            httpx.AsyncClient(timeout=STARTUP) as http,
        ):
            denied = await http.post(f"{url}/", json={}, headers=V1)
            assert denied.status_code == 401
            answer = await _rpc(
                http, url, "SendMessage", _send("m1", "hello"), **{"X-API-Key": "s3cret"}
            )
            assert answer["result"]["task"]["artifacts"][0]["parts"] == [{"text": "hello"}]
            card = (await http.get(f"{url}/.well-known/agent-card.json")).json()
            assert "apiKey" in card["securitySchemes"]


async def test_serve_tunes_the_garbage_collector() -> None:
    # Objects alive once the server is up (modules, the app) are moved out of the GC's
    # sight, so full collections under load do not rescan them, and the youngest
    # generation is collected less often (benchmarks/README.md).
    with anyio.fail_after(GUARD):
        async with (
            cli_server("tests.server.gc_probe:agent") as url,
            httpx.AsyncClient(timeout=STARTUP) as http,
        ):
            answer = await _rpc(http, url, "SendMessage", _send("m1"))
            frozen, threshold = answer["result"]["message"]["parts"][0]["text"].split()
            assert int(frozen) > 1000
            assert int(threshold) == GC_THRESHOLD


async def test_bad_targets_exit_2() -> None:
    with anyio.fail_after(GUARD):
        for target in ("examples.echo", "examples.nope:agent", "examples.echo:nope"):
            result = await anyio.run_process(
                [sys.executable, "-m", "a2a_actors.cli", "serve", target], cwd=ROOT, check=False
            )
            assert result.returncode == 2, target
            assert result.stdout == b""
            assert b"a2a-actors serve:" in result.stderr


async def test_port_in_use_exits_1() -> None:
    with anyio.fail_after(GUARD):
        async with cli_server("examples.echo:agent") as url:
            port = url.rsplit(":", 1)[1]
            result = await anyio.run_process(
                [
                    sys.executable,
                    "-m",
                    "a2a_actors.cli",
                    "serve",
                    "examples.echo:agent",
                    "--port",
                    port,
                ],
                cwd=ROOT,
                check=False,
            )
            assert result.returncode == 1
            assert result.stdout == b""
            assert b"cannot listen" in result.stderr


def test_parser_is_a_subcommand_registry(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    args = parser.parse_args(["serve", "m:a", "--bearer-token", "t", "--allow-private-push"])
    assert (args.command, args.target, args.bearer_token, args.allow_private_push) == (
        "serve",
        "m:a",
        "t",
        True,
    )
    with pytest.raises(SystemExit):
        parser.parse_args(["serve", "m:a", "--api-key", "k", "--bearer-token", "t"])
    with pytest.raises(SystemExit):
        main([])
    capsys.readouterr()
