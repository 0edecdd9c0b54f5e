"""Wire objects are not tracked by the cycle collector (a server keeps many of them)."""

from __future__ import annotations

import gc

from a2a_actors.protocol import (
    Artifact,
    Message,
    Part,
    Role,
    StreamResponse,
    Task,
    TaskState,
    TaskStatus,
    codec,
)
from a2a_actors.protocol._models import WireStruct


def test_every_wire_struct_is_untracked_whether_built_or_decoded() -> None:
    message = Message(message_id="m", role=Role.USER, parts=(Part(text="hi"),))
    task = Task(
        id="t",
        status=TaskStatus(state=TaskState.WORKING, message=message),
        history=(message,),
        artifacts=(Artifact(artifact_id="a", parts=(Part(data={"k": [1, 2]}),)),),
    )
    decoded = codec.decode(codec.encode(StreamResponse(task=task)), StreamResponse)
    for root in (task, decoded):
        pending: list[object] = [root]
        seen = 0
        while pending:
            obj = pending.pop()
            if isinstance(obj, WireStruct):
                assert not gc.is_tracked(obj), type(obj).__name__
                seen += 1
                pending.extend(getattr(obj, f) for f in obj.__struct_fields__)
            elif isinstance(obj, tuple):
                pending.extend(obj)
        assert seen >= 6


def test_every_wire_class_inherits_gc_false() -> None:
    def subclasses(cls: type[WireStruct]) -> list[type[WireStruct]]:
        found: list[type[WireStruct]] = [cls]
        for sub in cls.__subclasses__():
            found.extend(subclasses(sub))
        return found

    classes = subclasses(WireStruct)
    assert len(classes) > 40
    for cls in classes:
        assert cls.__struct_config__.gc is False, cls.__name__
