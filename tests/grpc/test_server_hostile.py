"""Hostile input on our gRPC server, sent as raw bytes on a raw channel: exact statuses, the
``google.rpc`` details, no crash and nothing lost (the server answers the next call, and no
task was created or changed by a refused one)."""

from __future__ import annotations

import random
from collections.abc import Sequence

import anyio
import grpc
import grpc.aio
import pytest
from a2a.types import a2a_pb2
from google.rpc import error_details_pb2

from a2a_actors.protocol import _grpc_service as grpc_service, _protobuf as protobuf
from a2a_actors.server import JWTOptions, ServerConfig
from tests.server.agents import REQUIRED_EXTENSION
from tests.trust.keys import AUDIENCE, ISSUER, SigningKey, jwks

from .server_helpers import (
    TIMEOUT,
    V1,
    Outcome,
    channel,
    grpc_served,
    raw_stream,
    raw_unary,
    send_request,
)

pytestmark = pytest.mark.anyio

OK = grpc.StatusCode.OK
INVALID = grpc.StatusCode.INVALID_ARGUMENT
NOT_FOUND = grpc.StatusCode.NOT_FOUND
PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION
UNAUTHENTICATED = grpc.StatusCode.UNAUTHENTICATED
EXHAUSTED = grpc.StatusCode.RESOURCE_EXHAUSTED


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _call(
    opened: grpc.aio.Channel,
    method: str,
    body: bytes,
    metadata: Sequence[tuple[str, str]] = V1,
) -> Outcome:
    if grpc_service.METHODS[method].streaming:
        return await raw_stream(opened, method, body, metadata)
    return await raw_unary(opened, method, body, metadata)


async def _task_count(opened: grpc.aio.Channel, metadata: Sequence[tuple[str, str]] = V1) -> int:
    outcome = await raw_unary(
        opened, "ListTasks", a2a_pb2.ListTasksRequest().SerializeToString(), metadata
    )
    assert outcome.code == OK
    count: int = a2a_pb2.ListTasksResponse.FromString(outcome.messages[0]).total_size
    return count


async def _still_serves(opened: grpc.aio.Channel) -> None:
    outcome = await raw_unary(opened, "SendMessage", send_request("hello").SerializeToString())
    assert outcome.code == OK
    task = a2a_pb2.SendMessageResponse.FromString(outcome.messages[0]).task
    assert task.status.state == a2a_pb2.TASK_STATE_COMPLETED


# -- malformed and invalid requests ------------------------------------------------------------


@pytest.mark.parametrize("method", sorted(grpc_service.METHODS))
async def test_malformed_protobuf_is_invalid_params(method: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with grpc_served() as served, channel(served.address) as opened:
            outcome = await _call(opened, method, b"\x0a\x05\xff\xfe")
            assert (outcome.code, outcome.reason) == (INVALID, "INVALID_PARAMS")
            assert outcome.details.startswith("malformed protobuf: not a valid lf.a2a.v1.")
            assert outcome.messages == []
            assert await _task_count(opened) == 0
            await _still_serves(opened)


async def test_random_bytes_never_crash_the_server() -> None:
    rng = random.Random(19)
    bodies = [rng.randbytes(rng.randint(1, 64)) for _ in range(40)]
    with anyio.fail_after(TIMEOUT * 2):
        async with grpc_served() as served, channel(served.address) as opened:
            for body in bodies:
                outcome = await _call(opened, rng.choice(sorted(grpc_service.METHODS)), body)
                assert outcome.code in (OK, INVALID, NOT_FOUND, PRECONDITION), outcome
                assert outcome.code is OK or outcome.reason  # every refusal says why
            await _still_serves(opened)


@pytest.mark.parametrize(
    ("method", "request_", "field", "text"),
    [
        (
            "SendMessage",
            a2a_pb2.SendMessageRequest(message={"message_id": "m", "role": 1}),
            "message",
            "parts must not be empty",
        ),
        (
            "SendStreamingMessage",
            a2a_pb2.SendMessageRequest(message={"message_id": "m", "role": 9, "parts": [{}]}),
            "message.role",
            "9 is not a value of lf.a2a.v1.Role",
        ),
        (
            "SendMessage",
            a2a_pb2.SendMessageRequest(message={"message_id": "m", "role": 1, "parts": [{}]}),
            "message.parts.0",
            "Part must hold exactly one of text, raw, url, data",
        ),
        ("ListTasks", a2a_pb2.ListTasksRequest(page_size=500), "page_size", "<= 100"),
        ("GetTask", a2a_pb2.GetTaskRequest(id="x", history_length=-3), "history_length", ">= 0"),
    ],
)
async def test_invalid_content_names_the_field(
    method: str, request_: object, field: str, text: str
) -> None:
    body = request_.SerializeToString()  # type: ignore[attr-defined]
    with anyio.fail_after(TIMEOUT):
        async with grpc_served() as served, channel(served.address) as opened:
            outcome = await _call(opened, method, body)
            assert (outcome.code, outcome.reason, outcome.field) == (
                INVALID,
                "INVALID_PARAMS",
                field,
            )
            assert text in outcome.details
            assert await _task_count(opened) == 0


async def test_an_oversize_message_is_refused_and_creates_nothing() -> None:
    config = ServerConfig(max_body_bytes=4096)
    big = send_request("x" * 5000).SerializeToString()
    with anyio.fail_after(TIMEOUT):
        async with grpc_served(config=config) as served, channel(served.address) as opened:
            for method in ("SendMessage", "SendStreamingMessage"):
                outcome = await _call(opened, method, big)
                assert outcome.code == EXHAUSTED
                assert "4096" in outcome.details
            assert await _task_count(opened) == 0
            await _still_serves(opened)


async def test_an_unknown_method_is_unimplemented() -> None:
    with anyio.fail_after(TIMEOUT):
        async with grpc_served() as served, channel(served.address) as opened:
            call = opened.unary_unary("/lf.a2a.v1.A2AService/Nope")(b"", metadata=V1)
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await call
            assert info.value.code() == grpc.StatusCode.UNIMPLEMENTED
            await _still_serves(opened)


# -- unknown tasks and illegal transitions -----------------------------------------------------


@pytest.mark.parametrize(
    ("method", "request_"),
    [
        ("GetTask", a2a_pb2.GetTaskRequest(id="nope")),
        ("CancelTask", a2a_pb2.CancelTaskRequest(id="nope")),
        ("SubscribeToTask", a2a_pb2.SubscribeToTaskRequest(id="nope")),
        ("SendMessage", send_request("follow-up", task_id="nope")),
        ("SendStreamingMessage", send_request("follow-up", task_id="nope")),
    ],
)
async def test_an_unknown_task_is_not_found(method: str, request_: object) -> None:
    body = request_.SerializeToString()  # type: ignore[attr-defined]
    with anyio.fail_after(TIMEOUT):
        async with grpc_served() as served, channel(served.address) as opened:
            outcome = await _call(opened, method, body)
            assert (outcome.code, outcome.reason) == (NOT_FOUND, "TASK_NOT_FOUND")
            assert outcome.messages == []
            assert await _task_count(opened) == 0


async def test_illegal_transitions_leave_the_task_as_it_was() -> None:
    with anyio.fail_after(TIMEOUT):
        async with grpc_served() as served, channel(served.address) as opened:
            done = await raw_unary(opened, "SendMessage", send_request("done").SerializeToString())
            task = a2a_pb2.SendMessageResponse.FromString(done.messages[0]).task
            before = await raw_unary(
                opened, "GetTask", a2a_pb2.GetTaskRequest(id=task.id).SerializeToString()
            )
            cases = [
                ("SendMessage", send_request("again", task_id=task.id), "UNSUPPORTED_OPERATION"),
                (
                    "SendStreamingMessage",
                    send_request("again", task_id=task.id),
                    "UNSUPPORTED_OPERATION",
                ),
                ("CancelTask", a2a_pb2.CancelTaskRequest(id=task.id), "TASK_NOT_CANCELABLE"),
                (
                    "SubscribeToTask",
                    a2a_pb2.SubscribeToTaskRequest(id=task.id),
                    "UNSUPPORTED_OPERATION",
                ),
            ]
            for method, request_, reason in cases:
                outcome = await _call(opened, method, request_.SerializeToString())
                assert (outcome.code, outcome.reason) == (PRECONDITION, reason), method
            after = await raw_unary(
                opened, "GetTask", a2a_pb2.GetTaskRequest(id=task.id).SerializeToString()
            )
            assert after.messages == before.messages


# -- credentials, versions, capacity, switches -------------------------------------------------

KEYS = {"key-a": "alice", "key-b": "bob"}
#: A valid request of the methods whose empty request is not valid.
VALID = {
    "SendMessage": send_request("hi"),
    "SendStreamingMessage": send_request("hi"),
    "CreateTaskPushNotificationConfig": a2a_pb2.TaskPushNotificationConfig(
        task_id="t", url="https://example.com/hook"
    ),
}


def _as(key: str) -> tuple[tuple[str, str], ...]:
    return (*V1, ("x-api-key", key))


async def _alice_task(opened: grpc.aio.Channel) -> str:
    outcome = await raw_unary(
        opened,
        "SendMessage",
        send_request("sleep", return_immediately=True).SerializeToString(),
        _as("key-a"),
    )
    assert outcome.code == OK
    task_id: str = a2a_pb2.SendMessageResponse.FromString(outcome.messages[0]).task.id
    return task_id


@pytest.mark.parametrize("method", sorted(grpc_service.METHODS))
@pytest.mark.parametrize("credentials", [(), (("x-api-key", "wrong"),)], ids=["none", "wrong"])
async def test_missing_or_wrong_credentials_are_unauthenticated(
    method: str, credentials: tuple[tuple[str, str], ...]
) -> None:
    config = ServerConfig(api_keys=KEYS)
    body = VALID.get(method, protobuf.proto_type(grpc_service.METHODS[method].request)())
    with anyio.fail_after(TIMEOUT):
        async with grpc_served(config=config) as served, channel(served.address) as opened:
            outcome = await _call(opened, method, body.SerializeToString(), (*V1, *credentials))
            assert (outcome.code, outcome.reason) == (UNAUTHENTICATED, "UNAUTHENTICATED")
            assert outcome.trailing["www-authenticate"] == 'ApiKey realm="a2a", header="X-API-Key"'
            assert await _task_count(opened, _as("key-a")) == 0


async def test_tasks_are_isolated_per_owner() -> None:
    config = ServerConfig(api_keys=KEYS)
    with anyio.fail_after(TIMEOUT):
        async with grpc_served(config=config) as served, channel(served.address) as opened:
            task_id = await _alice_task(opened)
            for method, request_ in [
                ("GetTask", a2a_pb2.GetTaskRequest(id=task_id)),
                ("CancelTask", a2a_pb2.CancelTaskRequest(id=task_id)),
                ("SubscribeToTask", a2a_pb2.SubscribeToTaskRequest(id=task_id)),
                ("SendMessage", send_request("hijack", task_id=task_id)),
            ]:
                outcome = await _call(opened, method, request_.SerializeToString(), _as("key-b"))
                assert (outcome.code, outcome.reason) == (NOT_FOUND, "TASK_NOT_FOUND"), method
            assert await _task_count(opened, _as("key-b")) == 0
            assert await _task_count(opened, _as("key-a")) == 1
            got = await raw_unary(
                opened,
                "GetTask",
                a2a_pb2.GetTaskRequest(id=task_id).SerializeToString(),
                _as("key-a"),
            )
            task = a2a_pb2.Task.FromString(got.messages[0])
            assert task.status.state == a2a_pb2.TASK_STATE_WORKING  # bob changed nothing


async def test_bearer_tokens_authenticate() -> None:
    config = ServerConfig(bearer_tokens={"tok": "carol"})
    with anyio.fail_after(TIMEOUT):
        async with grpc_served(config=config) as served, channel(served.address) as opened:
            body = send_request("whoami").SerializeToString()
            ok = await raw_unary(
                opened, "SendMessage", body, (*V1, ("authorization", "Bearer tok"))
            )
            answer = a2a_pb2.SendMessageResponse.FromString(ok.messages[0])
            assert answer.message.parts[0].text == "carol|"
            bad = await raw_unary(opened, "SendMessage", body, (*V1, ("authorization", "Bearer x")))
            assert bad.code == UNAUTHENTICATED
            assert bad.trailing["www-authenticate"] == 'Bearer realm="a2a"'


async def test_jwt_bearer_tokens_authenticate() -> None:
    key = SigningKey.make("k1")
    config = ServerConfig(jwt=JWTOptions(jwks=jwks(key), issuer=ISSUER, audience=AUDIENCE))
    body = send_request("whoami").SerializeToString()
    with anyio.fail_after(TIMEOUT):
        async with grpc_served(config=config) as served, channel(served.address) as opened:
            token = key.token("dave")
            ok = await raw_unary(
                opened, "SendMessage", body, (*V1, ("authorization", f"Bearer {token}"))
            )
            assert a2a_pb2.SendMessageResponse.FromString(ok.messages[0]).message.parts[0].text == (
                "dave|"
            )
            expired = key.token("dave", exp=1)
            bad = await raw_unary(
                opened, "SendMessage", body, (*V1, ("authorization", f"Bearer {expired}"))
            )
            assert (bad.code, bad.reason) == (UNAUTHENTICATED, "UNAUTHENTICATED")
            assert 'error="invalid_token"' in bad.trailing["www-authenticate"]


async def test_a_public_extended_card_needs_no_credentials() -> None:
    from a2a_actors.server import ExtendedCard

    config = ServerConfig(
        api_keys=KEYS, extended_card=ExtendedCard(name="x"), extended_card_requires_auth=False
    )
    body = a2a_pb2.GetExtendedAgentCardRequest().SerializeToString()
    with anyio.fail_after(TIMEOUT):
        async with grpc_served(config=config) as served, channel(served.address) as opened:
            outcome = await raw_unary(opened, "GetExtendedAgentCard", body)
            assert outcome.code == OK
            assert a2a_pb2.AgentCard.FromString(outcome.messages[0]).name == "x"
            other = await raw_unary(
                opened, "GetTask", a2a_pb2.GetTaskRequest(id="t").SerializeToString()
            )
            assert other.code == UNAUTHENTICATED


@pytest.mark.parametrize(
    ("metadata", "code"),
    [
        ((), PRECONDITION),  # absent: 0.3, not served over gRPC
        ((("a2a-version", "0.3"),), PRECONDITION),
        ((("a2a-version", "2.0"),), PRECONDITION),
        ((("a2a-version", "banana"),), PRECONDITION),
        ((("a2a-version", "1.1"),), OK),
        ((("a2a-version", "1"),), OK),
    ],
)
async def test_the_version_metadata(metadata: tuple[tuple[str, str], ...], code: object) -> None:
    with anyio.fail_after(TIMEOUT):
        async with grpc_served() as served, channel(served.address) as opened:
            outcome = await raw_unary(
                opened, "SendMessage", send_request("hi").SerializeToString(), metadata
            )
            assert outcome.code == code
            if code is PRECONDITION:
                assert outcome.reason == "VERSION_NOT_SUPPORTED"
                assert await _task_count(opened) == 0


async def test_capacity_refusals_are_resource_exhausted_with_retry_info() -> None:
    config = ServerConfig(max_live_tasks=1)
    body = send_request("sleep", return_immediately=True).SerializeToString()
    with anyio.fail_after(TIMEOUT):
        async with grpc_served(config=config) as served, channel(served.address) as opened:
            first = await raw_unary(opened, "SendMessage", body)
            assert first.code == OK
            for method in ("SendMessage", "SendStreamingMessage"):
                refused = await _call(opened, method, body)
                assert (refused.code, refused.reason) == (EXHAUSTED, "SERVER_BUSY")
                assert refused.status is not None
                retry = error_details_pb2.RetryInfo()
                assert refused.status.details[-1].Unpack(retry)
                assert retry.retry_delay.ToTimedelta().total_seconds() > 0
            assert await _task_count(opened) == 1


async def test_past_the_queue_bound_a_new_task_is_resource_exhausted() -> None:
    config = ServerConfig(max_running=1, max_queued=1)
    body = send_request("sleep", return_immediately=True).SerializeToString()
    with anyio.fail_after(TIMEOUT):
        async with grpc_served(config=config) as served, channel(served.address) as opened:
            for _ in range(2):  # one runs, one waits for its slot
                assert (await raw_unary(opened, "SendMessage", body)).code == OK
            for method in ("SendMessage", "SendStreamingMessage"):
                refused = await _call(opened, method, body)
                assert (refused.code, refused.reason) == (EXHAUSTED, "SERVER_BUSY")
                assert refused.status is not None
                assert refused.status.message.startswith(
                    "all 1 running slots are taken and 1 tasks wait for one (limit 1)"
                )
            assert await _task_count(opened) == 2


async def test_streaming_switched_off_is_unsupported() -> None:
    config = ServerConfig(streaming=False)
    with anyio.fail_after(TIMEOUT):
        async with grpc_served(config=config) as served, channel(served.address) as opened:
            for method, request_ in [
                ("SendStreamingMessage", send_request("stream")),
                ("SubscribeToTask", a2a_pb2.SubscribeToTaskRequest(id="t")),
            ]:
                outcome = await _call(opened, method, request_.SerializeToString())
                assert (outcome.code, outcome.reason) == (PRECONDITION, "UNSUPPORTED_OPERATION")
            assert await _task_count(opened) == 0


async def test_a_required_extension_is_enforced() -> None:
    config = ServerConfig(enforce_required_extensions=True)
    body = send_request("hi").SerializeToString()
    with anyio.fail_after(TIMEOUT):
        async with grpc_served(config=config) as served, channel(served.address) as opened:
            refused = await raw_unary(opened, "SendMessage", body)
            assert (refused.code, refused.reason) == (PRECONDITION, "EXTENSION_SUPPORT_REQUIRED")
            accepted = await raw_unary(
                opened, "SendMessage", body, (*V1, ("a2a-extensions", REQUIRED_EXTENSION))
            )
            assert accepted.code == OK
            assert await _task_count(opened) == 1


async def test_an_agent_that_raises_fails_its_task_not_the_call() -> None:
    with anyio.fail_after(TIMEOUT):
        async with grpc_served() as served, channel(served.address) as opened:
            outcome = await raw_unary(
                opened, "SendMessage", send_request("boom").SerializeToString()
            )
            assert outcome.code == OK
            task = a2a_pb2.SendMessageResponse.FromString(outcome.messages[0]).task
            assert task.status.state == a2a_pb2.TASK_STATE_FAILED
            await _still_serves(opened)
