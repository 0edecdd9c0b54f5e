"""The gRPC binding of A2A 1.0 (``lf.a2a.v1.A2AService``), served beside HTTP.

Imported only when ``ServerConfig.grpc`` (``serve --grpc-port``) asks for it: it needs the
``grpc`` extra (grpcio and the official SDK's generated protobufs), and nothing of the JSON
bindings imports it. Modules:

* :mod:`.metadata`: call metadata read as request headers (auth, version, extensions);
* :mod:`.servicer`: one handler per RPC over the agent's methods, errors as statuses;
* :mod:`.server`: the ``grpc.aio`` server's life beside Hypercorn.

The conversions live in :mod:`a2a_actors.protocol.protobuf`. See docs/grpc.md.
"""

from __future__ import annotations

from a2a_actors.server.grpc.server import GrpcServer as GrpcServer

__all__ = ("GrpcServer",)
