"""The gRPC server of one served agent, on grpcio's asyncio server (``grpc.aio``).

Life of a :class:`GrpcServer`, driven by :func:`~a2a_actors.server._serve.serve`:

1. built before the HTTP server starts: the port is bound (so ``port=0`` works and a port
   in use fails at once, never shared: ``SO_REUSEPORT`` is off) and the interface is declared on the
   card (:meth:`~a2a_actors.server._card.Cards.declare_grpc`), before any card is served. A port
   that cannot be bound is an ``OSError`` whose ``grpc_address`` attribute is the address asked for
   (``host:port``), so the command names the gRPC port, not the HTTP one; a port in use is found by
   a probe before grpcio tries it, so grpcio's own log line about the failed bind is not printed;
2. :meth:`start` once the agent's runtime is up: calls are answered from then on;
3. :meth:`stop` at shutdown, after the open streams were ended (``A2AService.close_streams``
   ends gRPC streams too): calls in flight get ``ServerConfig.graceful_timeout`` seconds,
   then are cancelled; it returns before the runtime stops.

When grpcio-reflection is installed, the server also answers gRPC server reflection, so
generic tools (``grpcurl``) list and call the service without the ``.proto``.

Requests larger than ``ServerConfig.max_body_bytes`` are refused by grpcio with
``RESOURCE_EXHAUSTED`` before any of our code runs. grpc.aio runs on asyncio only: on
trio, ``serve`` refuses ``ServerConfig.grpc`` (docs/grpc.md).
"""

from __future__ import annotations

import errno
import logging
import socket

import anyio
import grpc
import grpc.aio

from a2a_actors.protocol import _grpc_service as grpc_service
from a2a_actors.server._addresses import authority
from a2a_actors.server._config.grpc import GrpcOptions
from a2a_actors.server._grpc.servicer import A2AServicer
from a2a_actors.server._service import A2AService

__all__ = ("GrpcServer",)

logger = logging.getLogger("a2a_actors.server")


def _add_reflection(server: grpc.aio.Server) -> None:
    """Serve gRPC server reflection (``grpcurl HOST:PORT list`` works without the proto)
    when grpcio-reflection is installed (it comes with ``a2a-sdk[grpc]``)."""
    try:
        from grpc_reflection.v1alpha import reflection  # type: ignore[import-untyped]
    except ImportError:
        return
    reflection.enable_server_reflection((grpc_service.SERVICE, reflection.SERVICE_NAME), server)


def _refused(error: OSError, address: str) -> OSError:
    """``error``, marked as the gRPC port's (``grpc_address``, read by the ``serve`` command)."""
    error.grpc_address = address  # type: ignore[attr-defined]
    return error


def _probe(host: str, port: int, address: str) -> None:
    """Bind each address of ``host:port`` as grpcio would (``SO_REUSEADDR``, no
    ``SO_REUSEPORT``) and let it go, so that a port in use (or not ours to bind) is said
    here, in our words, rather than by grpcio's log. grpcio serves when it binds any of the
    addresses: the port is refused only when none can be. Port 0 is always free; other
    failures (a host that does not resolve) are left to grpcio.

    Raises:
        OSError: ``EADDRINUSE`` or ``EACCES`` on every address, with ``grpc_address``.
    """
    if port == 0:
        return
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError:
        return
    refused: list[OSError] = []
    for family, kind, proto, _, where in found:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(where)
            except OSError as exc:
                if exc.errno not in (errno.EADDRINUSE, errno.EACCES):
                    return  # grpcio's to say
                refused.append(exc)
            else:
                return  # grpcio can bind this one
    if refused:
        first = refused[0]
        raise _refused(OSError(first.errno, first.strerror), address)


class GrpcServer:
    """The gRPC binding of ``service``, bound to its port.

    Args:
        service: The served agent.
        options: Where to listen and what the card says.
        host: The HTTP server's host (used when ``options.host`` is ``None``).
        base_url: The HTTP base URL (the extended card's interface URLs).

    Raises:
        OSError: The address cannot be bound (``grpc_address`` names it).
    """

    def __init__(self, service: A2AService, options: GrpcOptions, *, host: str, base_url: str):
        self._service = service
        self._started = False
        self._stopped = False
        config = service.config
        self._server = grpc.aio.server(
            options=[
                ("grpc.max_receive_message_length", config.max_body_bytes),
                ("grpc.so_reuseport", int(options.shared)),
            ]
        )
        servicer = A2AServicer(service, base_url)
        self._server.add_generic_rpc_handlers((servicer.generic_handler(),))
        _add_reflection(self._server)
        bind_host = options.host or host
        wanted = authority(bind_host, options.port)
        if not options.shared:
            _probe(bind_host, options.port, wanted)
        try:
            port = self._server.add_insecure_port(wanted)
        except RuntimeError:  # grpcio reports a failed bind this way (and logs why)
            raise _refused(OSError("in use, or not an address here"), wanted) from None
        #: The address the server listens on (``host:port``).
        self.address = authority(bind_host, port)
        service.cards.declare_grpc(self.address, advertised=options.advertised)

    async def start(self) -> None:
        """Answer calls from now on."""
        self._started = True
        await self._server.start()
        logger.info("serving gRPC on %s", self.address)

    async def stop(self) -> None:
        """Stop: calls in flight get the graceful timeout, then are cancelled (shielded).

        Idempotent. A server that never started gives its port back too: grpcio frees a
        bound port only when a started server stops, so it is started first (by then
        nothing has announced the port: no card was served).
        """
        if self._stopped:
            return
        self._stopped = True
        with anyio.CancelScope(shield=True):
            if not self._started:
                self._started = True
                await self._server.start()
            await self._server.stop(self._service.config.graceful_timeout)
