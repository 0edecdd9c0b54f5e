"""Decoding and encoding of A2A wire objects: the only place JSON becomes typed objects.

Theory of operation
-------------------
Decoding is two-speed. The fast path is one reused ``msgspec.json.Decoder`` per target type,
which accepts the canonical ProtoJSON form (camelCase names, enum names). ProtoJSON parsers
must also accept the proto field names (``message_id``) and integer enum values (``"role":
1``); the A2A conformance kit sends snake_case params. Those inputs take the slow path: the
JSON is decoded untyped, walked *guided by the target type's schema* (so keys inside free-form
``metadata``/``data`` objects and map keys such as scheme names are never touched), field
names and enum numbers are rewritten to their canonical form, and the result is converted.
The slow path runs only when the bytes contain a snake_case key or the fast path failed, so
canonical traffic pays nothing for it.

``null`` means absent, as the proto3 JSON mapping says (a null field value is the field's
default), on every path: the slow path drops a member whose value is ``null`` when its
field's type does not accept ``None``, so the field takes its default, or, when it is
required, is reported missing with its path. A field that accepts ``None`` (``metadata``,
an optional scalar, a Part's ``data``) keeps the null, and nulls *inside* free-form values
(``metadata``, ``data``, Struct values) are JSON values and are never touched. Such a null
always fails the typed decoder, so it too costs canonical traffic nothing.

Errors are msgspec's: ``msgspec.DecodeError`` for malformed JSON and
``msgspec.ValidationError`` (a subclass) for a schema violation, whose message ends with the
JSON path (``- at `$.message.role```). :func:`error_path` extracts that path.
"""

from __future__ import annotations

import base64
import enum
import re
from typing import Any, TypeVar

import msgspec
from msgspec import inspect as mi

__all__ = (
    "convert",
    "decode",
    "encode",
    "error_path",
    "parse",
    "to_builtins",
)

T = TypeVar("T")

_encoder = msgspec.json.Encoder()
_untyped = msgspec.json.Decoder()
_decoders: dict[Any, msgspec.json.Decoder[Any]] = {}
_infos: dict[Any, mi.Type] = {}
_Member = tuple[str, mi.Type, bool]  # (wire name, type, whether the type accepts None)
#: Per Struct class, the slow path's lookup: each accepted key (wire or proto name).
_members: dict[type, dict[str, _Member]] = {}
_SNAKE_KEY = re.compile(rb'"[a-z][a-z0-9]*_[a-z0-9_]*"\s*:')
_PATH = re.compile(r" - at `\$(.*)`$")
_MISSING = re.compile(r"Object missing required field `([^`]+)`$")


def encode(obj: object) -> bytes:
    """Encode a wire object (or builtins containing them) to compact JSON bytes."""
    return _encoder.encode(obj)


def to_builtins(obj: object) -> Any:
    """Convert a wire object to JSON-compatible builtins (dicts with camelCase keys)."""
    return msgspec.to_builtins(obj)


def decode(data: bytes | str, type_: type[T]) -> T:
    """Decode JSON bytes into ``type_``, accepting every ProtoJSON spelling.

    Raises:
        msgspec.DecodeError: The bytes are not JSON.
        msgspec.ValidationError: The JSON does not fit ``type_``; the message names the path.
    """
    raw = data.encode() if isinstance(data, str) else data
    decoder = _decoders.get(type_)
    if decoder is None:
        decoder = _decoders[type_] = msgspec.json.Decoder(type_)
    if _SNAKE_KEY.search(raw) is None:
        try:
            return decoder.decode(raw)  # type: ignore[no-any-return]
        except msgspec.ValidationError:
            pass  # maybe integer enums or url-safe base64: retry on the slow path
    return convert(_untyped.decode(raw), type_)


def parse(data: bytes | str) -> Any:
    """Parse JSON into builtins (dicts, lists, strings, numbers), for a reader that looks
    at its shape first (an envelope, a 0.3 body, an error answer) and then converts what
    it found with :func:`convert`.

    Raises:
        msgspec.DecodeError: ``data`` is not JSON (or not UTF-8, or nested too deeply).
    """
    try:
        return _untyped.decode(data.encode() if isinstance(data, str) else data)
    except (UnicodeDecodeError, RecursionError) as exc:
        raise msgspec.DecodeError(f"not JSON: {type(exc).__name__}") from None


def convert(obj: Any, type_: type[T], *, strict: bool = True) -> T:
    """Convert already-parsed JSON builtins into ``type_`` (same spellings as :func:`decode`).

    ``strict=False`` also reads strings as numbers and booleans (query parameters).

    Raises:
        msgspec.ValidationError: ``obj`` does not fit ``type_``.
    """
    info = _infos.get(type_)
    if info is None:
        info = _infos[type_] = mi.type_info(type_)
    return msgspec.convert(_normalize(obj, info), type_, strict=strict)


def error_path(exc: msgspec.ValidationError) -> tuple[str, str | None]:
    """Split a validation error into (message without path, dotted field path or None).

    For a missing required field the path names that field (``message.messageId``), not
    the object that lacks it.
    """
    text = str(exc)
    m = _PATH.search(text)
    message, path = (text, "") if m is None else (text[: m.start()], m.group(1))
    path = re.sub(r"\[(\d+)\]", r".\1", path).lstrip(".")
    missing = _MISSING.match(message)
    if missing is not None:  # name the missing field itself, not its parent
        path = f"{path}.{missing.group(1)}" if path else missing.group(1)
    return message, path or None


def _normalize(obj: Any, info: mi.Type) -> Any:
    """Rewrite proto field names and enum numbers into canonical ProtoJSON, by schema, and
    drop the null members of fields that do not accept ``None`` (see the module docstring)."""
    if isinstance(info, mi.StructType):
        if not isinstance(obj, dict):
            return obj
        members = _members.get(info.cls)
        if members is None:
            members = _members[info.cls] = _struct_members(info)
        out: dict[str, Any] = {}
        for key, value in obj.items():
            entry = members.get(key)
            if entry is None:
                continue  # unknown field: ignored, as ProtoJSON allows
            name, type_, nullable = entry
            if value is None and not nullable:
                continue  # null means absent (proto3 JSON): the default, or "missing"
            if name in out and name != key:
                continue  # the canonical spelling wins over the proto name
            out[name] = _normalize(value, type_)
        return out
    if isinstance(info, mi.UnionType):
        for member in info.types:
            if not isinstance(member, mi.NoneType):
                return _normalize(obj, member)
        return obj
    if isinstance(info, mi.DictType):
        if isinstance(obj, dict):
            return {k: _normalize(v, info.value_type) for k, v in obj.items()}
        return obj
    if isinstance(info, mi.VarTupleType | mi.ListType):
        if isinstance(obj, list):
            return [_normalize(v, info.item_type) for v in obj]
        return obj
    if isinstance(info, mi.EnumType):
        return _enum_name(obj, info.cls)
    if isinstance(info, mi.BytesType) and isinstance(obj, str):
        return _standard_base64(obj)
    return obj


def _struct_members(info: mi.StructType) -> dict[str, _Member]:
    members: dict[str, _Member] = {f.name: _member(f) for f in info.fields}
    members.update({f.encode_name: _member(f) for f in info.fields})  # wire names win
    return members


def _member(field: mi.Field) -> _Member:
    return field.encode_name, field.type, _accepts_none(field.type)


def _accepts_none(info: mi.Type) -> bool:
    """Whether ``null`` is a value of this type (then it is kept, not read as absent)."""
    if isinstance(info, mi.UnionType):
        return any(_accepts_none(member) for member in info.types)
    return isinstance(info, mi.NoneType | mi.AnyType)


def _enum_name(obj: Any, cls: type[enum.Enum]) -> Any:
    # Proto enum numbers are the declaration order of our Enums (UNSPECIFIED is 0).
    if isinstance(obj, int) and not isinstance(obj, bool):
        members = list(cls)
        if 0 <= obj < len(members):
            return members[obj].value
    return obj


def _standard_base64(text: str) -> str:
    if "-" in text or "_" in text or len(text) % 4:
        raw = text.replace("-", "+").replace("_", "/")
        raw += "=" * (-len(raw) % 4)
        try:
            return base64.b64encode(base64.b64decode(raw, validate=True)).decode()
        except ValueError:
            return text  # let the typed conversion report it
    return text
