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

The service's RPCs are :mod:`~a2a_actors.protocol._grpc_service`'s, and errors travel as
:mod:`~a2a_actors.protocol._grpc_status` says.

Failures: ``from_proto`` and ``decode`` raise
:class:`~a2a_actors.protocol._errors.InvalidParamsError` whose ``field`` is the proto path of
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
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import msgspec
from a2a.types import a2a_pb2
from google.protobuf import struct_pb2
from google.protobuf.descriptor import EnumDescriptor, FieldDescriptor
from google.protobuf.message import DecodeError, Message as ProtoMessage
from msgspec import inspect as mi
from msgspec.structs import astuple

from a2a_actors.protocol._errors import InvalidParamsError
from a2a_actors.protocol._models import WireStruct
from a2a_actors.protocol.codec import error_path

__all__ = ("decode", "encode", "from_proto", "proto_type", "to_proto")

S = TypeVar("S", bound=WireStruct)

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
