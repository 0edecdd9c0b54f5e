"""The official SDK's gRPC client (``a2a.client.transports.grpc``) against our gRPC server.

Every method of ``lf.a2a.v1.A2AService``, streaming and a cancel mid-stream included, over
``serve(..., ServerConfig(grpc=GrpcOptions()))`` on 127.0.0.1 port 0; the card declares the
interface, and the SDK's client factory chooses it from our card.
"""

from __future__ import annotations

import uuid
from functools import partial

import anyio
import grpc
import grpc.aio
import httpx
import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.client.client import ClientCallContext
from a2a.types import a2a_pb2
from a2a.utils import errors as sdk_errors
from google.protobuf import json_format

from a2a_actors.protocol import _grpc_service as grpc_service, _protobuf as protobuf
from a2a_actors.protocol._card import AgentCard
from a2a_actors.runtime import TaskContext
from a2a_actors.server import (
    ExtendedCard,
    GrpcOptions,
    ServerConfig,
    create_app,
    serve,
    service_of,
)
from tests.server.agents import CHUNKS, EXTENSION, QUESTION, scenario_agent

from .server_helpers import (
    TIMEOUT,
    V1,
    channel,
    grpc_served,
    raw_stream,
    sdk_transport,
    send_request,
)

pytestmark = pytest.mark.anyio

PUSH = ServerConfig(push_notifications=True, allow_private_push=True)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # grpcio's server runs on asyncio


# -- the card ----------------------------------------------------------------------------------


async def test_the_card_declares_the_grpc_interface() -> None:
    with anyio.fail_after(TIMEOUT):
        async with grpc_served() as served, httpx.AsyncClient() as http:
            answer = await http.get(f"{served.url}/.well-known/agent-card.json")
            interfaces = answer.json()["supportedInterfaces"]
            port = served.address.rpartition(":")[2]
            assert interfaces[:3] == [
                {"url": f"{served.url}/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                {
                    "url": f"{served.url}/rest",
                    "protocolBinding": "HTTP+JSON",
                    "protocolVersion": "1.0",
                },
                {"url": f"127.0.0.1:{port}", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
            ]
            # the card follows the name the client used for the host
            http_port = served.url.rpartition(":")[2]
            answer = await http.get(f"http://localhost:{http_port}/.well-known/agent-card.json")
            interfaces = answer.json()["supportedInterfaces"]
            grpc_urls = [i["url"] for i in interfaces if i["protocolBinding"] == "GRPC"]
            assert grpc_urls == [f"localhost:{port}"]


async def test_an_advertised_address_is_what_the_card_gives() -> None:
    options = GrpcOptions(advertised="agents.example.com:443")
    app = create_app(
        scenario_agent, ServerConfig(grpc=options, public_url="https://agents.example.com")
    )
    async with anyio.create_task_group() as tg:
        with anyio.fail_after(TIMEOUT):
            await tg.start(partial(serve, app))
        card = service_of(app).cards.public("https://agents.example.com")
        assert [i.url for i in card.supported_interfaces if i.protocol_binding == "GRPC"] == [
            "agents.example.com:443"
        ]
        tg.cancel_scope.cancel()


async def test_the_sdk_client_factory_chooses_grpc_from_our_card() -> None:
    with anyio.fail_after(TIMEOUT):
        async with grpc_served() as served, httpx.AsyncClient() as http:
            raw = (await http.get(f"{served.url}/.well-known/agent-card.json")).content
            card = json_format.Parse(raw, a2a_pb2.AgentCard(), ignore_unknown_fields=True)
            config = ClientConfig(
                supported_protocol_bindings=["GRPC"],
                grpc_channel_factory=grpc.aio.insecure_channel,
                streaming=True,
            )
            client = ClientFactory(config).create(card)
            try:
                events = [
                    event async for event in client.send_message(send_request("stream please"))
                ]
                assert events[-1].status_update.status.state == a2a_pb2.TASK_STATE_COMPLETED
            finally:
                await client.close()


# -- every method ------------------------------------------------------------------------------


async def test_send_message_get_and_list() -> None:
    with anyio.fail_after(TIMEOUT):
        async with grpc_served() as served, sdk_transport(served) as sdk:
            answer = await sdk.send_message(send_request("hello there"))
            task = answer.task
            assert task.status.state == a2a_pb2.TASK_STATE_COMPLETED
            assert task.artifacts[0].parts[0].text == "hello there"
            got = await sdk.get_task(a2a_pb2.GetTaskRequest(id=task.id, history_length=0))
            assert got.id == task.id
            assert list(got.history) == []
            listed = await sdk.list_tasks(a2a_pb2.ListTasksRequest(context_id=task.context_id))
            assert [t.id for t in listed.tasks] == [task.id]
            assert listed.total_size == 1
            # the result is what the JSON bindings give, converted
            ours = served.service.methods.supervisor
            assert protobuf.to_proto(await ours.get_task(task.id)) == await sdk.get_task(
                a2a_pb2.GetTaskRequest(id=task.id)
            )


async def test_a_message_reply() -> None:
    with anyio.fail_after(TIMEOUT):
        async with grpc_served() as served, sdk_transport(served) as sdk:
            answer = await sdk.send_message(send_request("message back"))
            assert answer.WhichOneof("payload") == "message"
            assert answer.message.parts[0].text == "message back"
            assert answer.message.role == a2a_pb2.ROLE_AGENT


async def test_send_streaming_message() -> None:
    with anyio.fail_after(TIMEOUT):
        async with grpc_served() as served, sdk_transport(served) as sdk:
            events = [e async for e in sdk.send_message_streaming(send_request("stream it"))]
            kinds = [e.WhichOneof("payload") for e in events]
            assert kinds == ["task", "status_update", *["artifact_update"] * 3, "status_update"]
            assert [e.artifact_update.artifact.parts[0].text for e in events[2:5]] == list(CHUNKS)
            assert [e.artifact_update.append for e in events[2:5]] == [False, True, True]
            assert events[-1].status_update.status.state == a2a_pb2.TASK_STATE_COMPLETED
            assert served.service.hub.open_streams == 0


async def test_multi_turn() -> None:
    with anyio.fail_after(TIMEOUT):
        async with grpc_served() as served, sdk_transport(served) as sdk:
            first = (await sdk.send_message(send_request("input please"))).task
            assert first.status.state == a2a_pb2.TASK_STATE_INPUT_REQUIRED
            assert first.status.message.parts[0].text == QUESTION
            second = (await sdk.send_message(send_request("Ada", task_id=first.id))).task
            assert second.id == first.id
            assert second.status.state == a2a_pb2.TASK_STATE_COMPLETED
            assert second.artifacts[0].parts[0].text == "Ada"


async def test_cancel_and_subscribe() -> None:
    with anyio.fail_after(TIMEOUT):
        async with grpc_served() as served, sdk_transport(served) as sdk:
            task = (await sdk.send_message(send_request("sleep", return_immediately=True))).task
            seen: list[a2a_pb2.StreamResponse] = []

            async def follow(*, task_status: anyio.abc.TaskStatus[None]) -> None:
                stream = sdk.subscribe(a2a_pb2.SubscribeToTaskRequest(id=task.id))
                async for event in stream:
                    seen.append(event)
                    if len(seen) == 1:
                        task_status.started()

            async with anyio.create_task_group() as tg:
                await tg.start(follow)
                assert seen[0].WhichOneof("payload") == "task"  # the snapshot first
                canceled = await sdk.cancel_task(a2a_pb2.CancelTaskRequest(id=task.id))
                assert canceled.status.state == a2a_pb2.TASK_STATE_CANCELED
            states = [e.status_update.status.state for e in seen[1:] if e.HasField("status_update")]
            assert states[-1] == a2a_pb2.TASK_STATE_CANCELED
            with pytest.raises(sdk_errors.UnsupportedOperationError):
                async for _ in sdk.subscribe(a2a_pb2.SubscribeToTaskRequest(id=task.id)):
                    pass
            with pytest.raises(sdk_errors.TaskNotCancelableError):
                await sdk.cancel_task(a2a_pb2.CancelTaskRequest(id=task.id))


@pytest.mark.parametrize("method", ["SendStreamingMessage", "SubscribeToTask"])
async def test_cancel_mid_stream_leaves_the_task_running(
    monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    """A client that cancels its stream ends the server's stream, not the task."""
    with anyio.fail_after(TIMEOUT):
        async with grpc_served() as served, channel(served.address) as opened:
            hub = served.service.hub
            released = anyio.Event()
            untrack = hub.untrack

            def untrack_and_tell(scope: anyio.CancelScope) -> None:
                untrack(scope)  # the servicer's last step, once its runtime stream closed
                released.set()

            monkeypatch.setattr(hub, "untrack", untrack_and_tell)
            body = send_request("sleep now", return_immediately=method != "SendStreamingMessage")
            if method == "SubscribeToTask":
                answer = await opened.unary_unary(grpc_service.METHODS["SendMessage"].path)(
                    body.SerializeToString(), metadata=V1
                )
                task_id = a2a_pb2.SendMessageResponse.FromString(answer).task.id
                request = a2a_pb2.SubscribeToTaskRequest(id=task_id).SerializeToString()
            else:
                request = body.SerializeToString()
            call = opened.unary_stream(grpc_service.METHODS[method].path)(request, metadata=V1)
            first = a2a_pb2.StreamResponse.FromString(await call.read())
            task_id = first.task.id
            # the servicer tracks its stream before it writes the first event
            assert hub.open_streams == 1
            call.cancel()
            await released.wait()
            assert hub.open_streams == 0
            async with sdk_transport(served) as sdk:
                task = await sdk.get_task(a2a_pb2.GetTaskRequest(id=task_id))
                assert task.status.state == a2a_pb2.TASK_STATE_WORKING
                canceled = await sdk.cancel_task(a2a_pb2.CancelTaskRequest(id=task_id))
                assert canceled.status.state == a2a_pb2.TASK_STATE_CANCELED


async def test_shutdown_ends_open_streams() -> None:
    with anyio.fail_after(TIMEOUT):
        async with grpc_served() as served, channel(served.address) as opened:
            task = await opened.unary_unary(grpc_service.METHODS["SendMessage"].path)(
                send_request("sleep", return_immediately=True).SerializeToString(),
                metadata=V1,
            )
            task_id = a2a_pb2.SendMessageResponse.FromString(task).task.id
            call = opened.unary_stream(grpc_service.METHODS["SubscribeToTask"].path)(
                a2a_pb2.SubscribeToTaskRequest(id=task_id).SerializeToString(), metadata=V1
            )
            assert a2a_pb2.StreamResponse.FromString(await call.read()).task.id == task_id
            served.service.close_streams()  # the first step of a shutdown
            assert await call.read() is grpc.aio.EOF
            assert await call.code() == grpc.StatusCode.OK
            refused = await raw_stream(  # no new stream while shutting down
                opened,
                "SubscribeToTask",
                a2a_pb2.SubscribeToTaskRequest(id=task_id).SerializeToString(),
            )
            assert (refused.code, refused.reason) == (
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "SERVER_BUSY",
            )


async def test_push_config_methods() -> None:
    with anyio.fail_after(TIMEOUT):
        async with grpc_served(config=PUSH) as served, sdk_transport(served) as sdk:
            task = (await sdk.send_message(send_request("hi"))).task
            created = await sdk.create_task_push_notification_config(
                a2a_pb2.TaskPushNotificationConfig(
                    task_id=task.id,
                    url="http://127.0.0.1:9/hook",
                    token="tok",
                    authentication=a2a_pb2.AuthenticationInfo(scheme="Bearer", credentials="c"),
                )
            )
            assert created.id
            assert created.task_id == task.id
            assert (created.token, created.authentication.credentials) == ("", "")  # no secrets
            got = await sdk.get_task_push_notification_config(
                a2a_pb2.GetTaskPushNotificationConfigRequest(task_id=task.id, id=created.id)
            )
            assert got == created
            listed = await sdk.list_task_push_notification_configs(
                a2a_pb2.ListTaskPushNotificationConfigsRequest(task_id=task.id)
            )
            assert list(listed.configs) == [created]
            await sdk.delete_task_push_notification_config(
                a2a_pb2.DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=created.id)
            )
            with pytest.raises(sdk_errors.TaskNotFoundError):
                await sdk.get_task_push_notification_config(
                    a2a_pb2.GetTaskPushNotificationConfigRequest(task_id=task.id, id=created.id)
                )


async def test_push_methods_when_push_is_off() -> None:
    with anyio.fail_after(TIMEOUT):
        async with grpc_served() as served, sdk_transport(served) as sdk:
            with pytest.raises(sdk_errors.PushNotificationNotSupportedError):
                await sdk.list_task_push_notification_configs(
                    a2a_pb2.ListTaskPushNotificationConfigsRequest(task_id="t")
                )


async def test_the_extended_card() -> None:
    config = ServerConfig(
        api_keys={"k1": "alice"}, extended_card=ExtendedCard(name="extended name")
    )
    with anyio.fail_after(TIMEOUT):
        async with grpc_served(config=config) as served, sdk_transport(served) as sdk:
            sdk.agent_card = protobuf.to_proto(served.service.cards.public(served.url))  # type: ignore[assignment]
            with pytest.raises(Exception, match="UNAUTHENTICATED"):
                await sdk.get_extended_agent_card(a2a_pb2.GetExtendedAgentCardRequest())
            context = ClientCallContext(service_parameters={"x-api-key": "k1"})
            card = await sdk.get_extended_agent_card(
                a2a_pb2.GetExtendedAgentCardRequest(), context=context
            )
            assert card.name == "extended name"
            ours = protobuf.from_proto(card, AgentCard)
            assert "GRPC" in [i.protocol_binding for i in ours.supported_interfaces]


async def test_extensions_travel_as_metadata() -> None:
    with anyio.fail_after(TIMEOUT):
        async with grpc_served() as served, channel(served.address) as opened:
            call = opened.unary_unary(grpc_service.METHODS["SendMessage"].path)(
                send_request("whoami").SerializeToString(),
                metadata=(*V1, ("a2a-extensions", f"{EXTENSION}, urn:unknown")),
            )
            answer = a2a_pb2.SendMessageResponse.FromString(await call)
            assert answer.message.parts[0].text == f"None|{EXTENSION},urn:unknown"
            initial = dict(await call.initial_metadata())
            assert initial["a2a-extensions"] == EXTENSION  # only what the agent declares


async def test_streams_of_many_clients_at_once() -> None:
    """Twenty concurrent streams: every one complete and in order."""

    async def one(opened: grpc.aio.Channel, results: list[list[str]]) -> None:
        outcome = await raw_stream(
            opened,
            "SendStreamingMessage",
            send_request(f"stream {uuid.uuid4()}").SerializeToString(),
        )
        assert outcome.code == grpc.StatusCode.OK
        results.append(
            [a2a_pb2.StreamResponse.FromString(m).WhichOneof("payload") for m in outcome.messages]
        )

    with anyio.fail_after(TIMEOUT * 2):
        async with grpc_served() as served, channel(served.address) as opened:
            results: list[list[str]] = []
            async with anyio.create_task_group() as tg:
                for _ in range(20):
                    tg.start_soon(one, opened, results)
            expected = ["task", "status_update", *["artifact_update"] * 3, "status_update"]
            assert results == [expected] * 20


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_serve_refuses_grpc_on_trio() -> None:
    config = ServerConfig(grpc=GrpcOptions())
    with pytest.raises(ValueError, match=r"^gRPC is served on asyncio \(grpcio's grpc\.aio\)"):
        await serve(scenario_agent, config=config)


async def test_a_deadline_cancels_the_call_not_the_task() -> None:
    """gRPC cancels the server's handler when the deadline passes; the task goes on."""
    with anyio.fail_after(TIMEOUT):
        async with grpc_served() as served, channel(served.address) as opened:
            send = opened.unary_unary(grpc_service.METHODS["SendMessage"].path)
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await send(send_request("sleep").SerializeToString(), metadata=V1, timeout=0.2)
            assert info.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
            async with sdk_transport(served) as sdk:
                listed = await sdk.list_tasks(a2a_pb2.ListTasksRequest())
                assert [t.status.state for t in listed.tasks] == [a2a_pb2.TASK_STATE_WORKING]
                canceled = await sdk.cancel_task(a2a_pb2.CancelTaskRequest(id=listed.tasks[0].id))
                assert canceled.status.state == a2a_pb2.TASK_STATE_CANCELED


async def test_server_reflection_lists_the_service() -> None:
    """grpcurl-style tools discover the service and its messages without the .proto."""
    from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (  # type: ignore[import-untyped]
        ProtoReflectionDescriptorDatabase,
    )

    with anyio.fail_after(TIMEOUT):
        async with grpc_served() as served:

            def discover() -> tuple[list[str], str]:
                with grpc.insecure_channel(served.address) as sync_channel:
                    database = ProtoReflectionDescriptorDatabase(sync_channel)
                    services = sorted(database.get_services())
                    found = database.FindFileContainingSymbol("lf.a2a.v1.A2AService")
                    return services, found.name

            services, file_name = await anyio.to_thread.run_sync(discover)
            assert "lf.a2a.v1.A2AService" in services
            assert file_name.endswith("a2a.proto")


async def _headers_agent(ctx: TaskContext) -> None:
    await ctx.reply(f"{ctx.headers.get('traceparent')}|{ctx.tenant}")


async def test_trace_context_and_tenant_reach_the_agent() -> None:
    traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    request = send_request("hi")
    request.tenant = "acme"
    with anyio.fail_after(TIMEOUT):
        async with grpc_served(_headers_agent) as served, channel(served.address) as opened:
            answer = await opened.unary_unary(grpc_service.METHODS["SendMessage"].path)(
                request.SerializeToString(), metadata=(*V1, ("traceparent", traceparent))
            )
            reply = a2a_pb2.SendMessageResponse.FromString(answer).message
            assert reply.parts[0].text == f"{traceparent}|acme"
