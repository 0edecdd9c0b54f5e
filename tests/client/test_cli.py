"""The client CLI against a served agent: every subcommand, human and ``--json`` output.

``main(argv)`` runs its own event loop, so these are plain synchronous tests; the agent runs
in its own thread.
"""

from __future__ import annotations

import argparse
import io
import socket
import sys
import threading

import pytest

from a2a_actors.client._cli.commands import add_client_commands, main
from a2a_actors.protocol import codec
from a2a_actors.protocol._card import AgentCard
from a2a_actors.protocol._models import StreamResponse, Task, TaskState
from a2a_actors.protocol._requests import ListTasksResponse, SendMessageResponse
from tests.client.conftest import ServedScenario
from tests.client.scenarios import MULTI_TURN_QUESTION, STREAM_CHUNKS, TIMEOUT


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def json_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line]


def test_card(agent_server: ServedScenario, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "card", agent_server.base_url)
    assert status == 0
    assert agent_server.name in out
    assert "JSONRPC 1.0" in out
    assert "(selected)" in out
    assert "capabilities: streaming" in out

    status, out, _ = run(capsys, "card", agent_server.base_url, "--json")
    assert status == 0
    (line,) = json_lines(out)
    card = codec.decode(line, AgentCard)
    assert card.capabilities.streaming


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_send(
    agent_server: ServedScenario, capsys: pytest.CaptureFixture[str], binding: str
) -> None:
    url = agent_server.base_url
    status, out, _ = run(capsys, "send", url, "hello cli", "--binding", binding)
    assert status == 0
    first, text = out.splitlines()
    assert first.startswith("task ")
    assert first.endswith(": completed")
    assert text == "hello cli"

    status, out, _ = run(capsys, "send", url, "hello json", "--json", "--binding", binding)
    assert status == 0
    (line,) = json_lines(out)
    task = codec.decode(line, SendMessageResponse).task
    assert task is not None
    assert task.status.state is TaskState.COMPLETED

    status, out, _ = run(capsys, "send", url, "message back", "--json")
    reply = codec.decode(json_lines(out)[0], SendMessageResponse).message
    assert reply is not None
    assert reply.text == "message back"


def test_send_multi_turn(agent_server: ServedScenario, capsys: pytest.CaptureFixture[str]) -> None:
    url = agent_server.base_url
    status, out, _ = run(capsys, "send", url, "input please", "--json")
    task = codec.decode(json_lines(out)[0], SendMessageResponse).task
    assert task is not None
    assert task.status.state is TaskState.INPUT_REQUIRED

    status, out, _ = run(
        capsys, "send", url, "Ada", "--task-id", task.id, "--context-id", task.context_id
    )
    assert status == 0
    assert out.splitlines() == [f"task {task.id} (context {task.context_id}): completed", "Ada"]


def test_send_stream(agent_server: ServedScenario, capsys: pytest.CaptureFixture[str]) -> None:
    url = agent_server.base_url
    status, out, _ = run(capsys, "send", url, "stream please", "--stream")
    assert status == 0
    lines = out.splitlines()
    assert lines[0].startswith("task ")
    assert "".join(STREAM_CHUNKS) in lines  # the chunks, printed as they came, on one line
    assert lines[-1] == "[completed]"

    status, out, _ = run(capsys, "send", url, "stream please", "--stream", "--json")
    assert status == 0
    events = [codec.decode(line, StreamResponse) for line in json_lines(out)]
    assert events[0].task is not None
    chunks = [e.artifact_update for e in events if e.artifact_update is not None]
    assert [c.artifact.parts[0].text for c in chunks] == list(STREAM_CHUNKS)
    last = events[-1].status_update
    assert last is not None
    assert last.status.state is TaskState.COMPLETED

    status, out, _ = run(capsys, "send", url, "input please", "--stream")
    assert out.splitlines()[-1] == f"[input-required: {MULTI_TURN_QUESTION}]"


def test_get_list_cancel(agent_server: ServedScenario, capsys: pytest.CaptureFixture[str]) -> None:
    url = agent_server.base_url
    status, out, _ = run(capsys, "send", url, "sleep", "--return-immediately", "--json")
    task = codec.decode(json_lines(out)[0], SendMessageResponse).task
    assert task is not None

    status, out, _ = run(capsys, "get", url, task.id)
    assert status == 0
    assert out.startswith(f"task {task.id} (context {task.context_id}): ")

    status, out, _ = run(capsys, "list", url, "--context-id", task.context_id, "--json")
    assert status == 0
    page = codec.decode(json_lines(out)[0], ListTasksResponse)
    assert [t.id for t in page.tasks] == [task.id]

    status, out, _ = run(capsys, "list", url, "--context-id", task.context_id)
    assert out.splitlines()[0].startswith(task.id)
    assert out.splitlines()[-1] == "(1 of 1)"

    status, out, _ = run(capsys, "cancel", url, task.id, "--json")
    assert status == 0
    assert codec.decode(json_lines(out)[0], Task).status.state is TaskState.CANCELED

    status, out, _ = run(capsys, "get", url, task.id, "--json")
    assert codec.decode(json_lines(out)[0], Task).status.state is TaskState.CANCELED


def test_errors(agent_server: ServedScenario, capsys: pytest.CaptureFixture[str]) -> None:
    url = agent_server.base_url
    status, out, err = run(capsys, "get", url, "no-such-task")
    assert status == 1
    assert out == ""
    assert err.startswith("a2a-actors get: TaskNotFoundError (-32001): Task ")
    assert err.endswith("not found\n")

    status, _, err = run(capsys, "cancel", url, "no-such-task", "--json")
    assert status == 1
    assert err.startswith("a2a-actors cancel: TaskNotFoundError (-32001)")

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    status, _, err = run(capsys, "card", f"http://127.0.0.1:{closed}")
    assert status == 1
    assert err.startswith("a2a-actors card: A2AConnectionError: ")

    status, _, err = run(capsys, "list", url, "--status", "bogus")
    assert status == 2
    assert "argument --status: unknown task state 'bogus'; one of: submitted, " in err

    assert main(["send"]) == 2  # usage error
    assert "usage:" in capsys.readouterr().err


class _Recorder(io.StringIO):
    """A stdout that signals once a line starting with ``prefix`` was written."""

    def __init__(self, prefix: str) -> None:
        super().__init__()
        self.prefix = prefix
        self.seen = threading.Event()

    def write(self, text: str) -> int:
        count = super().write(text)
        if any(line.startswith(self.prefix) for line in self.getvalue().splitlines()):
            self.seen.set()
        return count


def test_subscribe(
    agent_server: ServedScenario,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = agent_server.base_url
    _, out, _ = run(capsys, "send", url, "sleep", "--return-immediately", "--json")
    task = codec.decode(json_lines(out)[0], SendMessageResponse).task
    assert task is not None

    recorder = _Recorder(f"task {task.id}")
    monkeypatch.setattr(sys, "stdout", recorder)
    statuses: list[int] = []
    follower = threading.Thread(target=lambda: statuses.append(main(["subscribe", url, task.id])))
    follower.start()
    try:
        assert recorder.seen.wait(TIMEOUT), "the subscription printed no snapshot"
        assert main(["cancel", url, task.id]) == 0
    finally:
        follower.join(TIMEOUT)
    assert not follower.is_alive()
    assert statuses == [0]
    lines = recorder.getvalue().splitlines()
    assert lines[0].startswith(f"task {task.id} (context {task.context_id}): ")
    assert "[canceled]" in lines


def test_add_client_commands_wires_into_another_parser() -> None:
    parser = argparse.ArgumentParser(prog="a2a-actors")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("serve")
    add_client_commands(sub)
    args = parser.parse_args(["send", "http://x", "hi", "--stream", "--api-key", "k"])
    assert args.command == "send"
    assert args.stream
    assert args.api_key == "k"
    assert callable(args.handler)
