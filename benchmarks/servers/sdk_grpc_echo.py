"""The official a2a-sdk's gRPC service with the echo agent: the reference gRPC setup.

    python benchmarks/servers/sdk_grpc_echo.py [--host 127.0.0.1] [--trivial]

Prints one line on stdout, ``grpc://HOST:PORT``, once the ``grpc.aio`` server accepts calls;
stops on SIGTERM or SIGINT. The service is the SDK's ``GrpcHandler`` over its
``DefaultRequestHandler`` and ``InMemoryTaskStore``, with the echo executor of
``sdk_echo.py`` (WORKING, an artifact ``"echo"`` holding the text, COMPLETED).

``--trivial`` serves a fixed answer instead (a completed Task for SendMessage, a fixed
three-event stream for SendStreamingMessage) from bare ``grpc.aio`` generic handlers: the
load generator's ceiling, what no A2A server on ``grpc.aio`` can beat.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import AsyncIterator
from typing import Any

import grpc
import grpc.aio
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import a2a_pb2, a2a_pb2_grpc
from sdk_echo import EchoExecutor, build_card

_SERVICE = "lf.a2a.v1.A2AService"


def _card(target: str) -> a2a_pb2.AgentCard:
    card = build_card(f"http://{target}")
    del card.supported_interfaces[:]
    card.supported_interfaces.append(
        a2a_pb2.AgentInterface(url=target, protocol_binding="GRPC", protocol_version="1.0")
    )
    return card


def _fixed_answers() -> tuple[bytes, list[bytes]]:
    status = a2a_pb2.TaskStatus(state=a2a_pb2.TASK_STATE_COMPLETED)
    task = a2a_pb2.Task(id="t", context_id="c", status=status)
    reply = a2a_pb2.SendMessageResponse(task=task).SerializeToString()
    working = a2a_pb2.TaskStatusUpdateEvent(
        task_id="t", context_id="c", status=a2a_pb2.TaskStatus(state=a2a_pb2.TASK_STATE_WORKING)
    )
    done = a2a_pb2.TaskStatusUpdateEvent(task_id="t", context_id="c", status=status)
    events = [
        a2a_pb2.StreamResponse(task=task),
        a2a_pb2.StreamResponse(status_update=working),
        a2a_pb2.StreamResponse(status_update=done),
    ]
    return reply, [event.SerializeToString() for event in events]


def _trivial_handler() -> grpc.GenericRpcHandler:
    reply, events = _fixed_answers()

    async def send(request: bytes, context: Any) -> bytes:
        return reply

    async def stream(request: bytes, context: Any) -> AsyncIterator[bytes]:
        for event in events:
            yield event

    return grpc.method_handlers_generic_handler(
        _SERVICE,
        {
            "SendMessage": grpc.unary_unary_rpc_method_handler(send),
            "SendStreamingMessage": grpc.unary_stream_rpc_method_handler(stream),
        },
    )


async def serve(host: str, trivial: bool) -> None:
    server = grpc.aio.server()
    port = server.add_insecure_port(f"{host}:0")
    target = f"{host}:{port}"
    if trivial:
        server.add_generic_rpc_handlers((_trivial_handler(),))
    else:
        card = _card(target)
        handler = DefaultRequestHandler(
            agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=card
        )
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)  # type: ignore[no-untyped-call]
    await server.start()
    print(f"grpc://{target}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()
    await server.stop(grace=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="the official a2a-sdk gRPC echo server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--trivial", action="store_true", help="fixed answers (loadgen ceiling)")
    args = parser.parse_args(argv)
    asyncio.run(serve(args.host, args.trivial))
    return 0


if __name__ == "__main__":
    sys.exit(main())
