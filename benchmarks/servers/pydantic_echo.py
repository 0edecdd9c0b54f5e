"""One PydanticAI agent, served two ways: by a2a-actors and by PydanticAI's own A2A server.

    a2a-actors serve benchmarks.servers.pydantic_echo:served --port 0 --backend asyncio
    python benchmarks/servers/pydantic_echo.py [--host 127.0.0.1]

``agent`` is a ``pydantic_ai.Agent`` on a ``FunctionModel`` that gives a fixed reply
(:data:`REPLY`), both as a whole (``function``, for ``agent.run``) and as one streamed
text delta (``stream_function``, for ``agent.iter`` / ``run_stream_events``): no model
call, no tools, so what is measured is the server around the agent.

``served`` is that agent as an a2a-actors agent (``a2a_actors.frameworks.pydantic_ai
.as_agent``). Run as a script, the module serves the same agent with fasta2a
(``fasta2a.pydantic_ai.agent_to_a2a``, a Starlette app with an in-memory broker, storage
and worker) on uvicorn, and prints one line on stdout, the base URL, once uvicorn accepts
requests; it stops on SIGTERM or SIGINT (uvicorn's own handlers). uvicorn runs as for the
a2a-sdk setup of ``bench_http.py`` (``servers/sdk_echo.py``): its defaults (``loop="auto"``,
``http="auto"``), no access log.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import AsyncIterator
from typing import Any

from pydantic_ai import Agent, ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from a2a_actors.frameworks.pydantic_ai import as_agent

__all__ = ("NAME", "REPLY", "agent", "build_app", "served")

NAME = "pydantic-echo"
#: What the model answers to every prompt.
REPLY = "Hello from the PydanticAI agent"


def _reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart(REPLY)])


async def _stream_reply(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    yield REPLY


agent: Agent[None, str] = Agent(
    FunctionModel(_reply, stream_function=_stream_reply),
    name=NAME,
    description="A PydanticAI agent whose model gives a fixed reply",
)

#: ``agent`` served by a2a-actors (``a2a-actors serve benchmarks.servers.pydantic_echo:served``).
served = as_agent(agent, name=NAME)


def build_app(base_url: str) -> Any:
    """``agent`` as fasta2a serves it (``fasta2a.pydantic_ai.agent_to_a2a``): a Starlette app."""
    # Imported by name: fasta2a ships no type information (no py.typed).
    bridge: Any = importlib.import_module("fasta2a.pydantic_ai")
    return bridge.agent_to_a2a(agent, name=NAME, url=f"{base_url}/", description=agent.description)


def main(argv: list[str] | None = None) -> int:
    # A sibling import, inside main(): this module is also imported as benchmarks.servers.*.
    from _uvicorn import run_printing_url

    parser = argparse.ArgumentParser(description="the PydanticAI agent on fasta2a and uvicorn")
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)
    return run_printing_url(build_app, args.host)


if __name__ == "__main__":
    sys.exit(main())
