"""Helpers of the gRPC server tests: our server on 127.0.0.1 port 0, the SDK's transport and
raw calls (bytes in, status out) against it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio
import grpc
import grpc.aio
from a2a.client.transports.grpc import GrpcTransport
from a2a.types import a2a_pb2
from google.rpc import error_details_pb2, status_pb2

from a2a_actors.protocol import (
    _grpc_service as grpc_service,
    _grpc_status as grpc_status,
    _protobuf as protobuf,
)
from a2a_actors.server import GrpcOptions, ServerConfig, create_app, serve, service_of
from a2a_actors.server._service import A2AService
from tests.server.agents import scenario_agent

TIMEOUT = 15.0
V1: tuple[tuple[str, str], ...] = (("a2a-version", "1.0"),)


@dataclass(frozen=True, slots=True)
class Served:
    """Our server, serving HTTP and gRPC."""

    url: str  #: the HTTP base URL
    address: str  #: the gRPC address (``127.0.0.1:PORT``)
    service: A2AService


@asynccontextmanager
async def grpc_served(
    target: object = scenario_agent, config: ServerConfig | None = None
) -> AsyncIterator[Served]:
    """``serve`` with gRPC on for the block (an asyncio test)."""
    config = (config or ServerConfig()).replace(grpc=GrpcOptions())
    app = create_app(target, config)
    service = service_of(app)
    async with anyio.create_task_group() as tg:
        url: str = await tg.start(partial(serve, app))
        address = service.cards.grpc_address
        assert address is not None
        try:
            yield Served(url, address, service)
        finally:
            tg.cancel_scope.cancel()


@asynccontextmanager
async def channel(address: str) -> AsyncIterator[grpc.aio.Channel]:
    """An insecure channel to ``address``, closed after the block."""
    async with grpc.aio.insecure_channel(address) as opened:
        yield opened


@asynccontextmanager
async def sdk_transport(served: Served) -> AsyncIterator[GrpcTransport]:
    """The official SDK's gRPC transport, given our card (as the SDK's protobuf)."""
    card = protobuf.to_proto(served.service.cards.public(served.url))
    assert isinstance(card, a2a_pb2.AgentCard)
    async with channel(served.address) as opened:
        yield GrpcTransport(opened, card)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a raw call ended with."""

    code: grpc.StatusCode
    details: str
    status: status_pb2.Status | None
    trailing: dict[str, Any]
    messages: list[bytes]

    @property
    def reason(self) -> str:
        """The ErrorInfo reason ('' when there is none)."""
        for detail in self.status.details if self.status is not None else ():
            info = error_details_pb2.ErrorInfo()
            if detail.Unpack(info):
                assert info.domain == "a2a-protocol.org"
                reason: str = info.reason
                return reason
        return ""

    @property
    def field(self) -> str:
        """The first BadRequest field violation ('' when there is none)."""
        for detail in self.status.details if self.status is not None else ():
            bad = error_details_pb2.BadRequest()
            if detail.Unpack(bad):
                field: str = bad.field_violations[0].field
                return field
        return ""


def _outcome(call: Any, messages: list[bytes]) -> Any:
    async def read() -> Outcome:
        trailing = dict(await call.trailing_metadata() or ())
        raw = trailing.get(grpc_status.STATUS_DETAILS_KEY)
        status = None if raw is None else status_pb2.Status.FromString(raw)
        code = await call.code()
        details = await call.details()
        if status is not None:
            assert status.code == code.value[0]
            assert status.message == details
        return Outcome(code, details, status, trailing, messages)

    return read()


async def raw_unary(
    opened: grpc.aio.Channel,
    method: str,
    body: bytes,
    metadata: Sequence[tuple[str, str]] = V1,
) -> Outcome:
    """Call ``method`` with ``body`` as it is; the outcome (an error is not raised)."""
    call = opened.unary_unary(grpc_service.METHODS[method].path)(body, metadata=tuple(metadata))
    try:
        answer = await call
    except grpc.aio.AioRpcError:
        failed: Outcome = await _outcome(call, [])
        return failed
    result: Outcome = await _outcome(call, [answer])
    return result


async def raw_stream(
    opened: grpc.aio.Channel,
    method: str,
    body: bytes,
    metadata: Sequence[tuple[str, str]] = V1,
) -> Outcome:
    """A streaming call read to its end; the messages and the outcome."""
    call = opened.unary_stream(grpc_service.METHODS[method].path)(body, metadata=tuple(metadata))
    messages: list[bytes] = []
    try:
        async for message in call:
            messages.append(message)
    except grpc.aio.AioRpcError:
        pass
    result: Outcome = await _outcome(call, messages)
    return result


def send_request(
    text: str, *, task_id: str = "", return_immediately: bool = False, message_id: str = ""
) -> a2a_pb2.SendMessageRequest:
    """A SendMessageRequest of one user text."""
    import uuid

    request = a2a_pb2.SendMessageRequest(
        message=a2a_pb2.Message(
            message_id=message_id or uuid.uuid4().hex,
            role=a2a_pb2.ROLE_USER,
            parts=[a2a_pb2.Part(text=text)],
            task_id=task_id,
        )
    )
    if return_immediately:
        request.configuration.return_immediately = True
    return request
