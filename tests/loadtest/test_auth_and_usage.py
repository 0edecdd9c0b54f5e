"""Credentials like the other client commands, and clear errors for what cannot be run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio
import trio.lowlevel

from a2a_actors.loadtest._engine import Load
from a2a_actors.loadtest._report import ChartError, write_chart
from a2a_actors.loadtest._requests import load_message
from a2a_actors.loadtest._runner import Options
from a2a_actors.loadtest._target import UsageError
from a2a_actors.server import ServerConfig
from examples.echo import agent as echo

from .helpers import QUICK, TIMEOUT, Request, bench, raw_server, rpc_result, served, task


async def _completed(request: Request) -> bytes:
    return rpc_result({"task": task("COMPLETED")})


AUTH = ServerConfig(api_keys={"k-1": "alice"}, bearer_tokens={"t-1": "bob"})


@pytest.mark.parametrize(
    ("credentials", "ok"),
    [
        pytest.param((), False, id="none"),
        pytest.param(("--api-key", "k-1"), True, id="api-key"),
        pytest.param(("--api-key", "wrong"), False, id="wrong-key"),
        pytest.param(("--bearer-token", "t-1"), True, id="bearer"),
        pytest.param(("--header", "X-API-Key: k-1"), True, id="header"),
    ],
)
async def test_credentials(credentials: tuple[str, ...], ok: bool) -> None:
    with trio.fail_after(TIMEOUT):
        async with served(echo, AUTH) as url:
            run = await bench(url, "--json", *QUICK, *credentials)
    result = run.only()
    if ok:
        assert run.status == 0, run
        assert result["errors"] == 0
        assert result["ops"] > 0
    else:
        assert run.status == 1
        assert result["ops"] == 0
        assert list(result["errors_by_kind"]) == ["http-401"]


async def test_headers_reach_the_server_on_every_request() -> None:
    seen: set[str] = set()

    async def record(request: Request) -> bytes:
        seen.add(request.line)
        return rpc_result({"task": task("COMPLETED")})

    with trio.fail_after(TIMEOUT):
        async with raw_server(record) as url:
            run = await bench(
                url, "--binding", "jsonrpc", "--header", "X-Trace: 7", "--json", *QUICK
            )
    assert run.status == 0, run
    assert seen == {"POST / HTTP/1.1"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--binding", "grpc"),
            "a2a-actors bench: --binding grpc: a2a-actors bench drives the JSON",
        ),
        (("--header", "no colon"), "a2a-actors bench: --header 'no colon': expected 'Name: value'"),
        (("--warmup", "-1"), "a2a-actors bench: --warmup must be 0 or more"),
    ],
)
async def test_bad_arguments_are_one_clear_line(args: tuple[str, ...], message: str) -> None:
    with trio.fail_after(TIMEOUT):
        async with served(echo) as url:
            run = await bench(url, *args)
    assert run.status == 2
    assert run.stderr.startswith(message), run.stderr
    assert run.stderr.count("\n") == 1
    assert run.stdout == ""


async def test_targets_that_cannot_be_measured() -> None:
    with trio.fail_after(TIMEOUT):
        bad = await bench("ftp://example.invalid/")
        assert bad.status == 2
        assert bad.stderr == (
            "a2a-actors bench: target 'ftp://example.invalid/': not an http:// or https:// URL "
            "(or NAME=URL)\n"
        )
        async with raw_server(_completed) as url:
            no_card = await bench(url)
        assert no_card.status == 1
        assert "no agent card found; pass --binding jsonrpc|rest" in no_card.stderr
        async with served(echo) as url:
            same = await bench(url, url)
        assert same.status == 2
        assert "two targets have the same name" in same.stderr
        nobody = await bench("http://127.0.0.1:1/", "--binding", "jsonrpc", *QUICK)
        assert nobody.status == 1
        assert nobody.stderr.startswith("a2a-actors bench: cannot reach http://127.0.0.1:1/: ")


async def test_stream_workload_needs_a_streaming_card() -> None:
    with trio.fail_after(TIMEOUT):
        async with served(echo, ServerConfig(streaming=False)) as url:
            run = await bench(url, "--workload", "stream", *QUICK)
    assert run.status == 1
    assert "its card does not declare streaming" in run.stderr


def test_chart_without_matplotlib_is_a_one_line_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    options = Options("send", load_message("hi", None), Load(1, 1, None, 0, 1, 1))
    with pytest.raises(
        ChartError, match=r"^--chart needs the bench extra: pip install 'a2a-actors\[bench\]'$"
    ):
        write_chart(str(Path("never.png")), [], options)


def test_a_message_file_that_is_not_a_message(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text('{"parts": "nope"}')
    with pytest.raises(UsageError, match="not an A2A Message"):
        load_message(None, str(path))
