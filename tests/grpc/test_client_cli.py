"""The client CLI over gRPC: ``--binding jsonrpc|rest|grpc`` and ``grpc://`` endpoints.

Against the official SDK's gRPC server (no HTTP card there: the agent is named
``grpc://127.0.0.1:PORT``) and the SDK's HTTP server (``--binding`` picks the interface of
its card). ``main(argv)`` runs its own event loop (trio), so these are synchronous tests.
A missing ``grpc`` extra is simulated in a fresh interpreter.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator

import msgspec
import pytest

from a2a_actors.client._cli.commands import main
from a2a_actors.protocol import codec
from a2a_actors.protocol._models import StreamResponse, Task, TaskState
from a2a_actors.protocol._requests import ListTasksResponse, SendMessageResponse
from tests.client.scenarios import STREAM_CHUNKS, TIMEOUT
from tests.grpc.grpc_servers import FakeService, GrpcServer
from tests.interop.sdk_server import SdkServer, run_sdk_server


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line]


@pytest.fixture(scope="module")
def sdk_http() -> Iterator[SdkServer]:
    with run_sdk_server() as server:
        yield server


def test_send_and_stream_to_a_grpc_endpoint(
    sdk_grpc: GrpcServer, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"grpc://{sdk_grpc.target}"
    status, out, _ = run(capsys, "send", url, "hello grpc")
    assert status == 0
    first, text = out.splitlines()
    assert first.startswith("task ")
    assert first.endswith(": completed")
    assert text == "hello grpc"

    status, out, _ = run(capsys, "send", url, "message back", "--json", "--binding", "grpc")
    assert status == 0
    reply = codec.decode(lines(out)[0], SendMessageResponse).message
    assert reply is not None
    assert reply.text == "message back"

    status, out, _ = run(capsys, "send", url, "stream please", "--stream", "--json")
    assert status == 0
    events = [codec.decode(line, StreamResponse) for line in lines(out)]
    chunks = [e.artifact_update for e in events if e.artifact_update is not None]
    assert [c.artifact.parts[0].text for c in chunks] == list(STREAM_CHUNKS)
    last = events[-1].status_update
    assert last is not None
    assert last.status.state is TaskState.COMPLETED


def test_get_list_subscribe_cancel_over_grpc(
    sdk_grpc: GrpcServer, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"grpc://{sdk_grpc.target}"
    _, out, _ = run(capsys, "send", url, "sleep", "--return-immediately", "--json")
    task = codec.decode(lines(out)[0], SendMessageResponse).task
    assert task is not None

    status, out, _ = run(capsys, "get", url, task.id)
    assert status == 0
    assert out.startswith(f"task {task.id} (context {task.context_id}): ")

    status, out, _ = run(capsys, "list", url, "--context-id", task.context_id, "--json")
    assert status == 0
    page = codec.decode(lines(out)[0], ListTasksResponse)
    assert [t.id for t in page.tasks] == [task.id]

    # subscribe in a thread (it blocks until the task ends), cancel from here
    statuses: list[int] = []
    follower = threading.Thread(
        target=lambda: statuses.append(main(["subscribe", url, task.id, "--json"]))
    )
    follower.start()
    try:
        status = main(["cancel", url, task.id, "--json"])
    finally:
        follower.join(TIMEOUT)
    out, _ = capsys.readouterr()
    assert status == 0
    assert statuses == [0]
    # stdout holds the cancel's Task and the follower's StreamResponses, interleaved
    printed = [msgspec.json.decode(line) for line in lines(out)]
    (canceled,) = [codec.convert(obj, Task) for obj in printed if "id" in obj]
    assert canceled.status.state is TaskState.CANCELED
    followed = [codec.convert(obj, StreamResponse) for obj in printed if "id" not in obj]
    final = followed[-1].status_update or followed[-1].task
    assert final is not None
    assert final.status.state is TaskState.CANCELED

    status, out, err = run(capsys, "get", url, "no-such-task")
    assert status == 1
    assert err.startswith("a2a-actors get: TaskNotFoundError (-32001): ")


@pytest.mark.parametrize(
    ("flag", "selected"), [("jsonrpc", "JSONRPC"), ("rest", "HTTP+JSON"), ("REST", "HTTP+JSON")]
)
def test_binding_picks_the_interface_of_the_card(
    sdk_http: SdkServer, capsys: pytest.CaptureFixture[str], flag: str, selected: str
) -> None:
    status, out, _ = run(capsys, "card", sdk_http.base_url, "--binding", flag)
    assert status == 0
    chosen = [line for line in out.splitlines() if line.endswith("(selected)")]
    assert len(chosen) == 1
    assert chosen[0].split()[0] == selected
    status, out, _ = run(capsys, "send", sdk_http.base_url, "hi", "--binding", flag)
    assert status == 0
    assert out.splitlines()[-1] == "hi"


def test_bad_input_is_refused_before_anything_is_sent(
    sdk_grpc: GrpcServer, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"grpc://{sdk_grpc.target}"
    status, _, err = run(capsys, "send", url, "hi", "--binding", "soap")
    assert status == 2
    assert "unknown binding 'soap'; one of: jsonrpc, rest, grpc" in err

    status, _, err = run(capsys, "send", url, "hi", "--binding", "rest")
    assert status == 2
    assert err == (
        f"a2a-actors send: {url} is a gRPC endpoint: --binding HTTP+JSON cannot reach it\n"
    )

    status, _, err = run(capsys, "send", "grpc://127.0.0.1", "hi")  # no port
    assert status == 2
    assert "expected the agent's base URL" in err

    status, _, err = run(capsys, "card", url)
    assert status == 2
    assert "has no card to fetch" in err


def test_an_authentication_failure_says_what_to_pass(
    fake_grpc: tuple[GrpcServer, FakeService], capsys: pytest.CaptureFixture[str]
) -> None:
    server, _ = fake_grpc
    status, _, err = run(capsys, "send", f"grpc://{server.target}", "status UNAUTHENTICATED")
    assert status == 1
    assert err.splitlines() == [
        "a2a-actors send: UnauthenticatedError (-32051): plain status UNAUTHENTICATED",
        "  this agent needs credentials: pass --api-key KEY or --bearer-token TOKEN",
    ]


_NO_GRPC = textwrap.dedent(
    """
    import sys
    sys.modules["grpc"] = None  # as if the grpc extra were not installed
    import a2a_actors, a2a_actors.client
    from a2a_actors.client import resolve_interface
    from a2a_actors.client._cli.commands import main
    from a2a_actors.protocol._card import AgentCapabilities, AgentCard, AgentInterface
    card = AgentCard(
        name="g", description="", version="1", capabilities=AgentCapabilities(),
        default_input_modes=(), default_output_modes=(), skills=(),
        supported_interfaces=(
            AgentInterface(url="h:1", protocol_binding="GRPC", protocol_version="1.0"),
        ),
    )
    try:
        resolve_interface(card, base_url="http://h")
    except ValueError as exc:
        print("resolve:", type(exc).__name__, exc)
    sys.exit(main(["send", "grpc://127.0.0.1:9", "hi"]))
    """
)


def test_a_missing_grpc_extra_is_one_line_naming_it() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _NO_GRPC], capture_output=True, text=True, timeout=60, check=False
    )
    install = "pip install 'a2a-actors[grpc]'"
    assert done.returncode == 2, done.stderr
    assert done.stdout.startswith("resolve: GRPCUnavailableError ")
    assert install in done.stdout
    (line,) = done.stderr.splitlines()
    assert line == f"a2a-actors send: grpc://127.0.0.1:9 needs the grpc extra: {install}"
