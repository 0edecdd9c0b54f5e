"""The gRPC binding of A2A 1.0, as a client
:class:`~.transport.Transport` over ``grpc.aio``.

Imported only when a gRPC interface is used (see :mod:`a2a_actors.client._transports.grpc_binding`):
it needs the ``grpc`` extra (``grpcio``, ``grpcio-status`` and the official SDK's generated
``a2a.types.a2a_pb2`` / ``a2a_pb2_grpc``). Requests and results are our msgspec Structs, converted
to and from the SDK's protobuf messages by :mod:`a2a_actors.protocol._protobuf`.

The wire, per the ``lf.a2a.v1.A2AService`` of the spec's ``a2a.proto``:

* every method is the stub method of the same name; SendStreamingMessage and
  SubscribeToTask are server-streaming, the rest unary (DeleteTaskPushNotificationConfig
  answers ``google.protobuf.Empty``);
* the interface URL is ``host:port`` (``grpc://host:port`` too); ``grpcs://`` or
  ``https://`` selects TLS with the system roots, or pass ``credentials``;
* metadata: ``a2a-version`` (``1.0``), ``a2a-extensions`` (comma-separated URIs), the
  headers of :func:`~a2a_actors.client._transports.transport.request_headers` (lower-cased), and the
  credentials the client's ``httpx.Auth`` would add to an HTTP request (``authorization``, the API
  key's header, ``cookie``; a query-placed API key travels as metadata of the same name). The auth
  runs before every call, so a hook that refreshes a token is honoured per call;
* errors: a status other than OK becomes the typed error named by the
  ``google.rpc.ErrorInfo`` reason in ``grpc-status-details-bin`` (``remote=True``, ``data``
  the Status details as ProtoJSON dicts, as the JSON bindings give them), else the class of
  the status code (:func:`a2a_actors.protocol._grpc_status.error_from_status`, the one table);
  UNAVAILABLE, DEADLINE_EXCEEDED and a CANCELLED we did not ask for become
  :class:`~a2a_actors.client._errors.A2AConnectionError`.

Timeouts (:class:`~a2a_actors.client._transports.transport.Timeouts`): ``connect`` bounds the wait
for the channel's connection before its first call (a refused connection fails at once); ``read`` is
a unary call's deadline; ``stream_read`` bounds the wait for each stream event (none by default).
Each is an :class:`~a2a_actors.client._errors.A2AConnectionError` when exceeded.

Streams: entering reads the first event, so an error the server sends before any event (an
unknown or terminal task, a refused call) is raised on entering, as for the HTTP bindings;
leaving the ``async with`` cancels the call when it has not ended, so the server stops
sending.

Event loops: ``grpc.aio`` runs on asyncio. Under asyncio the channel lives on the caller's loop;
under trio on a private asyncio loop in a thread of the transport's own
(:mod:`a2a_actors.client._transports.grpc_loop`). The channel (and that loop) is opened on first use
and closed by :meth:`GRPCTransport.aclose`; use one transport from one event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any, TypeVar, cast

import anyio
import grpc
import grpc.aio
import httpx
from a2a.types import a2a_pb2_grpc
from google.protobuf.message import DecodeError
from google.rpc import status_pb2

from a2a_actors._version import __version__
from a2a_actors.client._errors import A2AConnectionError, apply_retry_after
from a2a_actors.client._transports.grpc_loop import LoopRunner, runner_for_current_loop
from a2a_actors.client._transports.transport import (
    EventSource,
    Timeouts,
    current_request_headers,
    is_none_type,
)
from a2a_actors.protocol import _grpc_status as grpc_status, _protobuf as protobuf
from a2a_actors.protocol._card import AgentInterface
from a2a_actors.protocol._errors import A2AError, InternalError, MethodNotFoundError
from a2a_actors.protocol._models import StreamResponse

__all__ = ("DEFAULT_MAX_MESSAGE_BYTES", "GRPCTransport", "error_from_grpc")

R = TypeVar("R")

#: The largest message either side of the channel accepts by default (gRPC's own is 4 MiB).
DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
_AUTH_PROBE_URL = "http://grpc.invalid/"
_SECURE_SCHEMES = ("grpcs://", "https://")
_PLAIN_SCHEMES = ("grpc://", "http://")

#: Statuses about the connection rather than the call (DEADLINE_EXCEEDED: see below).
_CONNECTION_CODES = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED})


def error_from_grpc(exc: grpc.aio.AioRpcError, *, target: str) -> A2AError:
    """The typed error for a failed call (see the module docstring)."""
    code = exc.code()
    text = exc.details() or code.name
    if code is grpc.StatusCode.DEADLINE_EXCEEDED:
        return A2AConnectionError(f"timed out talking to {target}: {code.name}")
    if code in _CONNECTION_CODES:
        return A2AConnectionError(f"call to {target} failed: {code.name}: {text}")
    trailers = {str(k): v for k, v in (exc.trailing_metadata() or ())}
    status = status_pb2.Status(code=code.value[0], message=text)
    raw = trailers.get(grpc_status.STATUS_DETAILS_KEY)
    if isinstance(raw, bytes):
        with contextlib.suppress(DecodeError):  # malformed: the status code still says enough
            status = status_pb2.Status.FromString(raw)
    error = grpc_status.error_from_status(status)
    headers = {k: v for k, v in trailers.items() if isinstance(v, str)}
    return apply_retry_after(error, headers)


class GRPCTransport:
    """A2A 1.0 over gRPC (``protocolBinding: "GRPC"``), from asyncio or trio.

    Args:
        interface: The interface spoken to; its ``url`` is ``host:port``.
        auth: Credentials as an ``httpx.Auth`` (see :mod:`a2a_actors.client._auth`); sent as
        metadata.
        timeouts: Connection wait, unary deadline and stream idle timeout.
        version: The ``a2a-version`` value, or ``None`` to send none.
        credentials: ``grpc.ChannelCredentials`` for TLS (own roots, client certificates);
            by default the URL's scheme decides (``grpcs://``: system roots).
        max_message_bytes: The largest message sent or received.
    """

    def __init__(
        self,
        interface: AgentInterface,
        *,
        auth: httpx.Auth | None = None,
        timeouts: Timeouts | None = None,
        version: str | None = "1.0",
        credentials: grpc.ChannelCredentials | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self._interface = interface
        self._auth = auth
        self._timeouts = timeouts or Timeouts()
        self._version = version
        self._target, secure = _target(interface.url)
        if credentials is None and secure:
            credentials = grpc.ssl_channel_credentials()
        self._credentials = credentials
        self._max_bytes = max_message_bytes
        self._runner: LoopRunner | None = None
        self._channel: grpc.aio.Channel | None = None
        self._stub: Any = None
        self._connecting: asyncio.Future[None] | None = None

    @property
    def interface(self) -> AgentInterface:
        """The interface spoken to."""
        return self._interface

    @property
    def target(self) -> str:
        """The ``host:port`` the channel connects to."""
        return self._target

    async def aclose(self) -> None:
        """Close the channel (cancelling calls still open) and any loop of our own."""
        runner, self._runner = self._runner, None
        if runner is None:
            return
        try:
            await runner.run(self._close_channel)
        finally:
            await runner.aclose()

    async def _close_channel(self) -> None:
        connecting, channel = self._connecting, self._channel
        self._connecting, self._channel, self._stub = None, None, None
        if connecting is not None:
            connecting.cancel()
        if channel is not None:
            await channel.close()

    # -- calls -----------------------------------------------------------------------------

    async def call(
        self,
        method: str,
        params: object,
        result_type: type[R],
        *,
        extensions: Sequence[str] = (),
    ) -> R:
        """Perform one unary method (see :class:`~.transport.Transport`)."""
        request = protobuf.to_proto(cast(Any, params))
        metadata = await self._metadata(extensions)
        runner, multicallable = await self._method(method)
        deadline = self._timeouts.read
        try:
            reply = await runner.run(
                lambda: multicallable(request, metadata=metadata, timeout=deadline)
            )
        except grpc.aio.AioRpcError as exc:
            raise error_from_grpc(exc, target=self._target) from None
        if is_none_type(result_type):
            return cast(R, None)
        return _decode(reply, result_type)

    def stream(self, method: str, params: object, *, extensions: Sequence[str] = ()) -> EventSource:
        """Open SendStreamingMessage or SubscribeToTask (see :class:`~.transport.Transport`)."""
        return self._open_stream(method, params, extensions)

    @contextlib.asynccontextmanager
    async def _open_stream(
        self, method: str, params: object, extensions: Sequence[str]
    ) -> AsyncIterator[AsyncIterator[StreamResponse]]:
        request = protobuf.to_proto(cast(Any, params))
        metadata = await self._metadata(extensions)
        runner, multicallable = await self._method(method)

        async def start() -> Any:
            return multicallable(request, metadata=metadata)

        call = await runner.run(start)
        events = _StreamEvents(call, runner, self._target, self._timeouts.stream_read)
        try:
            await events.prefetch()
            yield events
        finally:
            if not events.ended:
                runner.call_soon(call.cancel)

    # -- plumbing --------------------------------------------------------------------------

    async def _method(self, method: str) -> tuple[LoopRunner, Any]:
        if self._runner is None:
            self._runner = runner_for_current_loop()
        runner = self._runner
        stub = self._stub if self._stub is not None else await runner.run(self._open_stub)
        multicallable = getattr(stub, method, None)
        if multicallable is None:
            raise MethodNotFoundError(f"no gRPC method {method!r}")
        return runner, multicallable

    async def _open_stub(self) -> Any:
        # Runs on the loop that owns the channel. Opening is atomic (no await before the
        # stub is set), so concurrent first calls share one channel and one connection wait.
        if self._stub is None:
            options = [
                ("grpc.max_send_message_length", self._max_bytes),
                ("grpc.max_receive_message_length", self._max_bytes),
                ("grpc.primary_user_agent", f"a2a-actors/{__version__}"),
            ]
            if self._credentials is not None:
                channel = grpc.aio.secure_channel(self._target, self._credentials, options=options)
            else:
                channel = grpc.aio.insecure_channel(self._target, options=options)
            self._channel = channel
            self._stub = a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
            self._connecting = asyncio.ensure_future(
                _connect(channel, self._target, self._timeouts.connect)
            )
        stub, connecting = self._stub, self._connecting
        if connecting is not None:
            try:
                await asyncio.shield(connecting)
            except A2AConnectionError:
                # Start afresh next time, with a new connection wait.
                if self._stub is stub:
                    channel, self._channel, self._stub = self._channel, None, None
                    if channel is not None:
                        await channel.close()
                raise
            finally:
                if self._connecting is connecting and connecting.done():
                    self._connecting = None
        return stub

    async def _metadata(self, extensions: Sequence[str]) -> list[tuple[str, str]]:
        metadata: list[tuple[str, str]] = []
        if self._version is not None:
            metadata.append(("a2a-version", self._version))
        if extensions:
            metadata.append(("a2a-extensions", ", ".join(dict.fromkeys(extensions))))
        extra = current_request_headers()
        if extra:
            metadata.extend((name.lower(), value) for name, value in extra.items())
        if self._auth is not None:
            metadata.extend(await _credentials(self._auth))
        return metadata


class _StreamEvents:
    """The decoded events of one server-streaming call, the first one read ahead."""

    def __init__(
        self, call: Any, runner: LoopRunner, target: str, idle_timeout: float | None
    ) -> None:
        self._call = call
        self._runner = runner
        self._target = target
        self._idle = idle_timeout
        self._ahead: StreamResponse | None = None
        self.ended = False  #: the server ended the call (or it failed): nothing to cancel

    def __aiter__(self) -> _StreamEvents:
        return self

    async def prefetch(self) -> None:
        """Read the first event now, so that an early error is raised by the caller."""
        self._ahead = await self._read()

    async def __anext__(self) -> StreamResponse:
        ahead, self._ahead = self._ahead, None
        event = ahead if ahead is not None else await self._read()
        if event is None:
            raise StopAsyncIteration
        return event

    async def _read(self) -> StreamResponse | None:
        if self.ended:
            return None
        try:
            with anyio.fail_after(self._idle):
                message = await self._runner.run(self._call.read)
        except TimeoutError:
            raise A2AConnectionError(
                f"timed out talking to {self._target}: no stream event in {self._idle:g} s"
            ) from None
        except grpc.aio.AioRpcError as exc:
            self.ended = True
            raise error_from_grpc(exc, target=self._target) from None
        if message is grpc.aio.EOF:
            self.ended = True
            return None
        return _decode(message, StreamResponse)


async def _connect(channel: grpc.aio.Channel, target: str, timeout: float | None) -> None:
    """Wait until ``channel`` is connected: at most ``timeout`` seconds, failing at once when
    the connection is refused (TRANSIENT_FAILURE), as a fail-fast call would."""

    async def ready() -> None:
        state = channel.get_state(try_to_connect=True)
        while state is not grpc.ChannelConnectivity.READY:
            if state in (
                grpc.ChannelConnectivity.TRANSIENT_FAILURE,
                grpc.ChannelConnectivity.SHUTDOWN,
            ):
                raise A2AConnectionError(f"connection to {target} failed: UNAVAILABLE")
            await channel.wait_for_state_change(state)
            state = channel.get_state(try_to_connect=True)

    try:
        await asyncio.wait_for(ready(), timeout)
    except TimeoutError:
        raise A2AConnectionError(
            f"timed out connecting to {target}: not connected within {timeout:g} s"
        ) from None


def _decode(message: Any, result_type: type[R]) -> R:
    try:
        return cast(R, protobuf.from_proto(message, cast(Any, result_type)))
    except (A2AError, TypeError) as exc:
        raise InternalError(f"invalid result from peer: {exc}") from None


def _target(url: str) -> tuple[str, bool]:
    """``host:port`` and whether TLS is asked for, from an interface URL."""
    for scheme in _SECURE_SCHEMES:
        if url.startswith(scheme):
            return url.removeprefix(scheme).rstrip("/"), True
    for scheme in _PLAIN_SCHEMES:
        if url.startswith(scheme):
            return url.removeprefix(scheme).rstrip("/"), False
    return url.rstrip("/"), False


async def _credentials(auth: httpx.Auth) -> list[tuple[str, str]]:
    """The metadata ``auth`` would add to an HTTP request: its headers and query."""
    probe = httpx.Request("GET", _AUTH_PROBE_URL)
    before = set(probe.headers.keys())
    flow = auth.async_auth_flow(probe)
    try:
        sent = await flow.__anext__()
    finally:
        await flow.aclose()
    pairs = [(k.lower(), v) for k, v in sent.headers.items() if k.lower() not in before]
    pairs += [(k.lower(), v) for k, v in sent.url.params.multi_items()]
    return pairs
