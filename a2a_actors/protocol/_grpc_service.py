"""The RPCs of ``lf.a2a.v1.A2AService``, from the official SDK's service descriptor.

``METHODS`` lists the eleven RPCs (the descriptor's order), each with its request Struct,
its response Struct (``None`` for DeleteTaskPushNotificationConfig, whose answer is
``google.protobuf.Empty``) and whether it streams; ``Method.path`` is the gRPC method path
(``/lf.a2a.v1.A2AService/SendMessage``). Shared by the gRPC server and client; imports the
SDK's generated ``a2a_pb2`` (the ``grpc`` extra), so only gRPC code imports it.
"""

from __future__ import annotations

from dataclasses import dataclass

from a2a.types import a2a_pb2

from a2a_actors.protocol import _card as card, _models as models, _requests as requests
from a2a_actors.protocol._models import WireStruct

__all__ = ("METHODS", "SERVICE", "Method")


@dataclass(frozen=True, slots=True)
class Method:
    """One RPC of ``lf.a2a.v1.A2AService``.

    Attributes:
        name: The method name (``SendMessage``).
        path: The gRPC method path (``/lf.a2a.v1.A2AService/SendMessage``).
        request: The request's Struct type.
        response: The response's Struct type (``None``: ``google.protobuf.Empty``).
        streaming: Whether the server streams ``StreamResponse`` messages.
    """

    name: str
    path: str
    request: type[WireStruct]
    response: type[WireStruct] | None
    streaming: bool


_STRUCTS: dict[str, type[WireStruct]] = {
    cls.__name__: cls
    for module in (models, requests, card)
    for cls in vars(module).values()
    if isinstance(cls, type) and issubclass(cls, WireStruct) and cls is not WireStruct
}

_DESCRIPTOR = a2a_pb2.DESCRIPTOR.services_by_name["A2AService"]
#: The service's full name.
SERVICE: str = _DESCRIPTOR.full_name
#: Every RPC of the service, by method name, in the descriptor's order.
METHODS: dict[str, Method] = {
    m.name: Method(
        name=m.name,
        path=f"/{SERVICE}/{m.name}",
        request=_STRUCTS[m.input_type.name],
        response=None
        if m.output_type.full_name == "google.protobuf.Empty"
        else (_STRUCTS[m.output_type.name]),
        streaming=m.server_streaming,
    )
    for m in _DESCRIPTOR.methods
}
