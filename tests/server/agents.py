"""Scenario agents for the server tests, chosen by the first word of the first message.

=================  ===========================================================================
text starts with    behaviour
=================  ===========================================================================
``input``           INPUT_REQUIRED "What is your name?"; the follow-up completes the task with
                    an artifact ``answer`` holding the follow-up text
``sleep``           WORKING "sleeping", then waits until cancelled
``stream``          WORKING, three chunks of artifact ``stream`` (append/lastChunk), COMPLETED
``message``         a single agent Message echoing the text (no task)
``boom``            raises RuntimeError (the task fails)
``auth``            AUTH_REQUIRED "token please"; the follow-up completes the task
``whoami``          a Message ``"<caller>|<sorted requested extensions, comma-separated>"``
``tenant``          a Message with ``ctx.tenant``; ``tenant ask``: INPUT_REQUIRED, then a
                    Message ``"<first tenant>/<follow-up's tenant>"``
anything else       artifact ``echo`` with the text; COMPLETED
=================  ===========================================================================
"""

from __future__ import annotations

import anyio

from a2a_actors.protocol._card import AgentExtension, AgentSkill
from a2a_actors.runtime import Agent, TaskContext

QUESTION = "What is your name?"
CHUNKS = ("alpha ", "beta ", "gamma")
EXTENSION = "urn:test:ext"
REQUIRED_EXTENSION = "urn:test:required"


async def scenario(ctx: TaskContext) -> None:
    text = ctx.text
    word = text.strip().lower()
    if word.startswith("input"):
        reply = await ctx.ask(QUESTION)
        await ctx.artifact(reply.text, artifact_id="answer", name="answer")
    elif word.startswith("sleep"):
        await ctx.update("sleeping")
        await anyio.sleep_forever()
    elif word.startswith("stream"):
        await ctx.update("streaming")
        last = len(CHUNKS) - 1
        for i, chunk in enumerate(CHUNKS):
            await ctx.artifact(
                chunk, artifact_id="stream", name="stream", append=i > 0, last_chunk=i == last
            )
    elif word.startswith("message"):
        await ctx.reply(text)
    elif word.startswith("boom"):
        raise RuntimeError("boom")
    elif word.startswith("whoami"):
        await ctx.reply(f"{ctx.caller}|{','.join(sorted(ctx.extensions))}")
    elif word.startswith("tenant ask"):
        first = ctx.tenant
        await ctx.ask("which tenant now?")
        await ctx.reply(f"{first}/{ctx.tenant}")
    elif word.startswith("tenant"):
        await ctx.reply(ctx.tenant)
    elif word.startswith("auth"):
        await ctx.require_auth("token please")
        await ctx.complete("authorised")
    else:
        await ctx.artifact(text, artifact_id="echo", name="echo")


SKILL = AgentSkill(id="scenarios", name="Scenarios", description="Test scenarios", tags=("test",))

scenario_agent = Agent(
    handler=scenario,
    name="scenario-agent",
    description="Server test scenarios",
    skills=(SKILL,),
    extensions=(
        AgentExtension(uri=EXTENSION, description="optional test extension"),
        AgentExtension(uri=REQUIRED_EXTENSION, description="required", required=True),
    ),
)
