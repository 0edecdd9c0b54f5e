"""Pipelines: compose agents in Python; every pipeline is itself an (orchestrated) agent.

* :func:`sequence` — the output of one step is the input of the next;
* :func:`fan_out` — every step gets the same input, concurrently; a merge function combines
  the results; one failure cancels the other branches unless ``cancel_on_failure=False``;
* :func:`route` — one step, chosen by a skill tag named in the request (or the first word of
  its text), or by a function of the context.

A *step* is anything ``ctx.delegate`` accepts: an Agent (or an async function of a context,
or an object with ``handle``) runs locally as a child task; an ``http(s)`` URL, a
RemoteAgent or an A2AClient is remote; any other string is resolved by the orchestrator.
Each step is a delegation, so it is correlated, recorded as a child, cancelled with the
pipeline and reports failures with their origin. A pipeline agent can be served
(``orchestrator.serve``), delegated to, and used as a step of another pipeline; it needs an
:class:`~orchestrator._delegator.Orchestrator` as its supervisor's delegator.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TypeAlias

import anyio

from a2a_actors.client import A2AClient, RemoteAgent
from a2a_actors.protocol._card import AgentSkill
from a2a_actors.protocol._models import Message
from a2a_actors.runtime import Agent, TaskContext, as_agent
from orchestrator._delegator import delegate
from orchestrator._errors import DelegationError
from orchestrator._orchestrated import orchestrated
from orchestrator._outcome import DelegationResult

__all__ = (
    "Chooser",
    "Merge",
    "Step",
    "fan_out",
    "join_texts",
    "route",
    "sequence",
    "step_name",
)

logger = logging.getLogger("orchestrator")

#: A pipeline step (see the module docstring).
Step: TypeAlias = object
#: Combines fan-out results (in step order) into what the pipeline returns: a ``str``, a
#: ``Message``, Artifact(s), or an awaitable of one of them.
Merge: TypeAlias = Callable[[list[DelegationResult]], object]
#: Chooses a route's step from the context (None: no route).
Chooser: TypeAlias = Callable[[TaskContext], object]


def _prepare(step: Step) -> Step:
    if isinstance(step, str | RemoteAgent | A2AClient | Agent):
        return step
    return as_agent(step)


def step_name(step: Step) -> str:
    """A readable name of a step: its agent name, or its URL."""
    if isinstance(step, Agent | RemoteAgent):
        return step.name
    if isinstance(step, A2AClient):
        return step.card.name if step.card is not None else step.interface.url
    if isinstance(step, str):
        return step
    return as_agent(step).name


def _described(step: Step) -> str:
    """How a default description names a step: never by a URL, which may be internal (a
    card is public), so a remote step is "a remote agent" unless its card is known."""
    if isinstance(step, str) and step.startswith(("http://", "https://")):
        return "a remote agent"
    if isinstance(step, A2AClient) and step.card is None:
        return "a remote agent"
    return step_name(step)


def join_texts(results: list[DelegationResult]) -> str:
    """The default merge: the texts of the successful results, one per line."""
    return "\n".join(r.text for r in results if r.ok)


def _pipeline(
    handler: Callable[[TaskContext], Awaitable[object]],
    *,
    name: str,
    description: str,
    skills: tuple[AgentSkill, ...] = (),
) -> Agent:
    return orchestrated(Agent(handler=handler, name=name, description=description, skills=skills))


def sequence(*steps: Step, name: str = "sequence", description: str = "") -> Agent:
    """An agent that runs ``steps`` one after the other, each on the previous one's output.

    The first step gets the request's message; each next step gets the previous result's
    artifacts' parts (else its message's parts). The pipeline finishes with the last
    result's artifacts, else its text. A failing step fails the pipeline (its error relayed).

    Raises:
        ValueError: No steps.
        TypeError: A step is not a step.
    """
    if not steps:
        raise ValueError("a sequence needs at least one step")
    prepared = tuple(_prepare(s) for s in steps)

    async def run(ctx: TaskContext) -> object:
        content: Message = ctx.message
        result: DelegationResult | None = None
        for step in prepared:
            result = await delegate(ctx, step, content)
            content = result.as_message()
        assert result is not None
        return result.output

    text = description or "Runs " + " -> ".join(_described(s) for s in prepared)
    return _pipeline(run, name=name, description=text)


def fan_out(
    *steps: Step,
    merge: Merge = join_texts,
    cancel_on_failure: bool = True,
    name: str = "fan_out",
    description: str = "",
) -> Agent:
    """An agent that runs every step on the same input, concurrently, and merges the results.

    Args:
        steps: The branches.
        merge: Combines the results, in step order, into the pipeline's return value.
        cancel_on_failure: On the first failing branch, cancel the others (their children
            end CANCELED) and fail the pipeline with that branch's error. When false,
            every branch runs to its end and ``merge`` also gets the failed ones
            (``result.ok`` is false, ``result.error`` says why).
        name: The agent's name.
        description: The agent's description.

    Raises:
        ValueError: No steps.
    """
    if not steps:
        raise ValueError("a fan-out needs at least one step")
    prepared = tuple(_prepare(s) for s in steps)

    async def run(ctx: TaskContext) -> object:
        results: list[DelegationResult | None] = [None] * len(prepared)
        failures: list[DelegationError] = []

        async with anyio.create_task_group() as tg:

            async def branch(index: int, step: Step) -> None:
                try:
                    results[index] = await delegate(ctx, step, ctx.message)
                except DelegationError as error:
                    if cancel_on_failure:
                        failures.append(error)
                        tg.cancel_scope.cancel()
                    else:
                        results[index] = DelegationResult(
                            error.origin_agent or step_name(step), None, None, error=error
                        )

            for index, step in enumerate(prepared):
                tg.start_soon(branch, index, step)
        if failures:
            raise failures[0]
        merged = merge([r for r in results if r is not None])
        if inspect.isawaitable(merged):
            merged = await merged
        return merged

    text = description or "Runs " + ", ".join(_described(s) for s in prepared) + " concurrently"
    return _pipeline(run, name=name, description=text)


def route(
    routes: Mapping[str, Step] | Sequence[Agent] | Chooser,
    *,
    by: str = "skill",
    default: Step | None = None,
    name: str = "route",
    description: str = "",
) -> Agent:
    """An agent that hands the request to one step.

    Args:
        routes: A mapping from skill tag to step; or local Agents, keyed by their skills'
            ids and tags; or a function of the context returning the step (or None).
        by: Where the key comes from: ``"text"`` takes the first word of the text;
            any other value names a message (then request) metadata field, ``"skill"`` by
            default. Keys compare case-insensitively.
        default: The step for requests without a matching key; without one they are
            REJECTED.
        name: The agent's name.
        description: The agent's description.

    Raises:
        ValueError: No routes, or Agents without skills.
    """
    table: dict[str, Step] = {}
    chooser: Chooser | None = None
    skills: list[AgentSkill] = []
    if isinstance(routes, Mapping):
        for key, step in routes.items():
            table[key.lower()] = _prepare(step)
            skills.append(
                AgentSkill(id=key, name=key, description=f"-> {_described(step)}", tags=(key,))
            )
    elif isinstance(routes, Sequence):
        for step in routes:
            for skill in step.skills:
                for key in (skill.id, *skill.tags):
                    table.setdefault(key.lower(), step)
            skills.extend(step.skills)
    else:
        chooser = routes
    if chooser is None and not table:
        raise ValueError("a route needs routes (keys, or Agents that declare skills)")
    fallback = _prepare(default) if default is not None else None

    def key_of(ctx: TaskContext) -> str:
        if by == "text":
            words = ctx.text.split()
            return words[0].lower() if words else ""
        for metadata in (ctx.metadata, ctx.request_metadata):
            value = (metadata or {}).get(by)
            if isinstance(value, str) and value:
                return value.lower()
        return ""

    async def run(ctx: TaskContext) -> object:
        if chooser is not None:
            chosen = chooser(ctx)
            step = await chosen if inspect.isawaitable(chosen) else chosen
            key = "(chooser)"
        else:
            key = key_of(ctx)
            step = table.get(key)
        if step is None:
            step = fallback
        if step is None:
            known = ", ".join(sorted(table)) or "none"
            await ctx.reject(f"no route for {by} {key!r} (known: {known})")
            return None
        return (await delegate(ctx, step, ctx.message)).output

    text = description or f"Routes by {by}"
    return _pipeline(run, name=name, description=text, skills=tuple(skills))
