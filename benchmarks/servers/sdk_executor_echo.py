"""One a2a-sdk ``AgentExecutor``, served two ways: by the SDK's own server and by a2a-actors.

    a2a-actors serve benchmarks.servers.sdk_executor_echo:served --port 0 --backend asyncio
    python benchmarks/servers/sdk_executor_echo.py [--host 127.0.0.1]

``executor`` is an ``AgentExecutor`` written against the SDK's public API, the echo of
``servers/sdk_echo.py``: it enqueues the Task (SUBMITTED), then through a ``TaskUpdater``
WORKING, an artifact ``"echo"`` holding the user's text, and COMPLETED.

``served`` is that executor as an a2a-actors agent
(``a2a_actors.frameworks.a2a_sdk.as_agent(executor, card=CARD)``). Run as a script, the
module serves the same executor with the SDK's ``DefaultRequestHandler`` over an
``InMemoryTaskStore`` (JSON-RPC at ``/``, HTTP+JSON at ``/rest``, the AgentCard) on uvicorn,
as ``servers/sdk_echo.py`` does: uvicorn's defaults (``loop="auto"``, ``http="auto"``), no
access log; it prints one line on stdout, the base URL, once uvicorn accepts requests, and
stops on SIGTERM or SIGINT (uvicorn's own handlers).
"""

from __future__ import annotations

import argparse
import sys

from a2a.helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Part
from starlette.applications import Starlette

from a2a_actors.frameworks.a2a_sdk import as_agent

__all__ = ("CARD", "EchoExecutor", "build_app", "executor", "served")


class EchoExecutor(AgentExecutor):
    """WORKING, an artifact ``"echo"`` with the user's text, COMPLETED."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        if task is None:
            if context.message is None:  # pragma: no cover - both servers always pass one
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


#: The card, without interfaces (each server adds its own).
CARD = AgentCard(
    name="echo",
    description="Echoes your text back as an artifact",
    version="1.0.0",
    capabilities=AgentCapabilities(streaming=True),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[AgentSkill(id="echo", name="Echo", description="Repeats text", tags=["echo"])],
)

executor = EchoExecutor()

#: ``executor`` served by a2a-actors (``a2a-actors serve ...sdk_executor_echo:served``).
served = as_agent(executor, card=CARD)


def build_app(base_url: str) -> Starlette:
    """``executor`` as the SDK serves it: JSON-RPC at ``/``, HTTP+JSON at ``/rest``."""
    card = AgentCard()
    card.CopyFrom(CARD)
    card.supported_interfaces.extend(
        [
            AgentInterface(url=f"{base_url}/", protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(
                url=f"{base_url}/rest", protocol_binding="HTTP+JSON", protocol_version="1.0"
            ),
        ]
    )
    handler = DefaultRequestHandler(
        agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url="/"),
        *create_rest_routes(handler, path_prefix="/rest"),
    ]
    return Starlette(routes=routes)


def main(argv: list[str] | None = None) -> int:
    # A sibling import, inside main(): this module is also imported as benchmarks.servers.*.
    from _uvicorn import run_printing_url

    parser = argparse.ArgumentParser(description="the a2a-sdk echo executor on the SDK's server")
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)
    return run_printing_url(build_app, args.host)


if __name__ == "__main__":
    sys.exit(main())
