"""Conformance agents for the official A2A TCK (a2aproject/a2a-tck, 1.0).

    a2a-actors serve examples.conformance:agent      # full profile
    a2a-actors serve examples.conformance:minimal    # minimal profile
    a2a-actors serve examples.conformance:agent --grpc-port 0   # + the gRPC binding

With ``--grpc-port`` the card also lists a ``GRPC`` interface and the kit's gRPC tests
(``run_tck.py --transport grpc``) run against it (docs/grpc.md, "Conformance").

The kit chooses the behaviour it needs by the **messageId prefix** of each message
(``docs/spec`` conformance §1); the longest matching prefix wins, and every behaviour also
works as a follow-up on an existing task (the agent waits in INPUT_REQUIRED and dispatches
the next message the same way):

=============================  ============================================================
messageId prefix               behaviour
=============================  ============================================================
``tck-complete-task``          COMPLETED, status message "Hello from TCK"
``tck-input-required``         INPUT_REQUIRED (again, as a follow-up)
``tck-artifact-text``          artifact: text "Generated text content"; COMPLETED
``tck-artifact-file-url``      artifact: url https://example.com/output.txt; COMPLETED
``tck-artifact-file``          artifact: raw bytes, text/plain, output.txt; COMPLETED
``tck-artifact-data``          artifact: data {"key": "value", "count": 42}; COMPLETED
``tck-message-response``       a Message "Direct message response" (no task)
``tck-stream-001``/``-003``,   WORKING, a text artifact, COMPLETED
``tck-stream-ordering-001``
``tck-stream-002``             COMPLETED
``tck-stream-artifact-text``   WORKING, text artifact, COMPLETED
``tck-stream-artifact-file``   WORKING, file artifact, COMPLETED
``tck-stream-artifact-chunked``  WORKING, one artifact in 3 chunks (append/lastChunk)
``tck-reject-task``            REJECTED
``test-resubscribe-message-id``  WORKING for 4.5 s (an update per second), COMPLETED
``tck-cap-ext-004``            -32008 unless ``A2A-Extensions`` names the TCK extension
                               (checked by the server; see ``enforce_required_extensions``)
anything else                  WORKING, artifact echoing the text, COMPLETED
=============================  ============================================================

The two attributes are :class:`~a2a_actors.server.ServedAgent` values, so the server
profile travels with them: ``agent`` declares streaming, push notifications, an extended
card and the required extension ``urn:a2a:tck:required-extension``, and allows push to
loopback (the kit's receiver is on 127.0.0.1); ``minimal`` declares none of them. Both
serve a pure 1.0 card (no 0.3 fields), since the kit validates the card's schema.
"""

from __future__ import annotations

import anyio

from a2a_actors.protocol import AgentExtension, AgentSkill, Message, Part, SendMessageRequest
from a2a_actors.runtime import Agent, TaskContext
from a2a_actors.server import ExtendedCard, ServedAgent, ServerConfig

__all__ = ("TCK_EXTENSION", "agent", "behaviour_of", "minimal")

TCK_EXTENSION = "urn:a2a:tck:required-extension"
FILE_BYTES = b"Generated file content"

_BEHAVIOURS = {
    "tck-complete-task": "complete",
    "tck-input-required": "input",
    "tck-artifact-text": "artifact-text",
    "tck-artifact-file-url": "artifact-url",
    "tck-artifact-file": "artifact-file",
    "tck-artifact-data": "artifact-data",
    "tck-message-response": "message",
    "tck-stream-001": "stream",
    "tck-stream-003": "stream",
    "tck-stream-ordering-001": "stream",
    "tck-stream-002": "complete-plain",
    "tck-stream-artifact-text": "stream-text",
    "tck-stream-artifact-file": "stream-file",
    "tck-stream-artifact-chunked": "stream-chunked",
    "tck-reject-task": "reject",
    "test-resubscribe-message-id": "slow",
}
#: Prefixes, longest first, so ``tck-artifact-file-url`` wins over ``tck-artifact-file``.
_PREFIXES = sorted(_BEHAVIOURS, key=len, reverse=True)


def behaviour_of(message_id: str) -> str:
    """The behaviour the messageId asks for (``"echo"`` when no prefix matches)."""
    for prefix in _PREFIXES:
        if message_id.startswith(prefix):
            return _BEHAVIOURS[prefix]
    return "echo"


def _text_part() -> Part:
    return Part(text="Generated text content")


def _file_part() -> Part:
    return Part(raw=FILE_BYTES, media_type="text/plain", filename="output.txt")


async def _artifact_then_complete(ctx: TaskContext, part: Part, *, working: bool) -> None:
    if working:
        await ctx.update("Working...")
    await ctx.artifact(part, name="result")
    await ctx.complete()


async def conformance(ctx: TaskContext) -> None:
    """Act on the messageId of each message of the task (see the module docstring)."""
    message: Message = ctx.message
    while True:
        kind = behaviour_of(message.message_id)
        if kind == "input":
            message = await ctx.ask("Please provide input")
            continue
        break
    if kind == "complete":
        await ctx.complete("Hello from TCK")
    elif kind == "complete-plain":
        await ctx.complete()
    elif kind == "message":
        await ctx.reply("Direct message response")
    elif kind == "reject":
        await ctx.reject("Task rejected by the TCK agent")
    elif kind in ("artifact-text", "stream-text"):
        await _artifact_then_complete(ctx, _text_part(), working=kind == "stream-text")
    elif kind in ("artifact-file", "stream-file"):
        await _artifact_then_complete(ctx, _file_part(), working=kind == "stream-file")
    elif kind == "artifact-url":
        part = Part(
            url="https://example.com/output.txt", media_type="text/plain", filename="output.txt"
        )
        await _artifact_then_complete(ctx, part, working=False)
    elif kind == "artifact-data":
        part = Part(data={"key": "value", "count": 42}, media_type="application/json")
        await _artifact_then_complete(ctx, part, working=False)
    elif kind == "stream":
        await _artifact_then_complete(ctx, _text_part(), working=True)
    elif kind == "stream-chunked":
        await ctx.update("Working...")
        chunks = ("chunk one, ", "chunk two, ", "chunk three")
        artifact_id = None
        for i, chunk in enumerate(chunks):
            artifact_id = await ctx.artifact(
                chunk,
                artifact_id=artifact_id,
                name="chunked",
                append=i > 0,
                last_chunk=i == len(chunks) - 1,
            )
        await ctx.complete()
    elif kind == "slow":
        for second in range(4):
            await ctx.update(f"still working ({second} s)")
            await anyio.sleep(1)
        await anyio.sleep(0.5)
        await ctx.complete("Hello from TCK")
    else:
        await ctx.update("Working...")
        await ctx.artifact(message.text or "(no text)", name="echo")
        await ctx.complete()


def _needs_tck_extension(request: SendMessageRequest) -> bool:
    return request.message.message_id.startswith("tck-cap-ext-004")


_SKILL = AgentSkill(
    id="tck",
    name="TCK behaviours",
    description="Behaviours chosen by messageId prefix, as the A2A TCK expects",
    tags=("conformance", "tck"),
    examples=("tck-complete-task-1", "tck-input-required-1"),
)

agent = ServedAgent(
    Agent(
        handler=conformance,
        name="a2a-actors conformance agent",
        description="Implements every behaviour the A2A 1.0 TCK asks for (full profile)",
        skills=(_SKILL,),
        extensions=(
            AgentExtension(
                uri=TCK_EXTENSION, description="Required by the TCK (CORE-CAP-004)", required=True
            ),
        ),
    ),
    ServerConfig(
        streaming=True,
        push_notifications=True,
        allow_private_push=True,
        extended_card=ExtendedCard(
            skills=(
                AgentSkill(
                    id="tck-extended",
                    name="Extended-card skill",
                    description="Listed only on the extended agent card",
                    tags=("conformance", "extended"),
                ),
            )
        ),
        enforce_required_extensions=_needs_tck_extension,
        legacy_v0_3=False,
    ),
)

minimal = ServedAgent(
    Agent(
        handler=conformance,
        name="a2a-actors conformance agent (minimal)",
        description="The TCK behaviours with no optional capability declared",
        skills=(_SKILL,),
    ),
    ServerConfig(streaming=False, push_notifications=False, legacy_v0_3=False),
)
