"""The JSON-RPC 2.0 binding of A2A 1.0, as a client
:class:`~.transport.Transport`.

Every method is a POST of ``{"jsonrpc":"2.0","id":…,"method":"GetTask","params":{…}}`` to
the interface URL, with ``A2A-Version: 1.0``. A unary reply is one JSON-RPC response (HTTP
200 even for errors, in the SDK); a streaming reply is an SSE stream whose every ``data:`` is
a JSON-RPC response holding one StreamResponse, or an error (the SDK names such an event
``error``; any event whose data holds ``error`` is treated the same way). An error before the
stream starts comes back as a plain JSON body, which is decoded the same way.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TypeVar, cast

from a2a_actors.client._errors import apply_retry_after
from a2a_actors.client._transports.transport import EventSource, HTTPTransport, is_none_type
from a2a_actors.protocol import _jsonrpc as jsonrpc
from a2a_actors.protocol._errors import A2AError
from a2a_actors.protocol._models import StreamResponse
from a2a_actors.protocol._sse import SSEEvent

__all__ = ("JSONRPCTransport",)

R = TypeVar("R")


class JSONRPCTransport(HTTPTransport):
    """A2A 1.0 over JSON-RPC 2.0 (``protocolBinding: "JSONRPC"``).

    Request ids are consecutive integers per transport. Construction arguments are those of
    :class:`~a2a_actors.client._transports.transport.HTTPTransport`.
    """

    _ids = itertools.count(1)

    def _request_body(self, method: str, params: object) -> bytes:
        return jsonrpc.encode_request(next(self._ids), method, params)

    async def call(
        self,
        method: str,
        params: object,
        result_type: type[R],
        *,
        extensions: Sequence[str] = (),
    ) -> R:
        """POST one JSON-RPC request and decode its result (see :class:`~.transport.Transport`)."""
        request = self.build(
            "POST",
            self.interface.url,
            body=self._request_body(method, params),
            extensions=extensions,
        )
        response, body = await self.send(request)
        wanted = None if is_none_type(result_type) else result_type
        try:
            result = jsonrpc.decode_response(body, wanted)
        except A2AError as exc:
            if response.status_code >= 300 and not exc.remote:
                raise self.error(response, body) from None  # not a JSON-RPC body at all
            raise apply_retry_after(exc, response.headers) from None
        if response.status_code >= 300:
            raise self.error(response, body)
        return cast(R, result)

    def stream(self, method: str, params: object, *, extensions: Sequence[str] = ()) -> EventSource:
        """Open SendStreamingMessage or SubscribeToTask (see :class:`~.transport.Transport`)."""
        request = self.build(
            "POST",
            self.interface.url,
            body=self._request_body(method, params),
            extensions=extensions,
            streaming=True,
        )
        return self.open_sse(request, _decode_event, _decode_body)


def _decode_event(event: SSEEvent) -> StreamResponse | None:
    if not event.data.strip():
        return None
    return jsonrpc.decode_response(event.data, StreamResponse)


def _decode_body(body: bytes) -> list[StreamResponse]:
    result = jsonrpc.decode_response(body, StreamResponse)
    return [] if result is None else [result]
