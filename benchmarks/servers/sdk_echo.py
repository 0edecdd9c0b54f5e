"""The official a2a-sdk server with an echo agent, on uvicorn: the reference setup.

    python benchmarks/servers/sdk_echo.py [--host 127.0.0.1]

Prints one line on stdout, the base URL, once uvicorn accepts requests; stops on SIGTERM
or SIGINT (uvicorn's own handlers). The app is assembled from the SDK's public route
factories (JSON-RPC at ``/``, HTTP+JSON at ``/rest``, the AgentCard), with the SDK's
``DefaultRequestHandler`` over an ``InMemoryTaskStore`` and an ``AgentExecutor`` written
against the SDK's public API that behaves like ``examples/echo.py``: WORKING, an artifact
``"echo"`` holding the user's text, COMPLETED (the SDK requires the Task to be enqueued
first, so a stream carries one more event than ours).

uvicorn runs with its defaults (``loop="auto"``, ``http="auto"``: uvloop and httptools when
installed, else asyncio and h11) and without an access log, so the SDK gets the best setup
the environment offers.
"""

from __future__ import annotations

import argparse
import sys

from _uvicorn import run_printing_url
from a2a.helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Part
from starlette.applications import Starlette


class EchoExecutor(AgentExecutor):
    """The SDK counterpart of ``examples/echo.py``."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        if task is None:
            if context.message is None:  # pragma: no cover - the SDK always passes one
                raise RuntimeError("execute() called without a message")
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        await updater.add_artifact(
            [Part(text=context.get_user_input())], artifact_id="echo", name="echo"
        )
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        if context.task_id is None or context.context_id is None:  # pragma: no cover
            raise RuntimeError("cancel() called without a task")
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def build_card(base_url: str) -> AgentCard:
    """The echo agent's card: JSON-RPC at ``/`` and HTTP+JSON at ``/rest``, A2A 1.0."""
    return AgentCard(
        name="echo",
        description="Echoes your text back as an artifact",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=f"{base_url}/", protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(
                url=f"{base_url}/rest", protocol_binding="HTTP+JSON", protocol_version="1.0"
            ),
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Repeats text", tags=["echo"])],
    )


def build_app(base_url: str) -> Starlette:
    """The SDK app for the echo agent."""
    card = build_card(base_url)
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url="/"),
        *create_rest_routes(handler, path_prefix="/rest"),
    ]
    return Starlette(routes=routes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="the official a2a-sdk echo server on uvicorn")
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)
    return run_printing_url(build_app, args.host)


if __name__ == "__main__":
    sys.exit(main())
