"""The agent the large-payload tests serve (in process and through the CLI), and the
content it makes: deterministic text and bytes of any size, checked byte for byte.

Its commands (the message's first word, then numbers):

* ``artifact SIZE``: one text artifact of ``SIZE`` characters (:func:`text`), COMPLETED;
* ``raw SIZE``: one artifact of ``SIZE`` bytes (:func:`data`), COMPLETED;
* ``status SIZE``: WORKING with a status message of ``SIZE`` characters, then COMPLETED
  with another one (seed 2);
* ``chunks COUNT SIZE``: asks "go?", then streams one artifact in ``COUNT`` appended
  chunks of ``SIZE`` characters each (chunk ``i`` is ``text(SIZE, i)``), COMPLETED;
* ``hold SIZE``: one text artifact of ``SIZE`` characters, prints ``holding <task id>``,
  then WORKING until the node goes;
* anything else: asks for more, then completes with the length of what it got.
"""

from __future__ import annotations

import hashlib

import anyio

from a2a_actors.protocol._models import Part
from a2a_actors.runtime import TaskContext
from a2a_actors.runtime._agent import Agent

__all__ = ("agent", "data", "text")

#: Not only ASCII, so that byte-exact means UTF-8 exact.
_PREFIX = "héllo wörld ✓ — "


def text(size: int, seed: int = 0) -> str:
    """``size`` characters, always the same for the same arguments."""
    body = hashlib.shake_256(b"%d" % seed).hexdigest((size - len(_PREFIX) + 1) // 2)
    return (_PREFIX + body)[:size]


def data(size: int, seed: int = 0) -> bytes:
    """``size`` bytes, always the same for the same arguments."""
    return hashlib.shake_256(b"raw %d" % seed).digest(size)


async def handler(ctx: TaskContext) -> None:
    """See the module docstring."""
    word, *numbers = ctx.text.split()[:3] or [""]
    sizes = [int(n) for n in numbers if n.isdigit()]
    if word == "artifact":
        await ctx.artifact(text(sizes[0]), name="big")
        await ctx.complete("done")
    elif word == "raw":
        await ctx.artifact(Part(raw=data(sizes[0]), media_type="application/octet-stream"))
        await ctx.complete("done")
    elif word == "status":
        await ctx.update(text(sizes[0]))
        await ctx.complete(text(sizes[0], 2))
    elif word == "chunks":
        await ctx.ask("go?")
        count, size = sizes
        artifact_id = "streamed"
        for i in range(count):
            await ctx.artifact(
                text(size, i), artifact_id=artifact_id, append=i > 0, last_chunk=i == count - 1
            )
        await ctx.complete("streamed")
    elif word == "hold":
        await ctx.artifact(text(sizes[0]), name="big")
        print("holding", ctx.task_id, flush=True)
        await anyio.sleep_forever()
    else:
        more = await ctx.ask("more?")
        await ctx.complete(f"got {len(ctx.text)} then {len(more.text)}")


agent = Agent(handler=handler, name="payloads")
