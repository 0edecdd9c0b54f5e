"""What our gRPC client puts on the wire and makes of what comes back, against a fake.

:class:`~tests.grpc.grpc_servers.FakeService` is a real ``A2AService`` servicer on a real
``grpc.aio`` server whose answers the test picks: the metadata the client sends (version,
extensions, per-call headers, credentials, a token refreshed per call), deadlines, statuses
without or with foreign details, a malformed reply, a stream the client leaves (the server
sees the cancellation), and which interface a card makes the client choose.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading

import anyio
import httpx
import pytest

from a2a_actors.client import (
    A2AClient,
    A2AConnectionError,
    APIKey,
    StreamInterruptedError,
    Timeouts,
    request_headers,
    resolve_interface,
)
from a2a_actors.client._discovery import DEFAULT_BINDINGS
from a2a_actors.protocol._card import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    APIKeySecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a_actors.protocol._errors import (
    A2AError,
    InternalError,
    InvalidParamsError,
    MethodNotFoundError,
    ServerBusyError,
    UnauthenticatedError,
)
from a2a_actors.protocol._models import Message, TaskState
from tests.client.scenarios import TIMEOUT
from tests.grpc.grpc_servers import FakeService, GrpcServer

Fake = tuple[GrpcServer, FakeService]


def endpoint(fake: Fake, **kwargs: object) -> A2AClient:
    server, _ = fake
    return A2AClient(server.target, binding="GRPC", **kwargs)  # type: ignore[arg-type]


async def test_metadata_version_extensions_and_request_headers(fake_grpc: Fake) -> None:
    _, service = fake_grpc
    with anyio.fail_after(TIMEOUT):
        async with endpoint(fake_grpc, extensions=["urn:a", "urn:b"]) as client:
            with request_headers({"traceparent": "00-abc-def-01", "X-Custom": "yes"}):
                reply = await client.send_message("echo hi", extensions=["urn:c", "urn:a"])
            await client.send_message("echo again")
    assert isinstance(reply, Message)
    assert reply.text == "echo hi"
    first, second = service.metadata
    assert first["a2a-version"] == "1.0"
    assert first["a2a-extensions"] == "urn:a, urn:b, urn:c"
    assert first["traceparent"] == "00-abc-def-01"
    assert first["x-custom"] == "yes"
    assert "traceparent" not in second  # per call, not sticky
    assert first["user-agent"].startswith("a2a-actors/")


async def test_the_tenant_travels_in_the_request(fake_grpc: Fake) -> None:
    _, service = fake_grpc
    with anyio.fail_after(TIMEOUT):
        async with endpoint(fake_grpc, tenant="acme") as client:
            await client.send_message("echo")
        async with endpoint(fake_grpc) as client:
            await client.send_message("echo")
    assert service.tenants == ["acme", ""]


async def test_bearer_token_and_api_key_travel_as_metadata(fake_grpc: Fake) -> None:
    _, service = fake_grpc
    with anyio.fail_after(TIMEOUT):
        async with endpoint(fake_grpc, bearer_token="tok-1", api_key="key-1") as client:
            await client.send_message("echo")
        async with endpoint(fake_grpc, api_key=APIKey("key-2", "query", "key")) as client:
            await client.send_message("echo")
    assert service.metadata[0]["authorization"] == "Bearer tok-1"
    assert service.metadata[0]["x-api-key"] == "key-1"
    assert service.metadata[1]["key"] == "key-2"  # a query-placed key: metadata of its name


async def test_an_api_key_is_placed_as_the_card_says(fake_grpc: Fake) -> None:
    server, service = fake_grpc
    scheme = APIKeySecurityScheme(location="header", name="X-Agent-Key")
    card = make_card(
        interface("GRPC", server.target),
        security_schemes={"key": SecurityScheme(api_key_security_scheme=scheme)},
        security_requirements=(SecurityRequirement(schemes={"key": StringList()}),),
    )
    with anyio.fail_after(TIMEOUT):
        async with A2AClient(card=card, api_key="secret") as client:
            await client.send_message("echo")
    assert service.metadata[0]["x-agent-key"] == "secret"


async def test_a_token_hook_runs_before_every_call(fake_grpc: Fake) -> None:
    _, service = fake_grpc
    issued: list[str] = []

    async def fresh_token(request: httpx.Request) -> None:
        issued.append(f"t{len(issued) + 1}")
        request.headers["Authorization"] = f"Bearer {issued[-1]}"

    with anyio.fail_after(TIMEOUT):
        async with endpoint(fake_grpc, auth=fresh_token) as client:
            await client.send_message("echo 1")
            await client.send_message("echo 2")
    assert [m["authorization"] for m in service.metadata] == ["Bearer t1", "Bearer t2"]


async def test_a_bearer_token_callable_is_called_per_call(fake_grpc: Fake) -> None:
    _, service = fake_grpc
    tokens = iter(["a1", "a2"])

    async def next_token() -> str:
        return next(tokens)

    with anyio.fail_after(TIMEOUT):
        async with endpoint(fake_grpc, bearer_token=next_token) as client:
            await client.send_message("echo 1")
            async with client.subscribe("t-3") as events:
                await events.__anext__()
    assert [m["authorization"] for m in service.metadata] == ["Bearer a1", "Bearer a2"]


async def test_a_unary_call_past_its_deadline_is_a_connection_error(fake_grpc: Fake) -> None:
    with anyio.fail_after(TIMEOUT):
        async with endpoint(fake_grpc, timeouts=Timeouts(read=0.2)) as client:
            with pytest.raises(A2AConnectionError, match="timed out"):
                await client.send_message("slow")
            assert isinstance(await client.send_message("echo after"), Message)


def unused_target() -> str:
    """A ``127.0.0.1:PORT`` that was just bound and released: nothing listens there."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return f"127.0.0.1:{port}"


async def test_an_agent_that_is_not_there_is_a_connection_error() -> None:
    with anyio.fail_after(TIMEOUT):
        async with A2AClient(unused_target(), binding="GRPC") as client:
            with pytest.raises(A2AConnectionError, match="UNAVAILABLE"):
                await client.send_message("hello")


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_a_peer_that_never_speaks_http2_is_a_connect_timeout(backend: str) -> None:
    # A TCP listener that never answers: the connection is made (the kernel's backlog) but
    # gRPC's HTTP/2 handshake never completes, so only the connect timeout ends the wait.
    async def call(target: str) -> None:
        with anyio.fail_after(TIMEOUT):
            async with A2AClient(target, binding="GRPC", timeouts=Timeouts(connect=0.3)) as client:
                with pytest.raises(A2AConnectionError, match=r"not connected within 0\.3 s"):
                    await client.send_message("hello")

    with socket.socket() as mute:
        mute.bind(("127.0.0.1", 0))
        mute.listen(8)
        anyio.run(call, f"127.0.0.1:{mute.getsockname()[1]}", backend=backend)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("UNAUTHENTICATED", UnauthenticatedError),
        ("PERMISSION_DENIED", A2AError),
        ("RESOURCE_EXHAUSTED", ServerBusyError),
        ("UNIMPLEMENTED", MethodNotFoundError),
        ("INVALID_ARGUMENT", InvalidParamsError),
        ("INTERNAL", A2AError),
    ],
)
async def test_a_status_without_details_maps_by_its_code(
    fake_grpc: Fake, code: str, expected: type[A2AError]
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with endpoint(fake_grpc) as client:
            with pytest.raises(A2AError) as caught:
                await client.send_message(f"status {code}")
    assert type(caught.value) is expected
    assert caught.value.remote
    assert caught.value.message == f"plain status {code}"


async def test_busy_with_retry_info(fake_grpc: Fake) -> None:
    with anyio.fail_after(TIMEOUT):
        async with endpoint(fake_grpc) as client:
            with pytest.raises(ServerBusyError) as caught:
                await client.send_message("busy")
    error = caught.value
    assert error.remote
    assert error.message == "too many tasks"
    assert error.retry_after == 2.5
    assert error.data is not None
    assert error.data[0]["reason"] == "SERVER_BUSY"
    assert error.data[1]["@type"] == "type.googleapis.com/google.rpc.RetryInfo"


async def test_an_error_info_of_another_domain_is_kept_but_not_trusted(fake_grpc: Fake) -> None:
    with anyio.fail_after(TIMEOUT):
        async with endpoint(fake_grpc) as client:
            with pytest.raises(A2AError) as caught:
                await client.send_message("denied")
    assert caught.value.data is not None
    assert caught.value.data[0]["domain"] == "example.com"
    assert not isinstance(caught.value, UnauthenticatedError | MethodNotFoundError)


async def test_a_malformed_reply_is_an_internal_error(fake_grpc: Fake) -> None:
    with anyio.fail_after(TIMEOUT):
        async with endpoint(fake_grpc) as client:
            with pytest.raises(InternalError, match="invalid result from peer"):
                await client.send_message("bad")


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_leaving_a_stream_cancels_the_call(fake_grpc: Fake, backend: str) -> None:
    _, service = fake_grpc

    async def follow() -> None:
        with anyio.fail_after(TIMEOUT):
            async with endpoint(fake_grpc) as client:
                async with client.subscribe("t-1") as events:
                    first = await events.__anext__()
                    assert first.task is not None
                    assert first.task.id == "t-1"
                # left: the server's handler is cancelled (it would wait forever)
                await anyio.to_thread.run_sync(service.cancelled.wait, TIMEOUT)
                assert service.cancelled.is_set()

    anyio.run(follow, backend=backend)


async def test_a_cut_stream_is_resumed_with_subscribe(fake_grpc: Fake) -> None:
    with anyio.fail_after(TIMEOUT):
        async with endpoint(fake_grpc) as client:
            stream = client.stream_message("go", resubscribe=True)
            async with stream:
                states = [e.task.status.state for e in [x async for x in stream] if e.task]
            assert states == [TaskState.WORKING, TaskState.COMPLETED]
            assert stream.resubscribes == 1
            with pytest.raises(StreamInterruptedError) as cut:
                async with client.stream_message("go") as events:
                    [_ async for _ in events]
            assert isinstance(cut.value.__cause__, A2AConnectionError)


async def test_a_quiet_stream_times_out_when_asked(fake_grpc: Fake) -> None:
    quiet = Timeouts(stream_read=0.2)
    with anyio.fail_after(TIMEOUT):
        async with endpoint(fake_grpc, timeouts=quiet) as client, client.subscribe("t-2") as events:
            await events.__anext__()
            with pytest.raises(StreamInterruptedError, match=r"no stream event in 0\.2 s"):
                await events.__anext__()


async def test_closing_the_client_stops_its_loop_thread(fake_grpc: Fake) -> None:
    def loop_threads() -> int:
        return sum(t.name == "a2a-actors-grpc" for t in threading.enumerate())

    before = loop_threads()
    with anyio.fail_after(TIMEOUT):
        async with endpoint(fake_grpc) as client:
            await client.send_message("echo")
            assert loop_threads() == before + 1  # trio: grpc.aio runs on a loop of its own
    assert loop_threads() == before


# -- choosing the interface ------------------------------------------------------------------


def make_card(*interfaces: AgentInterface, **extra: object) -> AgentCard:
    return AgentCard(
        name="a",
        description="",
        version="1",
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(),
        default_input_modes=("text/plain",),
        default_output_modes=("text/plain",),
        skills=(),
        **extra,  # type: ignore[arg-type]
    )


def interface(binding: str, url: str = "") -> AgentInterface:
    urls = {"JSONRPC": "http://a/", "HTTP+JSON": "http://a/rest", "GRPC": "a:50051"}
    return AgentInterface(
        url=url or urls[binding], protocol_binding=binding, protocol_version="1.0"
    )


@pytest.mark.parametrize(
    ("offered", "asked", "chosen"),
    [
        (("JSONRPC", "HTTP+JSON", "GRPC"), None, "JSONRPC"),
        (("GRPC", "JSONRPC"), None, "GRPC"),  # the card's preferred interface
        (("GRPC",), None, "GRPC"),  # its only one
        (("JSONRPC", "GRPC"), ("GRPC",), "GRPC"),  # forced
        (("GRPC", "JSONRPC"), DEFAULT_BINDINGS, "JSONRPC"),  # JSON asked for
    ],
)
def test_the_interface_chosen_from_a_card(
    offered: tuple[str, ...], asked: tuple[str, ...] | None, chosen: str
) -> None:
    card = make_card(*(interface(b) for b in offered))
    iface = resolve_interface(card, base_url="http://a", bindings=asked)
    assert iface.protocol_binding == chosen


async def test_the_card_decides_and_the_client_speaks_grpc(fake_grpc: Fake) -> None:
    server, _ = fake_grpc
    card = make_card(interface("GRPC", server.target), interface("JSONRPC"))
    with anyio.fail_after(TIMEOUT):
        async with A2AClient(card=card) as client:
            reply = await client.send_message("echo chosen")
    assert isinstance(reply, Message)
    assert reply.text == "echo chosen"


_JSON_CLIENT = """
import json, sys
from a2a_actors.client import A2AClient
from a2a_actors.protocol._card import AgentCapabilities, AgentCard, AgentInterface
card = AgentCard(
    name="a", description="", version="1", capabilities=AgentCapabilities(),
    default_input_modes=(), default_output_modes=(), skills=(),
    supported_interfaces=tuple(
        AgentInterface(url=url, protocol_binding=binding, protocol_version="1.0")
        for binding, url in (("JSONRPC", "http://a/"), ("GRPC", "a:1"))
    ),
)
client = A2AClient(card=card)
assert client.interface.protocol_binding == "JSONRPC"
print(json.dumps(sorted(sys.modules)))
"""


def test_choosing_a_json_interface_imports_no_grpc() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _JSON_CLIENT],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)
    assert "a2a_actors.client._transports.grpc_binding" in loaded  # asked whether gRPC is installed
    leaked = [m for m in loaded if m.startswith(("grpc", "google.protobuf", "a2a.types"))]
    assert leaked == []
    assert "a2a_actors.client._transports.grpc" not in loaded
