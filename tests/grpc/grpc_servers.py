"""gRPC servers for the client tests, each on 127.0.0.1 port 0 in a thread of its own.

* :func:`run_sdk_grpc_server`: the official a2a-sdk's gRPC service (its
  ``DefaultRequestHandler`` behind its ``GrpcHandler``) serving the interop scenario agent
  :class:`tests.interop.sdk_server.RoutingExecutor` (``input…`` asks a question, ``sleep…``
  waits to be canceled, ``stream…`` streams three chunks, ``message…`` answers with a
  Message, anything else echoes). Assembled from the SDK's public API; nothing copied.
* :func:`run_fake_grpc_server`: :class:`FakeService`, a real ``A2AService`` servicer of our
  own whose answers the tests choose, recording what the client sent (metadata) and whether
  a stream was cancelled by the client: for what a well-behaved agent never does.
* :func:`run_our_grpc_server`: our server (``a2a_actors.server._serve`` with
  ``ServerConfig.grpc``, on asyncio) serving the client suite's scenario agent
  (tests/client/ours.py) with push configs and an extended card; yields its HTTP base URL,
  whose card lists the GRPC interface.

Each server has its own asyncio loop in its own thread, so these *sync* context managers
serve trio and asyncio tests alike; startup and shutdown wait on ``threading`` primitives
(no sleeps).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

import grpc
import grpc.aio
import httpx
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
)
from a2a.types import a2a_pb2, a2a_pb2_grpc
from google.protobuf import any_pb2, duration_pb2
from google.rpc import error_details_pb2, status_pb2

from tests.interop.sdk_server import RoutingExecutor, build_agent_card

__all__ = (
    "FakeService",
    "GrpcServer",
    "run_fake_grpc_server",
    "run_grpc_server",
    "run_our_grpc_server",
    "run_sdk_grpc_server",
    "sdk_grpc_card",
)

_STARTUP_TIMEOUT_S: Final = 10.0
_SHUTDOWN_TIMEOUT_S: Final = 10.0

#: Builds the services of a server (on its loop) and returns what to await when it stops.
Setup = Callable[[grpc.aio.Server, str], Awaitable[Callable[[], Awaitable[None]]]]


@dataclass(frozen=True, slots=True)
class GrpcServer:
    """A running gRPC server."""

    port: int
    target: str  #: ``127.0.0.1:PORT``: a card's gRPC interface URL
    card: a2a_pb2.AgentCard  #: one GRPC 1.0 interface at ``target``


def sdk_grpc_card(target: str, *, extended: bool = False) -> a2a_pb2.AgentCard:
    """The interop scenario card with one GRPC interface at ``target``."""
    card = build_agent_card(f"http://{target}", extended=extended)
    del card.supported_interfaces[:]
    card.supported_interfaces.append(
        a2a_pb2.AgentInterface(url=target, protocol_binding="GRPC", protocol_version="1.0")
    )
    return card


@contextlib.contextmanager
def run_grpc_server(setup: Setup) -> Iterator[GrpcServer]:
    """Start a ``grpc.aio`` server on 127.0.0.1:0 in a thread, ``setup`` adding its services."""
    ready = threading.Event()
    started: list[tuple[int, asyncio.AbstractEventLoop, asyncio.Event]] = []
    errors: list[BaseException] = []

    async def main() -> None:
        server = grpc.aio.server()
        port = server.add_insecure_port("127.0.0.1:0")
        cleanup = await setup(server, f"127.0.0.1:{port}")
        stop = asyncio.Event()
        await server.start()
        started.append((port, asyncio.get_running_loop(), stop))
        ready.set()
        try:
            await stop.wait()
        finally:
            await server.stop(grace=None)
            await cleanup()

    def target() -> None:
        try:
            asyncio.run(main())
        except BaseException as exc:  # reported to the caller thread
            errors.append(exc)
        finally:
            ready.set()

    thread = threading.Thread(target=target, name="test-grpc-server", daemon=True)
    thread.start()
    try:
        if not ready.wait(_STARTUP_TIMEOUT_S) or not started:
            raise RuntimeError(f"gRPC server failed to start: {errors!r}")
        port = started[0][0]
        address = f"127.0.0.1:{port}"
        yield GrpcServer(port=port, target=address, card=sdk_grpc_card(address))
    finally:
        if started:
            _, loop, stop = started[0]
            with contextlib.suppress(RuntimeError):  # the loop already ended
                loop.call_soon_threadsafe(stop.set)
        thread.join(_SHUTDOWN_TIMEOUT_S)
        if thread.is_alive():  # pragma: no cover - only on a wedged shutdown
            raise RuntimeError("gRPC server thread did not stop")
    if errors:  # pragma: no cover
        raise RuntimeError("gRPC server thread failed") from errors[0]


@contextlib.contextmanager
def run_sdk_grpc_server() -> Iterator[GrpcServer]:
    """The official SDK's gRPC service with push configs and an extended card."""

    async def setup(server: grpc.aio.Server, target: str) -> Callable[[], Awaitable[None]]:
        push_store = InMemoryPushNotificationConfigStore()
        push_http = httpx.AsyncClient(timeout=5.0)
        handler = DefaultRequestHandler(
            agent_executor=RoutingExecutor(),
            task_store=InMemoryTaskStore(),
            agent_card=sdk_grpc_card(target),
            push_config_store=push_store,
            push_sender=BasePushNotificationSender(push_http, push_store),
            extended_agent_card=sdk_grpc_card(target, extended=True),
        )
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)  # type: ignore[no-untyped-call]

        async def cleanup() -> None:
            await handler.aclose()
            await push_http.aclose()

        return cleanup

    with run_grpc_server(setup) as server:
        yield server


# --------------------------------------------------------------------------- the fake


def rich_status(
    code: grpc.StatusCode, message: str, *details: Any
) -> tuple[grpc.StatusCode, str, tuple[tuple[str, bytes], ...]]:
    """``abort`` arguments for a status with ``google.rpc`` details (ErrorInfo …)."""
    status = status_pb2.Status(code=code.value[0], message=message)
    for detail in details:
        packed = any_pb2.Any()
        packed.Pack(detail)
        status.details.append(packed)
    return code, message, (("grpc-status-details-bin", status.SerializeToString()),)


def _task(task_id: str) -> a2a_pb2.Task:
    return a2a_pb2.Task(
        id=task_id,
        context_id="ctx",
        status=a2a_pb2.TaskStatus(state=a2a_pb2.TASK_STATE_WORKING),
    )


@dataclass
class FakeService(a2a_pb2_grpc.A2AServiceServicer):
    """An A2AService whose SendMessage answer is chosen by the message text.

    ``"echo …"``: a Message with the same text. ``"slow"``: answers after 30 s (for
    deadlines). ``"status CODE"``: aborts with that status and no details. ``"busy"``:
    RESOURCE_EXHAUSTED with ErrorInfo SERVER_BUSY and a 2.5 s RetryInfo. ``"denied"``:
    PERMISSION_DENIED with an ErrorInfo of another domain. ``"bad"``: a Task whose state
    is not a TaskState. SendStreamingMessage sends task ``t-cut`` WORKING, then fails
    UNAVAILABLE (a cut stream); SubscribeToTask sends ``t-cut`` COMPLETED, or for any other
    task a WORKING snapshot and then waits until the client leaves (``cancelled`` is set
    when it does). ``metadata`` holds each call's metadata,
    ``tenants`` each SendMessage's ``tenant``.
    """

    metadata: list[dict[str, str]] = field(default_factory=list)
    tenants: list[str] = field(default_factory=list)
    cancelled: threading.Event = field(default_factory=threading.Event)

    def _record(self, context: grpc.aio.ServicerContext) -> None:
        self.metadata.append(dict(context.invocation_metadata() or ()))

    async def SendMessage(
        self, request: a2a_pb2.SendMessageRequest, context: grpc.aio.ServicerContext
    ) -> a2a_pb2.SendMessageResponse:
        self._record(context)
        self.tenants.append(request.tenant)
        text = request.message.parts[0].text if request.message.parts else ""
        if text == "slow":
            await asyncio.sleep(30)
        if text.startswith("status "):
            await context.abort(grpc.StatusCode[text.split()[1]], f"plain {text}")
        if text == "busy":
            delay = duration_pb2.Duration(seconds=2, nanos=500_000_000)
            info = error_details_pb2.ErrorInfo(reason="SERVER_BUSY", domain="a2a-protocol.org")
            code, message, trailers = rich_status(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "too many tasks",
                info,
                error_details_pb2.RetryInfo(retry_delay=delay),
            )
            context.set_trailing_metadata(trailers)
            await context.abort(code, message)
        if text == "denied":
            info = error_details_pb2.ErrorInfo(reason="NOT_YOURS", domain="example.com")
            code, message, trailers = rich_status(
                grpc.StatusCode.PERMISSION_DENIED, "not for you", info
            )
            context.set_trailing_metadata(trailers)
            await context.abort(code, message)
        if text == "bad":
            task = _task("t-bad")
            task.status.state = 99  # type: ignore[assignment]
            return a2a_pb2.SendMessageResponse(task=task)
        reply = a2a_pb2.Message(
            message_id="m-reply", role=a2a_pb2.ROLE_AGENT, parts=[a2a_pb2.Part(text=text)]
        )
        return a2a_pb2.SendMessageResponse(message=reply)

    async def SendStreamingMessage(
        self, request: a2a_pb2.SendMessageRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[a2a_pb2.StreamResponse]:
        self._record(context)
        yield a2a_pb2.StreamResponse(task=_task("t-cut"))
        await context.abort(grpc.StatusCode.UNAVAILABLE, "connection lost")

    async def SubscribeToTask(
        self, request: a2a_pb2.SubscribeToTaskRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[a2a_pb2.StreamResponse]:
        self._record(context)
        if request.id == "t-cut":  # the task of the cut stream, finished meanwhile
            task = _task(request.id)
            task.status.state = a2a_pb2.TASK_STATE_COMPLETED
            yield a2a_pb2.StreamResponse(task=task)
            return
        yield a2a_pb2.StreamResponse(task=_task(request.id))
        try:
            await asyncio.Event().wait()  # until the client goes away
        except asyncio.CancelledError:
            self.cancelled.set()
            raise


@contextlib.contextmanager
def run_fake_grpc_server() -> Iterator[tuple[GrpcServer, FakeService]]:
    """:class:`FakeService` on 127.0.0.1:0."""
    service = FakeService()

    async def setup(server: grpc.aio.Server, target: str) -> Callable[[], Awaitable[None]]:
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(service, server)  # type: ignore[no-untyped-call]

        async def cleanup() -> None:
            return None

        return cleanup

    with run_grpc_server(setup) as server:
        yield server, service


# --------------------------------------------------------------------------- ours


@contextlib.contextmanager
def run_our_grpc_server() -> Iterator[str]:
    """Our server with gRPC, serving the scenario agent, on asyncio in a thread; its URL."""
    import anyio
    import anyio.from_thread
    import anyio.lowlevel

    from a2a_actors.server import ServedAgent, serve
    from a2a_actors.server._config.grpc import GrpcOptions
    from tests.client.ours import default_config, scenario_agent

    served = ServedAgent(scenario_agent, default_config(grpc=GrpcOptions(port=0)))
    ready = threading.Event()
    found: list[str] = []
    errors: list[BaseException] = []
    running: list[tuple[anyio.lowlevel.EventLoopToken, anyio.CancelScope]] = []

    async def main() -> None:
        with anyio.CancelScope() as scope:
            running.append((anyio.lowlevel.current_token(), scope))
            async with anyio.create_task_group() as tg:
                found.append(await tg.start(serve, served))
                ready.set()

    def target() -> None:
        try:
            anyio.run(main, backend="asyncio")
        except BaseException as exc:  # reported to the caller thread
            errors.append(exc)
        finally:
            ready.set()

    thread = threading.Thread(target=target, name="our-grpc-server", daemon=True)
    thread.start()
    try:
        if not ready.wait(_STARTUP_TIMEOUT_S) or not found:
            raise RuntimeError(f"our gRPC server failed to start: {errors!r}")
        yield found[0]
    finally:
        if running and thread.is_alive():
            token, scope = running[0]
            anyio.from_thread.run_sync(scope.cancel, token=token)
        thread.join(_SHUTDOWN_TIMEOUT_S)
        if thread.is_alive():  # pragma: no cover - only on a wedged shutdown
            raise RuntimeError("our gRPC server thread did not stop")
    if errors:  # pragma: no cover
        raise RuntimeError("our gRPC server thread failed") from errors[0]
