"""Wire objects with a JSON ``null`` for every unset field, made from the official SDK.

Two sources, each the SDK's own output:

* **A2A 1.0** (``a2a.types``, protobuf): :func:`nulled` serialises a message with the SDK's
  ``json_format`` and adds ``null`` for every field of the proto's field list that the
  SDK left out (recursively), then checks that the SDK's own parser reads the result back
  into the same message: the nulls are legal proto3 JSON and mean "absent". Fields of type
  ``google.protobuf.Value`` (a Part's ``data``) are skipped: a null there is a value.
* **A2A 0.3** (``a2a.compat.v0_3.types``, pydantic): :func:`dump_v0_3` is
  ``model_dump(mode="json", by_alias=True)`` without ``exclude_none``, which is what 0.3
  Python agents send (a null for every unset field); :func:`bare_v0_3` is the same without
  the nulls, for comparison. The builders below make typical 0.3 objects.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

from a2a import types as sdk
from a2a.compat.v0_3 import types as v03
from pydantic import BaseModel

__all__ = [
    "bare_v0_3",
    "card_v0_3",
    "dump_v0_3",
    "message_v0_3",
    "nulled",
    "plain",
    "send_params_v0_3",
    "task_v0_3",
    "with_nulls",
]

# google.protobuf ships no type stubs in this environment; its API is used untyped.
json_format: Any = importlib.import_module("google.protobuf.json_format")

#: Well-known types written as JSON scalars or free-form values: nothing inside to null.
_OPAQUE = frozenset(
    {
        "google.protobuf.Struct",
        "google.protobuf.Value",
        "google.protobuf.ListValue",
        "google.protobuf.Timestamp",
    }
)


# -- A2A 1.0 ---------------------------------------------------------------------------------


def with_nulls(obj: dict[str, Any], descriptor: Any) -> dict[str, Any]:
    """``obj`` (the ProtoJSON of a ``descriptor`` message) with ``null`` for every absent
    field, at every depth; free-form and ``Value`` fields are left as they are."""
    out = dict(obj)
    for field in descriptor.fields:
        kind = field.message_type
        if field.json_name not in out:
            if kind is None or kind.full_name != "google.protobuf.Value":
                out[field.json_name] = None
            continue
        if kind is None or kind.full_name in _OPAQUE:
            continue
        value = out[field.json_name]
        if kind.GetOptions().map_entry:
            item = kind.fields_by_name["value"].message_type
            if item is not None and item.full_name not in _OPAQUE:
                out[field.json_name] = {k: with_nulls(v, item) for k, v in value.items()}
        elif isinstance(value, list):
            out[field.json_name] = [with_nulls(v, kind) for v in value]
        else:
            out[field.json_name] = with_nulls(value, kind)
    return out


def plain(message: Any) -> bytes:
    """The SDK's own JSON for ``message`` (no nulls)."""
    return str(json_format.MessageToJson(message)).encode()


def nulled(message: Any) -> dict[str, Any]:
    """The SDK's JSON for ``message`` with a null for every unset field (see module doc).

    Raises:
        AssertionError: The SDK does not read the nulls as absent fields.
    """
    obj = with_nulls(json.loads(plain(message)), message.DESCRIPTOR)
    assert json_format.ParseDict(obj, type(message)()) == message
    return obj


def task_v1(task_id: str = "task-1", state: Any = sdk.TaskState.TASK_STATE_COMPLETED) -> Any:
    """A small SDK task: one history message and one artifact, most fields unset."""
    return sdk.Task(
        id=task_id,
        context_id="ctx-1",
        status=sdk.TaskStatus(state=state),
        history=[
            sdk.Message(message_id="m-1", role=sdk.Role.ROLE_USER, parts=[sdk.Part(text="hi")])
        ],
        artifacts=[sdk.Artifact(artifact_id="a-1", parts=[sdk.Part(text="hi")])],
    )


def card_v1(rpc_url: str, rest_url: str) -> Any:
    """A small SDK card (JSON-RPC and HTTP+JSON at 1.0), most fields unset."""
    return sdk.AgentCard(
        name="nulls",
        description="writes null for every unset field",
        version="1.0.0",
        supported_interfaces=[
            sdk.AgentInterface(url=rpc_url, protocol_binding="JSONRPC", protocol_version="1.0"),
            sdk.AgentInterface(url=rest_url, protocol_binding="HTTP+JSON", protocol_version="1.0"),
        ],
        capabilities=sdk.AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[sdk.AgentSkill(id="s", name="S", description="d", tags=["t"])],
    )


# -- A2A 0.3 ---------------------------------------------------------------------------------


def dump_v0_3(model: BaseModel) -> Any:
    """What a 0.3 Python agent sends: every unset field as ``null``."""
    return model.model_dump(mode="json", by_alias=True)


def bare_v0_3(model: BaseModel) -> Any:
    """The same object without its nulls."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def message_v0_3(text: str, role: v03.Role = v03.Role.user, message_id: str = "m-1") -> Any:
    """A 0.3 message with a text, a data (holding nulls) and two file parts."""
    return v03.Message(
        message_id=message_id,
        role=role,
        parts=[
            v03.Part(root=v03.TextPart(text=text)),
            v03.Part(root=v03.DataPart(data={"kept": None, "list": [None]})),
            v03.Part(root=v03.FilePart(file=v03.FileWithUri(uri="https://f.example.com/a"))),
            v03.Part(root=v03.FilePart(file=v03.FileWithBytes(bytes="aGk=", name="hi.txt"))),
        ],
    )


def send_params_v0_3(text: str, *, blocking: bool | None = None) -> Any:
    """0.3 ``MessageSendParams``; ``configuration`` holds only ``blocking`` when given."""
    configuration = None if blocking is None else v03.MessageSendConfiguration(blocking=blocking)
    return v03.MessageSendParams(message=message_v0_3(text), configuration=configuration)


def task_v0_3(task_id: str = "t-03", state: v03.TaskState = v03.TaskState.completed) -> Any:
    """A 0.3 task with a status message, one artifact and one history message."""
    agent = message_v0_3("done", v03.Role.agent, "m-2")
    return v03.Task(
        id=task_id,
        context_id="c-03",
        status=v03.TaskStatus(state=state, message=agent, timestamp="2026-01-01T00:00:00Z"),
        artifacts=[v03.Artifact(artifact_id="a-1", parts=[v03.Part(root=v03.TextPart(text="x"))])],
        history=[message_v0_3("hi")],
    )


def card_v0_3(url: str) -> Any:
    """A 0.3 card at ``url`` (JSON-RPC) with skills, an extension and security schemes."""
    return v03.AgentCard(
        name="legacy-nulls",
        description="a 0.3 Python agent",
        version="0.3.0",
        url=url,
        capabilities=v03.AgentCapabilities(
            streaming=True, extensions=[v03.AgentExtension(uri="urn:ext")]
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[v03.AgentSkill(id="echo", name="Echo", description="echoes", tags=["echo"])],
        security_schemes={
            "key": v03.SecurityScheme(
                root=v03.APIKeySecurityScheme(in_=v03.In.header, name="X-Key")
            ),
            "oauth": v03.SecurityScheme(
                root=v03.OAuth2SecurityScheme(
                    flows=v03.OAuthFlows(
                        client_credentials=v03.ClientCredentialsOAuthFlow(
                            token_url="https://auth.example.com/token", scopes={}
                        )
                    )
                )
            ),
        },
        security=[{"key": []}],
        additional_interfaces=[v03.AgentInterface(url=url, transport="JSONRPC")],
    )
