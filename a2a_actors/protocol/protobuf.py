"""The gRPC binding's wire form: our Structs to and from the official ``lf.a2a.v1`` protobufs.

Nothing here is generated or copied: the messages are the official SDK's generated
``a2a.types.a2a_pb2`` (the ``grpc`` extra), and every conversion is derived, once per type,
from two schemas that already exist, the msgspec Struct (``models``, ``requests``, ``card``)
and the proto descriptor of the message of the same name. The module is sans-I/O and
imports protobuf, so it is imported only by gRPC code (``import a2a_actors`` and the JSON
bindings never load it; a test checks that in a fresh interpreter).

API (shared by the gRPC server and client)
------------------------------------------
``to_proto(obj)``
    Any wire Struct (Task, Message, StreamResponse, SendMessageRequest, AgentCard,
    TaskPushNotificationConfig, ListTasksResponse, ...) to the ``a2a_pb2`` message of the
    same name.
``from_proto(message, type_)``
    An ``a2a_pb2`` message to the Struct ``type_``, validated exactly like JSON input (the
    same msgspec constraints and ``__post_init__`` checks).
``encode(obj)`` / ``decode(data, type_)``
    The same, to and from serialized bytes (``decode`` also refuses bytes that are not a
    valid message of ``type_``'s proto type).
``proto_type(type_)``
    The ``a2a_pb2`` class of a Struct type.
``METHODS``, ``SERVICE``
    The eleven RPCs of ``lf.a2a.v1.A2AService`` (from the SDK's descriptor), each with its
    request Struct, response Struct (``None`` for DeleteTaskPushNotificationConfig, whose
    answer is ``google.protobuf.Empty``) and whether it streams; ``Method.path`` is the
    gRPC method path (``/lf.a2a.v1.A2AService/SendMessage``).
``error_to_status(error)`` / ``error_from_status(status)``
    An :class:`~a2a_actors.protocol.errors.A2AError` to the ``google.rpc.Status`` sent in
    the ``grpc-status-details-bin`` trailer (:data:`STATUS_DETAILS_KEY`), and back. The
    status code comes from the error table (``ErrorSpec.grpc_status``), the message is the
    error's message, and the details are the ``google.rpc.ErrorInfo`` (reason, domain
    ``a2a-protocol.org``, string metadata), a ``google.rpc.BadRequest`` for an invalid
    param (its field path) and a ``google.rpc.RetryInfo`` for ``ServerBusyError``.
    ``error_from_status`` returns the error class of the ErrorInfo reason (by status code
    when there is none), ``remote=True``, with the details as ProtoJSON dicts in ``data``.
``status_code(error)``
    The numeric gRPC status code of an error.

Failures: ``from_proto`` and ``decode`` raise
:class:`~a2a_actors.protocol.errors.InvalidParamsError` whose ``field`` is the proto path of
the offending field in proto names (``message.parts.0``, ``message.message_id``), the way
``google.rpc.BadRequest`` names fields; a client converting a *response* re-raises it as it
sees fit (an invalid agent response).

Differences from the JSON form, by the nature of protobuf (the golden tests check that
nothing else differs from ``json_format.MessageToDict`` of the converted message):

* ``google.protobuf.Struct``/``Value`` numbers are doubles: a JSON integer in ``metadata``
  or ``data`` travels as a double; on the way in, a double with an integral value below
  2**53 becomes an ``int`` again, so integers round-trip and ``1.0`` arrives as ``1``.
* timestamps carry nanoseconds; ours are microseconds (the rest is truncated).
* a proto3 field without presence cannot say "absent": an empty string, an empty list,
  ``0`` and ``false`` are the defaults there as in our Structs, and the one optional enum
  without presence (``ListTasksRequest.status``) reads ``TASK_STATE_UNSPECIFIED`` as no
  filter.
"""

from __future__ import annotations

import datetime as _dt
import enum
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import msgspec
from a2a.types import a2a_pb2
from google.protobuf import any_pb2, duration_pb2, json_format, struct_pb2
from google.protobuf.descriptor import EnumDescriptor, FieldDescriptor
from google.protobuf.message import DecodeError, Message as ProtoMessage
from google.rpc import code_pb2, error_details_pb2, status_pb2
from msgspec import inspect as mi
from msgspec.structs import astuple

from . import card, models, requests
from .codec import error_path
from .errors import (
    ERROR_DOMAIN,
    ERROR_INFO_TYPE,
    A2AError,
    InvalidParamsError,
    MethodNotFoundError,
    ServerBusyError,
    UnauthenticatedError,
    error_for_reason,
)
from .models import WireStruct

__all__ = (
    "METHODS",
    "SERVICE",
    "STATUS_DETAILS_KEY",
    "Method",
    "decode",
    "encode",
    "error_from_status",
    "error_to_status",
    "from_proto",
    "proto_type",
    "status_code",
    "to_proto",
)

S = TypeVar("S", bound=WireStruct)

#: The trailing-metadata key of the binary ``google.rpc.Status`` (gRPC's rich errors).
STATUS_DETAILS_KEY = "grpc-status-details-bin"
RETRY_INFO_TYPE = "type.googleapis.com/google.rpc.RetryInfo"
_SAFE_INT = 2**53
_UTC = _dt.UTC
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_UTC)


class _Invalid(Exception):
    """A proto value with no Struct equivalent; ``path`` grows while it unwinds."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.path: list[str] = []


# -- google.protobuf.Struct / Value ---------------------------------------------------------


def _set_value(target: struct_pb2.Value, value: Any) -> None:
    if value is None:
        target.null_value = struct_pb2.NULL_VALUE
    elif isinstance(value, bool):
        target.bool_value = value
    elif isinstance(value, int | float):
        target.number_value = value
    elif isinstance(value, str):
        target.string_value = value
    elif isinstance(value, dict):
        target.struct_value.SetInParent()  # so that {} is an object, not an unset Value
        target.struct_value.update(value)
    else:
        target.list_value.SetInParent()
        target.list_value.extend(value)


def _value_from_proto(value: struct_pb2.Value) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "string_value":
        return value.string_value
    if kind == "number_value":
        number = value.number_value
        if number.is_integer() and -_SAFE_INT < number < _SAFE_INT:
            return int(number)
        return number
    if kind == "bool_value":
        return value.bool_value
    if kind == "struct_value":
        return _struct_from_proto(value.struct_value)
    if kind == "list_value":
        return [_value_from_proto(v) for v in value.list_value.values]
    return None  # null_value, or a Value with no kind set


def _struct_from_proto(value: struct_pb2.Struct) -> dict[str, Any]:
    return {k: _value_from_proto(v) for k, v in value.fields.items()}


# -- one compiled plan per Struct type ---------------------------------------------------------

Convert = Callable[[Any], Any]
#: Writes a value into a field of a message: ``fill(parent, field_name, value)``.
Fill = Callable[[Any, str, Any], None]


@dataclass(frozen=True, slots=True)
class _Field:
    name: str  # the Python attribute, which is also the proto field name
    wire: str  # the Struct's encode name (camelCase)
    fill: Fill  # writes our value into the parent message
    from_proto: Convert | None  # None: the proto value is the builtin
    absent: Any  # our value meaning "not set" (None, or UNSET for ``Part.data``)
    presence: bool  # the proto field tracks presence (HasField)
    unset_if_default: bool  # ours is optional, the proto's is not: its default means absent


@dataclass(frozen=True, slots=True)
class _Plan:
    proto: type[ProtoMessage]
    fields: tuple[_Field, ...]


_PLANS: dict[type[WireStruct], _Plan] = {}


def proto_type(type_: type[WireStruct]) -> type[ProtoMessage]:
    """The ``a2a_pb2`` message class of the Struct ``type_`` (the message of the same name).

    Raises:
        TypeError: ``type_`` has no proto counterpart.
    """
    return _plan(type_).proto


def _plan(type_: type[WireStruct]) -> _Plan:
    plan = _PLANS.get(type_)
    if plan is None:
        plan = _PLANS[type_] = _compile(type_)
    return plan


def _compile(type_: type[WireStruct]) -> _Plan:
    proto = getattr(a2a_pb2, type_.__name__, None)
    if proto is None or not isinstance(proto, type) or not issubclass(proto, ProtoMessage):
        raise TypeError(f"{type_.__name__} has no lf.a2a.v1 protobuf message")
    descriptor = proto.DESCRIPTOR
    info = mi.type_info(type_)
    assert isinstance(info, mi.StructType)
    fields = []
    for f in info.fields:
        pf = cast(FieldDescriptor | None, descriptor.fields_by_name.get(f.name))  # upb's or not
        if pf is None:
            raise TypeError(f"{type_.__name__}.{f.name} has no field in {descriptor.full_name}")
        optional, inner = _unwrap_optional(f.type)
        fields.append(
            _Field(
                name=f.name,
                wire=f.encode_name,
                fill=_filler(inner, pf),
                from_proto=_reader(inner, pf),
                absent=_absent(f),
                presence=pf.has_presence,
                unset_if_default=optional and not pf.has_presence and not _repeated(pf),
            )
        )
    return _Plan(proto, tuple(fields))


def _absent(f: mi.Field) -> Any:
    if f.default is None:
        return None
    if not f.required and f.default is msgspec.NODEFAULT and f.default_factory is msgspec.NODEFAULT:
        return msgspec.UNSET  # msgspec reports an UNSET default as no default
    return msgspec.NODEFAULT  # never a field's value: always sent


def _repeated(pf: FieldDescriptor) -> bool:
    return bool(pf.is_repeated)


def _unwrap_optional(info: mi.Type) -> tuple[bool, mi.Type]:
    if isinstance(info, mi.UnionType):
        rest = [t for t in info.types if not isinstance(t, mi.NoneType)]
        if len(rest) == 1:
            return True, rest[0]
    return False, info


def _filler(info: mi.Type, pf: FieldDescriptor) -> Fill:
    """How one field's value is written into its (parent) message, in place: nothing is
    built and then copied (a nested constructor would copy every sub-message again)."""
    message = pf.message_type
    if _repeated(pf) and message is not None and message.GetOptions().map_entry:
        assert isinstance(info, mi.DictType)
        value = info.value_type
        if isinstance(value, mi.StructType):
            return _fill_map_of(_wire(value))
        return _fill_update
    if _repeated(pf):
        assert isinstance(info, mi.VarTupleType | mi.ListType)
        item = info.item_type
        if isinstance(item, mi.StructType):
            return _fill_many(_wire(item))
        return _fill_extend
    if isinstance(info, mi.StructType):
        return _fill_one(_wire(info))
    if isinstance(info, mi.EnumType):
        assert pf.enum_type is not None
        numbers = {m: pf.enum_type.values_by_name[m.value].number for m in info.cls}
        return lambda parent, name, value: setattr(parent, name, numbers[value])
    if isinstance(info, mi.DateTimeType):
        return _fill_timestamp
    if message is not None and message.full_name == "google.protobuf.Struct":
        return _fill_json_object
    if message is not None and message.full_name == "google.protobuf.Value":
        return lambda parent, name, value: _set_value(getattr(parent, name), value)
    return setattr


def _wire(info: mi.StructType) -> type[WireStruct]:
    assert issubclass(info.cls, WireStruct)
    return info.cls


def _fill_update(parent: Any, name: str, value: Any) -> None:
    getattr(parent, name).update(value)


def _fill_extend(parent: Any, name: str, value: Any) -> None:
    getattr(parent, name).extend(value)


def _fill_json_object(parent: Any, name: str, value: Any) -> None:
    target = getattr(parent, name)
    target.SetInParent()  # so that {} is present
    target.update(value)


def _fill_timestamp(parent: Any, name: str, value: _dt.datetime) -> None:
    stamp = getattr(parent, name)
    delta = value - _EPOCH  # normalised: 0 <= seconds < 86400, 0 <= microseconds < 10**6
    stamp.seconds = delta.days * 86400 + delta.seconds
    stamp.nanos = delta.microseconds * 1000


def _fill_one(cls: type[WireStruct]) -> Fill:
    def fill(parent: Any, name: str, value: Any) -> None:
        child = getattr(parent, name)
        child.SetInParent()  # present even when every field is a default
        _fill(value, child, _plan(cls))

    return fill


def _fill_many(cls: type[WireStruct]) -> Fill:
    def fill(parent: Any, name: str, value: Any) -> None:
        container = getattr(parent, name)
        plan = _plan(cls)
        for item in value:
            _fill(item, container.add(), plan)

    return fill


def _fill_map_of(cls: type[WireStruct]) -> Fill:
    def fill(parent: Any, name: str, value: Any) -> None:
        target = getattr(parent, name)
        plan = _plan(cls)
        for key, item in value.items():
            _fill(item, target[key], plan)  # indexing a message map creates the entry

    return fill


def _reader(info: mi.Type, pf: FieldDescriptor, *, element: bool = False) -> Convert | None:
    """How one field (its elements when ``element``) is read into JSON builtins; ``None``
    where the value passes as it is."""
    message = pf.message_type
    repeated = _repeated(pf) and not element
    if repeated and message is not None and message.GetOptions().map_entry:
        assert isinstance(info, mi.DictType)
        return _map_from(_reader(info.value_type, message.fields_by_name["value"]))
    if repeated:
        assert isinstance(info, mi.VarTupleType | mi.ListType)
        return _seq_from(_reader(info.item_type, pf, element=True))
    if isinstance(info, mi.StructType):
        return _struct_from(_wire(info))
    if isinstance(info, mi.EnumType):
        assert pf.enum_type is not None
        return _enum_from(info.cls, pf.enum_type)
    if isinstance(info, mi.DateTimeType):
        return _timestamp_from
    if message is not None and message.full_name == "google.protobuf.Struct":
        return _struct_from_proto
    if message is not None and message.full_name == "google.protobuf.Value":
        return _value_from_proto
    return None


def _map_from(from_v: Convert | None) -> Convert:
    if from_v is None:
        return dict

    def convert(value: Any) -> Any:
        out = {}
        for k, v in value.items():
            try:
                out[k] = from_v(v)
            except _Invalid as exc:
                exc.path.insert(0, str(k))
                raise
        return out

    return convert


def _seq_from(from_item: Convert | None) -> Convert:
    if from_item is None:
        return list

    def convert(value: Any) -> Any:
        out = []
        for i, v in enumerate(value):
            try:
                out.append(from_item(v))
            except _Invalid as exc:
                exc.path.insert(0, str(i))
                raise
        return out

    return convert


def _struct_from(cls: type[WireStruct]) -> Convert:
    return lambda value: _to_builtins(value, _plan(cls))


def _enum_from(cls: type[enum.Enum], proto: EnumDescriptor) -> Convert:
    names = {v.number: v.name for v in proto.values if v.name in cls._value2member_map_}

    def convert(number: int) -> str:
        name = names.get(number)
        if name is None:
            raise _Invalid(f"{number} is not a value of {proto.full_name}")
        return name

    return convert


def _timestamp_from(value: Any) -> _dt.datetime:
    try:
        stamp: _dt.datetime = value.ToDatetime(tzinfo=_UTC)
    except (ValueError, OverflowError) as exc:
        raise _Invalid(f"timestamp out of range: {exc}") from None
    return stamp


# -- the conversions -----------------------------------------------------------------------


def to_proto(obj: WireStruct) -> ProtoMessage:
    """The ``a2a_pb2`` message equal to the wire Struct ``obj``.

    Raises:
        TypeError: ``obj``'s type has no proto counterpart.
    """
    plan = _plan(type(obj))
    message = plan.proto()
    _fill(obj, message, plan)
    return message


def _fill(obj: WireStruct, message: Any, plan: _Plan) -> None:
    # astuple reads every field at once (in C), in the order of plan.fields
    for f, value in zip(plan.fields, astuple(obj), strict=True):
        if value is f.absent or (not value and not f.presence):
            continue  # absent, or a proto3 default: nothing to send
        f.fill(message, f.name, value)


def _to_builtins(message: Any, plan: _Plan) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in plan.fields:
        if f.presence and not message.HasField(f.name):
            continue
        value = getattr(message, f.name)
        if f.unset_if_default and not value:
            continue
        if f.from_proto is not None:
            try:
                value = f.from_proto(value)
            except _Invalid as exc:
                exc.path.insert(0, f.name)
                raise
        out[f.wire] = value
    return out


def from_proto(message: ProtoMessage, type_: type[S]) -> S:
    """The Struct ``type_`` equal to ``message`` (an instance of ``proto_type(type_)``).

    Raises:
        InvalidParamsError: The content is not valid (``field`` is its proto path).
        TypeError: ``message`` is not a ``proto_type(type_)`` message.
    """
    plan = _plan(type_)
    if not isinstance(message, plan.proto):
        raise TypeError(f"expected {plan.proto.DESCRIPTOR.full_name}, got {type(message).__name__}")
    try:
        builtins = _to_builtins(message, plan)
    except _Invalid as exc:
        raise InvalidParamsError(exc.message, field=".".join(exc.path)) from None
    try:
        return msgspec.convert(builtins, type_)
    except msgspec.ValidationError as exc:
        text, path = error_path(exc)
        raise InvalidParamsError(text, field=None if path is None else _proto_path(path)) from None


_UPPER = re.compile(r"[A-Z]")


def _proto_path(path: str) -> str:
    """``message.messageId`` (the Struct's wire names) to ``message.message_id``."""
    return _UPPER.sub(lambda m: "_" + m.group(0).lower(), path)


def encode(obj: WireStruct) -> bytes:
    """``to_proto(obj)``, serialized."""
    return to_proto(obj).SerializeToString()


def decode(data: bytes, type_: type[S]) -> S:
    """The Struct ``type_`` from the serialized ``proto_type(type_)`` message ``data``.

    Raises:
        InvalidParamsError: ``data`` is not a valid message of that type, or its content
            is not valid (``field`` names the path when one field is at fault).
    """
    proto = _plan(type_).proto
    try:
        message = proto.FromString(data)
    except DecodeError:
        name = proto.DESCRIPTOR.full_name
        raise InvalidParamsError(f"malformed protobuf: not a valid {name} message") from None
    return from_proto(message, type_)


# -- the service ---------------------------------------------------------------------------


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


# -- errors --------------------------------------------------------------------------------

#: An error class for statuses without an a2a-protocol.org ErrorInfo.
_BY_STATUS: dict[int, type[A2AError]] = {
    code_pb2.UNAUTHENTICATED: UnauthenticatedError,
    code_pb2.RESOURCE_EXHAUSTED: ServerBusyError,
    code_pb2.INVALID_ARGUMENT: InvalidParamsError,
    code_pb2.UNIMPLEMENTED: MethodNotFoundError,
}


def status_code(error: A2AError) -> int:
    """The numeric gRPC status code of ``error`` (from the error table)."""
    code: int = code_pb2.Code.Value(error.spec.grpc_status)
    return code


def error_to_status(error: A2AError) -> status_pb2.Status:
    """The ``google.rpc.Status`` of ``error``: code, message, ErrorInfo and further details.

    Detail dicts whose ``@type`` is not a known ``google.rpc`` type are left out.
    """
    details = [d for d in (_pack(item) for item in error.details()) if d is not None]
    if not any(d.type_url == ERROR_INFO_TYPE for d in details):  # a remote error's odd data
        details.insert(0, _error_info(error.error_info()))
    if isinstance(error, ServerBusyError) and not error.remote:
        delay = duration_pb2.Duration()
        delay.FromTimedelta(_dt.timedelta(seconds=max(error.retry_after, 0.0)))
        retry = any_pb2.Any()
        retry.Pack(error_details_pb2.RetryInfo(retry_delay=delay))
        details.append(retry)
    return status_pb2.Status(code=status_code(error), message=error.message, details=details)


def _pack(item: Any) -> any_pb2.Any | None:
    if not isinstance(item, dict):
        return None
    if item.get("@type") == ERROR_INFO_TYPE:
        return _error_info(item)
    packed = any_pb2.Any()
    try:
        json_format.ParseDict(item, packed)
    except (json_format.ParseError, TypeError, KeyError, ValueError):
        return None
    return packed


def _error_info(item: dict[str, Any]) -> any_pb2.Any:
    metadata = item.get("metadata") or {}
    info = error_details_pb2.ErrorInfo(
        reason=str(item.get("reason", "")),
        domain=str(item.get("domain", "")),
        metadata={str(k): v if isinstance(v, str) else json.dumps(v) for k, v in metadata.items()},
    )
    packed = any_pb2.Any()
    packed.Pack(info)
    return packed


def error_from_status(status: status_pb2.Status) -> A2AError:
    """The error a peer sent as ``status`` (``remote=True``; details in ``data``)."""
    cls: type[A2AError] | None = None
    metadata: dict[str, str] = {}
    data: list[Any] = []
    extra: dict[str, Any] = {}
    for detail in status.details:
        try:
            data.append(json_format.MessageToDict(detail))
        except (json_format.Error, TypeError, KeyError):
            continue  # a detail type this process does not know
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            if info.domain == ERROR_DOMAIN and cls is None:
                cls = error_for_reason(info.reason)
                metadata = dict(info.metadata)
        elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            if bad.field_violations:
                extra["field"] = bad.field_violations[0].field
        elif detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            retry = error_details_pb2.RetryInfo()
            detail.Unpack(retry)
            extra["retry_after"] = retry.retry_delay.ToTimedelta().total_seconds()
    if cls is None:
        cls = _BY_STATUS.get(status.code, A2AError)
    if cls is InvalidParamsError:
        kwargs = {"field": extra["field"]} if "field" in extra else {}
    elif cls is ServerBusyError:
        kwargs = {"retry_after": extra["retry_after"]} if "retry_after" in extra else {}
    else:
        kwargs = {}
    return cls(status.message, data=data, metadata=metadata, remote=True, **kwargs)
