"""Each workload against our example agents, over both bindings: every answer validates."""

from __future__ import annotations

import pytest
import trio

from examples.echo import agent as echo
from examples.multi_turn import agent as multi_turn
from examples.sleeper import agent as sleeper
from examples.streaming import agent as streaming

from .helpers import QUICK, TIMEOUT, bench, served

CASES = [
    pytest.param("send", echo, (), id="send-echo"),
    pytest.param("stream", streaming, ("--text", "the quick brown fox"), id="stream-streaming"),
    pytest.param("submit-poll", echo, (), id="submit-poll-echo"),
    pytest.param("multi-turn", multi_turn, ("--text", "Ada"), id="multi-turn"),
    pytest.param("cancel", sleeper, ("--text", "forever"), id="cancel-sleeper"),
]


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
@pytest.mark.parametrize(("workload", "agent", "extra"), CASES)
async def test_workload_runs_clean(
    workload: str, agent: object, extra: tuple[str, ...], binding: str
) -> None:
    with trio.fail_after(TIMEOUT):
        async with served(agent) as url:
            run = await bench(
                url, "--workload", workload, "--binding", binding, "--json", *QUICK, *extra
            )
    assert run.status == 0, run
    result = run.only()
    assert result["workload"] == workload
    assert result["binding"] == binding
    assert result["errors"] == 0, result["error_samples"]
    assert result["ops"] > 0
    assert result["histogram"]["count"] == result["ops"]
    assert result["latency_ms"]["p50"] <= result["latency_ms"]["p99"] <= result["latency_ms"]["max"]
    if workload == "stream":
        assert result["first_event_histogram"]["count"] == result["ops"]
        assert result["first_event_ms"]["p50"] <= result["latency_ms"]["max"]
    if workload == "cancel":
        # the cancel's own latency is part of the whole operation's
        assert result["cancel_histogram"]["count"] == result["ops"]
        assert result["cancel_ms"]["max"] <= result["latency_ms"]["max"]
    if workload in ("submit-poll", "multi-turn", "cancel"):
        assert result["requests"] > result["ops"]  # several exchanges per operation
    else:
        assert result["requests"] == result["ops"]


async def test_card_discovery_picks_the_binding_and_the_table_shows_the_target() -> None:
    with trio.fail_after(TIMEOUT):
        async with served(echo) as url:
            run = await bench(f"ours={url}", *QUICK)
    assert run.status == 0, run
    lines = run.stdout.splitlines()
    assert lines[0].startswith("send, concurrency 4, 4 connections")
    assert lines[1].split()[:2] == ["target", "ops/s"]
    assert lines[2].startswith("ours ")
    assert "\r" not in run.stderr  # no progress bar when stderr is not a terminal


async def test_message_file_is_the_payload(tmp_path: pytest.TempPathFactory) -> None:
    message = tmp_path / "message.json"  # type: ignore[operator]
    message.write_text('{"parts": [{"text": "from a file"}, {"data": {"k": 1}}]}')
    with trio.fail_after(TIMEOUT):
        async with served(echo) as url:
            run = await bench(url, "--message-file", str(message), "--json", *QUICK)
    assert run.status == 0, run
    assert run.only()["errors"] == 0
