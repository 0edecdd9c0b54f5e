"""A remote agent as a tool for an LLM tool loop: the :class:`AgentTool` shape and its schema.

:meth:`~a2a_actors.client._remote_agent.RemoteAgent.as_tool` hands :func:`agent_tool` an async
``(message: str) -> str`` function (one call in a session); this module dresses it as a
tool: a name LLM APIs accept (:func:`tool_name`), a description, and the JSON Schema of its
one ``message`` parameter in the ``{"name", "description", "parameters"}`` form tool-calling
APIs take.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, cast

__all__ = ("AgentTool", "agent_tool", "tool_name")


class AgentTool(Protocol):
    """An async ``(message: str) -> str`` callable described for an LLM tool loop."""

    name: str
    description: str
    json_schema: dict[str, Any]

    async def __call__(self, message: str) -> str: ...


def tool_name(name: str) -> str:
    """``name`` made fit for a tool name: only ``A-Za-z0-9_-``, at most 64 characters.

    Each run of other characters becomes one ``_`` (none kept at the ends); when nothing is
    left the name is ``"remote_agent"``.
    """
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_")
    return cleaned[:64] or "remote_agent"


def agent_tool(
    ask: Callable[[str], Awaitable[str]], *, name: str, description: str, agent_name: str
) -> AgentTool:
    """``ask`` as an :class:`AgentTool` called ``name`` (already a :func:`tool_name`).

    The tool gets ``name``, ``description`` and ``json_schema`` attributes, and ``name`` and
    ``description`` as its ``__name__``/``__qualname__`` and ``__doc__``; ``agent_name``
    appears in the description of the ``message`` parameter. Calling the tool awaits ``ask``
    and lets its errors propagate.
    """

    async def tool(message: str) -> str:
        return await ask(message)

    schema = {
        "name": name,
        "description": description,
        "parameters": {
            "type": "object",
            "properties": {
                "message": {
                    "type": "string",
                    "description": f"The message to send to {agent_name}.",
                }
            },
            "required": ["message"],
        },
    }
    attributes: Mapping[str, object] = {
        "name": name,
        "description": description,
        "json_schema": schema,
    }
    tool.__dict__.update(attributes)
    tool.__name__ = tool.__qualname__ = name
    tool.__doc__ = description
    return cast(AgentTool, tool)
