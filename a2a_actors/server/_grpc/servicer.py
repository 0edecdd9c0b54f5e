"""The RPCs of ``lf.a2a.v1.A2AService``, answered through the served agent's methods.

Every RPC of the SDK's service descriptor (:data:`a2a_actors.protocol._grpc_service.METHODS`) gets a
handler that takes the request's raw bytes, so that malformed protobuf is our error
(``INVALID_ARGUMENT`` with ``INVALID_PARAMS``) and not grpcio's, and runs the same method the
JSON-RPC binding runs (:data:`a2a_actors.server._http.jsonrpc.UNARY`,
:data:`a2a_actors.server._http.jsonrpc.STREAMING`: one table of what each method does, over
:class:`~a2a_actors.server._methods.Methods`, observed like every binding).

Checks, in the order of the HTTP bindings (docs/server.md): credentials (the
:class:`~a2a_actors.server._auth.credentials.Authenticator`, JWT key fetch included;
GetExtendedAgentCard may pass without them when the extended card is public), ``a2a-version``
(absent means 0.3, which is not served over gRPC: ``FAILED_PRECONDITION`` /
``VERSION_NOT_SUPPORTED``), the request (``INVALID_ARGUMENT`` with the field path), then the
method's own errors. Every error is the status of the error table
(:func:`~a2a_actors.protocol._grpc_status.error_to_status`): its code and message, and the binary
``google.rpc.Status`` (ErrorInfo, BadRequest, RetryInfo) in the ``grpc-status-details-bin`` trailer;
an ``UNAUTHENTICATED`` also carries ``www-authenticate``. The extensions a call activated are sent
as the ``a2a-extensions`` initial metadata.

Streams (SendStreamingMessage, SubscribeToTask) are served from the call's own task, which enters,
iterates and leaves the runtime stream: an error before the first event ends the call with that
status and no message; one after it ends the call with its status after the events sent. The stream
is tracked by the app's :class:`~a2a_actors.server._http.sse.StreamHub`: at shutdown it ends (status
OK, as SSE streams end), and while the hub accepts no streams it is refused as busy. A client that
goes away cancels the call's task: the runtime stream is left, the task goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, NoReturn

import anyio
import grpc
import grpc.aio

from a2a_actors.protocol import (
    _grpc_service as grpc_service,
    _grpc_status as grpc_status,
    _protobuf as protobuf,
)
from a2a_actors.protocol._errors import UnauthenticatedError
from a2a_actors.protocol._grpc_service import Method
from a2a_actors.protocol._models import WireStruct
from a2a_actors.server._calls import as_a2a_error
from a2a_actors.server._checks import is_supported_v1, requested_version, version_error
from a2a_actors.server._grpc.metadata import EXTENSIONS_KEY, Metadata, NoQuery, error_metadata
from a2a_actors.server._http.jsonrpc import STREAMING, UNARY
from a2a_actors.server._methods import CallContext
from a2a_actors.server._service import A2AService

__all__ = ("A2AServicer",)

_PUBLIC = frozenset({"GetExtendedAgentCard"})
_NO_QUERY = NoQuery()
_CODES = {code.value[0]: code for code in grpc.StatusCode}

Context = grpc.aio.ServicerContext  # untyped (grpcio has no type information)
Handler = Callable[[bytes, Any], Coroutine[Any, Any, Any]]


class A2AServicer:
    """The handlers of every RPC, over one served agent.

    Args:
        service: The served agent (its methods, auth, cards and stream hub).
        base_url: The HTTP base URL of the server (the extended card's interface URLs).
    """

    def __init__(self, service: A2AService, base_url: str) -> None:
        self._service = service
        self._base_url = base_url

    def generic_handler(self) -> Any:
        """grpcio's handler of the whole service (raw bytes in and out)."""
        handlers = {}
        for method in grpc_service.METHODS.values():
            if method.streaming:
                handlers[method.name] = grpc.unary_stream_rpc_method_handler(
                    self._streaming(method)
                )
            else:
                handlers[method.name] = grpc.unary_unary_rpc_method_handler(self._unary(method))
        return grpc.method_handlers_generic_handler(grpc_service.SERVICE, handlers)

    async def _admit(self, context: Any, method: Method) -> CallContext:
        """The call's context once its credentials and version are checked.

        Raises:
            UnauthenticatedError: Credentials missing or refused (and the method needs them).
            VersionNotSupportedError: ``a2a-version`` is not a 1.x version.
        """
        service = self._service
        headers = Metadata(context.invocation_metadata())
        if service.auth.fetches_keys:  # a JWT naming a key not loaded yet: fetch it first
            await service.auth.wait_keys(headers)
        try:
            ctx = service.context_for(headers, self._base_url, binding="grpc")
        except UnauthenticatedError:
            if method.name not in _PUBLIC or not service.extended_card_is_public():
                raise
            ctx = service.anonymous_context_for(headers, self._base_url, binding="grpc")
        version = requested_version(headers, _NO_QUERY)
        if not is_supported_v1(version):
            raise version_error(version)
        return ctx

    async def _abort(self, context: Any, exc: BaseException) -> NoReturn:
        """End the call with the status of ``exc`` (grpcio raises to end the handler)."""
        error = as_a2a_error(exc)
        status = grpc_status.error_to_status(error)
        challenge = (
            self._service.auth.challenge(error) if isinstance(error, UnauthenticatedError) else ""
        )
        trailing = (
            *error_metadata(error, challenge),
            (grpc_status.STATUS_DETAILS_KEY, status.SerializeToString()),
        )
        await context.abort(_CODES[status.code], status.message, trailing_metadata=trailing)
        raise AssertionError("unreachable: grpcio's abort raises")

    async def _send_extensions(self, context: Any, ctx: CallContext) -> None:
        activated = self._service.response_headers(ctx).get("A2A-Extensions")
        if activated:
            await context.send_initial_metadata(((EXTENSIONS_KEY, activated),))

    def _unary(self, method: Method) -> Handler:
        run = UNARY[method.name]
        service = self._service

        async def handle(request: bytes, context: Any) -> bytes:
            try:
                ctx = await self._admit(context, method)
                params = protobuf.decode(request, method.request)
                result = await run(service.methods, params, ctx)
            except Exception as exc:
                await self._abort(context, exc)
            await self._send_extensions(context, ctx)
            if result is None:  # DeleteTaskPushNotificationConfig: google.protobuf.Empty
                return b""
            assert isinstance(result, WireStruct)
            return protobuf.encode(result)

        return handle

    def _streaming(self, method: Method) -> Handler:
        open_stream = STREAMING[method.name]
        service = self._service

        async def handle(request: bytes, context: Any) -> None:
            try:
                ctx = await self._admit(context, method)
                params = protobuf.decode(request, method.request)
                factory = open_stream(service.methods, params, ctx)
            except Exception as exc:
                await self._abort(context, exc)
            with anyio.CancelScope() as scope:  # cancelled by the hub at shutdown
                refused = service.hub.track(scope)
                if refused is not None:
                    await self._abort(context, refused)
                try:
                    async with factory() as events:
                        await self._send_extensions(context, ctx)
                        async for event in events:
                            await context.write(protobuf.encode(event))
                except Exception as exc:
                    await self._abort(context, exc)
                finally:
                    service.hub.untrack(scope)

        return handle
