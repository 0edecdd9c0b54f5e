"""``null`` means absent (the proto3 JSON mapping), for every field of every wire Struct.

The table is generated from the Structs themselves (``msgspec.inspect``), so a field added
later is covered without touching this file. For each field of each Struct in
``models.py``, ``requests.py`` and ``card.py``, on both entry points (``codec.decode`` of
bytes, ``codec.convert`` of builtins) and under both spellings (camelCase, proto name):

* a field that does not accept ``None`` (a list, a string, a bool, an enum, a message) reads
  a ``null`` as absent: its default when it has one, else the missing-field error naming
  its path (what a client gets as -32602 with ``field``);
* a field that accepts ``None`` (``metadata``, an optional scalar or message) decodes a
  ``null`` to ``None``, its default.

Nulls *inside* free-form values (``metadata``, a Part's ``data``, ``params``, a signature
``header``) are JSON values and are kept; ``{"data": null}`` is a data Part whose value is
null. A property test nulls random optional members anywhere in full nested objects and
requires the result to equal the object with those members left out. The fast path is
checked not to be involved for canonical input.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import msgspec
import pytest
from hypothesis import given, strategies as st
from msgspec import inspect as mi

from a2a_actors.protocol import (
    _card as card,
    _jsonrpc as jsonrpc,
    _models as models,
    _requests as requests,
    codec,
)
from a2a_actors.protocol._errors import InvalidParamsError
from a2a_actors.protocol._models import Message, Part, WireStruct

# -- samples generated from the schema -------------------------------------------------------


def _wire_structs() -> list[type[WireStruct]]:
    found: list[type[WireStruct]] = []
    pending = list(WireStruct.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__module__ in (models.__name__, requests.__name__, card.__name__):
            found.append(cls)
    return sorted(found, key=lambda c: c.__name__)


STRUCTS = _wire_structs()


def _accepts_none(info: mi.Type) -> bool:
    if isinstance(info, mi.UnionType):
        return any(_accepts_none(t) for t in info.types)
    return isinstance(info, mi.NoneType | mi.AnyType)


def _fits(obj: Any, cls: type[Any]) -> bool:
    try:
        codec.convert(obj, cls)
    except msgspec.ValidationError:
        return False
    return True


def sample(info: mi.Type, *, full: bool = False, skip: str = "") -> Any:
    """A valid JSON value of ``info``: required fields only, or (``full``) every field that
    can be present together with the others (a oneof keeps its first member). A Struct's
    optional field ``skip`` is left out (a oneof then holds another member)."""
    if isinstance(info, mi.StructType):
        obj = {f.encode_name: sample(f.type, full=full) for f in info.fields if f.required}
        for f in info.fields:  # optional members, as far as the Struct's checks allow
            if f.required or f.name == skip or (not full and _fits(obj, info.cls)):
                continue
            candidate = {**obj, f.encode_name: sample(f.type, full=full)}
            if _fits(candidate, info.cls):
                obj = candidate
        assert _fits(obj, info.cls), info.cls
        return obj
    if isinstance(info, mi.UnionType):
        return sample(next(t for t in info.types if not isinstance(t, mi.NoneType)), full=full)
    if isinstance(info, mi.VarTupleType | mi.ListType):
        return [sample(info.item_type, full=full)]
    if isinstance(info, mi.DictType):
        return {"key": sample(info.value_type, full=full)}
    if isinstance(info, mi.EnumType):
        return list(info.cls)[1].value  # [0] is UNSPECIFIED where the enum has it
    if isinstance(info, mi.IntType):
        return max(1, info.ge or 0)
    simple: dict[type[mi.Type], Any] = {
        mi.StrType: "x",
        mi.BoolType: True,
        mi.BytesType: "eA==",
        mi.DateTimeType: "2026-01-01T00:00:00Z",
        mi.AnyType: {"free": None},
    }
    return simple[type(info)]


def _cases() -> Iterator[Any]:
    for cls in STRUCTS:
        info = mi.type_info(cls)
        assert isinstance(info, mi.StructType)
        for f in info.fields:
            yield pytest.param(cls, f, id=f"{cls.__name__}.{f.encode_name}")


def _decoders(obj: dict[str, Any], cls: type[Any]) -> list[Any]:
    """``obj`` through both entry points (bytes, then builtins): each result, or its error."""
    results: list[Any] = []
    for from_bytes in (True, False):
        try:
            results.append(
                codec.decode(json.dumps(obj), cls) if from_bytes else codec.convert(obj, cls)
            )
        except msgspec.ValidationError as exc:
            results.append(exc)
    return results


def test_the_table_covers_every_wire_struct() -> None:
    names = {cls.__name__ for cls in STRUCTS}
    assert {"Message", "Part", "Task", "AgentCard", "SendMessageRequest"} <= names
    assert len(STRUCTS) >= 40


@pytest.mark.parametrize("spelling", ["wire", "proto"])
@pytest.mark.parametrize(("cls", "field"), list(_cases()))
def test_a_null_field_is_an_absent_field(cls: type[Any], field: mi.Field, spelling: str) -> None:
    if _accepts_none(field.type) and field.default is not None:
        return  # Part.data (absent is UNSET): null is a value there, tested below
    base = sample(mi.type_info(cls), skip=field.name)
    key = field.encode_name if spelling == "wire" else field.name
    without = {k: v for k, v in base.items() if k != field.encode_name}
    nulled = {**without, key: None}
    for got in _decoders(nulled, cls):
        if field.required:
            assert isinstance(got, msgspec.ValidationError), got
            message, path = codec.error_path(got)
            assert message == f"Object missing required field `{field.encode_name}`"
            assert path == field.encode_name
        elif _accepts_none(field.type):
            assert not isinstance(got, Exception), got
            assert getattr(got, field.name) is None
        else:
            assert not isinstance(got, Exception), got
            assert got == codec.convert(without, cls)  # the field has its default


@pytest.mark.parametrize(
    ("cls", "obj", "path"),
    [
        (
            requests.SendMessageRequest,
            {"message": {"messageId": None, "role": "ROLE_USER", "parts": [{"text": "x"}]}},
            "message.messageId",
        ),
        (requests.SendMessageRequest, {"message": None, "metadata": None}, "message"),
        (
            models.Task,
            {
                "id": "t",
                "status": {"state": "TASK_STATE_WORKING"},
                "history": [{"messageId": "m", "role": "ROLE_USER", "parts": None}],
            },
            "history.0.parts",
        ),
        (
            models.StreamResponse,
            {"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": None}}},
            "statusUpdate.status.state",
        ),
        (
            card.AgentCard,
            {**sample(mi.type_info(card.AgentCard)), "skills": [{"id": "s", "name": None}]},
            "skills.0.name",
        ),
    ],
)
def test_a_null_required_field_is_missing_at_its_path(
    cls: type[Any], obj: dict[str, Any], path: str
) -> None:
    for got in _decoders(obj, cls):
        assert isinstance(got, msgspec.ValidationError)
        assert codec.error_path(got)[1] == path


def test_a_null_required_field_is_invalid_params_with_its_field() -> None:
    params = {"message": {"messageId": "m", "role": None, "parts": [{"text": "x"}]}}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params})
    reply = jsonrpc.decode_request(body.encode())
    assert isinstance(reply, jsonrpc.ErrorReply)
    assert isinstance(reply.error, InvalidParamsError)
    assert reply.error.field == "message.role"


FREE_FORM = {"k": None, "nested": {"x": None, "list": [None, 1]}, "referenceTaskIds": None}


def test_nulls_inside_free_form_values_are_kept() -> None:
    message = {
        "messageId": "m",
        "role": "ROLE_USER",
        "parts": [
            {"data": None},
            {"data": FREE_FORM, "metadata": FREE_FORM, "filename": None},
            {"text": "x", "raw": None},
        ],
        "metadata": FREE_FORM,
        "extensions": None,  # a null the typed decoder refuses: the slow path walks it all
    }
    for got in _decoders(message, Message):
        assert isinstance(got, Message), got
        assert got.metadata == FREE_FORM
        first, second, third = got.parts
        assert first.kind == "data"
        assert first.data is None
        assert second.data == FREE_FORM
        assert second.metadata == FREE_FORM
        assert third.text == "x"
        assert got.extensions == ()
        # and it goes back on the wire as it came: data null, the free-form nulls intact
        wire = json.loads(codec.encode(got))
        assert wire["parts"][0] == {"data": None}
        assert wire["metadata"] == FREE_FORM


def test_nulls_inside_card_free_form_values_are_kept() -> None:
    extension = {"uri": "urn:x", "description": None, "required": None, "params": FREE_FORM}
    signature = {"protected": "p", "signature": "s", "header": FREE_FORM}
    obj = {
        **sample(mi.type_info(card.AgentCard)),
        "capabilities": {"streaming": None, "extensions": [extension]},
        "signatures": [signature],
    }
    for got in _decoders(obj, card.AgentCard):
        assert isinstance(got, card.AgentCard), got
        assert got.capabilities.extensions[0].params == FREE_FORM
        assert got.capabilities.extensions[0].required is False
        assert got.signatures[0].header == FREE_FORM


def test_a_data_part_of_null_is_a_data_part() -> None:
    for got in _decoders({"data": None, "text": None, "filename": None}, Part):
        assert isinstance(got, Part), got
        assert (got.kind, got.data, got.filename) == ("data", None, "")
    for got in _decoders({"data": None, "text": "x"}, Part):  # still two members
        assert isinstance(got, msgspec.ValidationError)


def test_canonical_input_never_takes_the_slow_path(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []

    def normalize(obj: Any, info: mi.Type) -> Any:  # pragma: no cover - must not run
        calls.append(obj)
        return obj

    request = sample(mi.type_info(requests.SendMessageRequest), full=True)
    request["metadata"] = None  # accepted by the typed decoder itself
    task = sample(mi.type_info(models.Task), full=True)
    monkeypatch.setattr(codec, "_normalize", normalize)
    codec.decode(json.dumps(request).encode(), requests.SendMessageRequest)
    codec.decode(json.dumps(task).encode(), models.Task)
    assert calls == []


# -- property: nulls anywhere ---------------------------------------------------------------


def _null_some(obj: Any, info: mi.Type, draw: Callable[[Any], Any]) -> tuple[Any, Any]:
    """(``obj`` with drawn optional members set to null, ``obj`` with them left out)."""
    if isinstance(info, mi.UnionType):
        member = next(t for t in info.types if not isinstance(t, mi.NoneType))
        return _null_some(obj, member, draw) if obj is not None else (obj, obj)
    if isinstance(info, mi.StructType) and isinstance(obj, dict):
        fields = {f.encode_name: f for f in info.fields}
        nulled: dict[str, Any] = {}
        absent: dict[str, Any] = {}
        for key, value in obj.items():
            f = fields[key]
            if not f.required and not _accepts_none(f.type) and draw(st.booleans()):
                nulled[key] = None
                continue
            nulled[key], absent[key] = _null_some(value, f.type, draw)
        return nulled, absent
    if isinstance(info, mi.VarTupleType | mi.ListType) and isinstance(obj, list):
        items = [_null_some(v, info.item_type, draw) for v in obj]
        return [i[0] for i in items], [i[1] for i in items]
    if isinstance(info, mi.DictType) and isinstance(obj, dict):
        values = {k: _null_some(v, info.value_type, draw) for k, v in obj.items()}
        return {k: v[0] for k, v in values.items()}, {k: v[1] for k, v in values.items()}
    return obj, obj


ROOTS = [
    requests.SendMessageRequest,
    requests.SendMessageResponse,
    requests.ListTasksRequest,
    requests.ListTasksResponse,
    requests.TaskPushNotificationConfig,
    requests.ListTaskPushNotificationConfigsResponse,
    models.Task,
    models.StreamResponse,
    card.AgentCard,
]


@pytest.mark.parametrize("cls", ROOTS, ids=lambda c: c.__name__)
@given(data=st.data())
def test_random_nulls_anywhere_read_as_absent(cls: type[Any], data: st.DataObject) -> None:
    info = mi.type_info(cls)
    full = sample(info, full=True)
    nulled, absent = _null_some(full, info, data.draw)
    expected = codec.convert(absent, cls)
    assert codec.decode(json.dumps(nulled).encode(), cls) == expected
    assert codec.convert(nulled, cls) == expected
