"""The gRPC binding of A2A 1.0 (``lf.a2a.v1.A2AService``), served beside HTTP.

Imported only when ``ServerConfig.grpc`` (``serve --grpc-port``) asks for it: it needs the
``grpc`` extra (grpcio and the official SDK's generated protobufs), and nothing of the JSON
bindings imports it. Modules:

* :mod:`a2a_actors.server._grpc.metadata`: call metadata read as request headers (auth, version,
  extensions);
* :mod:`a2a_actors.server._grpc.servicer`: one handler per RPC over the agent's methods, errors as
  statuses;
* :mod:`a2a_actors.server._grpc.server`: the ``grpc.aio`` server's life beside Hypercorn;
* :mod:`.options`: ``GrpcOptions`` (what ``ServerConfig.grpc`` holds; it imports nothing
  of gRPC, so the configuration can name it).

The conversions live in :mod:`a2a_actors.protocol._protobuf`. See docs/grpc.md.
"""
