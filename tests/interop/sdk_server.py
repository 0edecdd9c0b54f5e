"""Interop harness around the official ``a2a-sdk`` (1.3.x): a real SDK server and SDK clients.

Nothing here copies SDK code: the agents below are *our* executors written against the SDK's
public ``AgentExecutor`` API, and the server is assembled from the SDK's public route factories.

Routing (one server hosts every scenario). The executor is picked from the text of the task's
first user message (the current message when it starts a new task), lower-cased and stripped:

==================  ==========================================================================
text starts with     behaviour
==================  ==========================================================================
``"input"``          :class:`MultiTurnExecutor`: WORKING, then INPUT_REQUIRED with the status
                     message :data:`MULTI_TURN_QUESTION`; the follow-up on the same taskId gives
                     WORKING, an artifact ``"answer"`` holding the follow-up text, COMPLETED.
``"sleep"``          :class:`SleeperExecutor`: WORKING, then waits until cancelled; ``cancel()``
                     moves it to CANCELED. Use ``returnImmediately`` or streaming with it.
``"stream"``         :class:`StreamingExecutor`: WORKING, then :data:`STREAM_CHUNKS` as chunks of
                     one artifact ``"stream"`` (``append`` from the 2nd, ``lastChunk`` on the
                     last), then COMPLETED.
``"message"``        :class:`MessageExecutor`: a single agent Message echoing the text, no task.
anything else        :class:`EchoExecutor`: WORKING, an artifact ``"echo"`` holding the text,
                     COMPLETED.
==================  ==========================================================================

Every task-producing executor first enqueues the Task itself (state SUBMITTED, history = the
user message), as the SDK requires before any status update.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.helpers import new_task_from_user_message, new_text_message
from a2a.server.agent_execution import AgentExecutor
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Part,
    Role,
    Task,
    TaskState,
)
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from starlette.applications import Starlette

from tests.uvicorn_thread import serve_in_thread

if TYPE_CHECKING:
    from a2a.client import Client
    from a2a.server.agent_execution import RequestContext
    from a2a.server.events import EventQueue
    from starlette.routing import BaseRoute

__all__ = [
    "MULTI_TURN_QUESTION",
    "REST_PREFIX",
    "STREAM_CHUNKS",
    "Binding",
    "EchoExecutor",
    "MessageExecutor",
    "MultiTurnExecutor",
    "RoutingExecutor",
    "SdkServer",
    "SleeperExecutor",
    "StreamingExecutor",
    "build_agent_card",
    "run_sdk_server",
    "sdk_client",
]

Binding = Literal["JSONRPC", "HTTP+JSON"]

#: Status-message text of the INPUT_REQUIRED turn of :class:`MultiTurnExecutor`.
MULTI_TURN_QUESTION: Final = "What is your name?"
#: Chunks sent by :class:`StreamingExecutor`; joined they read ``"alpha beta gamma"``.
STREAM_CHUNKS: Final = ("alpha ", "beta ", "gamma")
#: Path prefix of the SDK REST (HTTP+JSON) routes; JSON-RPC lives at ``/``.
REST_PREFIX: Final = "/rest"


# --------------------------------------------------------------------------- executors


async def _ensure_task(context: RequestContext, event_queue: EventQueue) -> Task:
    """The current task, or a new SUBMITTED one enqueued from the user message."""
    if context.current_task is not None:
        return context.current_task
    if context.message is None:  # pragma: no cover - the SDK always passes one on execute
        raise RuntimeError("execute() called without a message")
    task = new_task_from_user_message(context.message)
    await event_queue.enqueue_event(task)
    return task


def _updater(context: RequestContext, event_queue: EventQueue) -> TaskUpdater:
    if context.task_id is None or context.context_id is None:  # pragma: no cover
        raise RuntimeError("request context has no task/context id")
    return TaskUpdater(event_queue, context.task_id, context.context_id)


class _TaskExecutor(AgentExecutor):
    """Shared ``cancel``: publish CANCELED for the task."""

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await _updater(context, event_queue).cancel()


class EchoExecutor(_TaskExecutor):
    """WORKING, then artifact ``"echo"`` with the user's text, then COMPLETED."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = await _ensure_task(context, event_queue)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        await updater.add_artifact(
            [Part(text=context.get_user_input())], artifact_id="echo", name="echo"
        )
        await updater.complete()


class StreamingExecutor(_TaskExecutor):
    """WORKING, the :data:`STREAM_CHUNKS` of artifact ``"stream"``, then COMPLETED."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = await _ensure_task(context, event_queue)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        last = len(STREAM_CHUNKS) - 1
        for i, chunk in enumerate(STREAM_CHUNKS):
            await updater.add_artifact(
                [Part(text=chunk)],
                artifact_id="stream",
                name="stream",
                append=i > 0,
                last_chunk=i == last,
            )
        await updater.complete()


class MultiTurnExecutor(_TaskExecutor):
    """First turn: INPUT_REQUIRED with a question. Follow-up: artifact ``"answer"``, COMPLETED."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        current = context.current_task
        task = await _ensure_task(context, event_queue)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        if current is None or current.status.state != TaskState.TASK_STATE_INPUT_REQUIRED:
            await updater.requires_input(
                updater.new_agent_message([Part(text=MULTI_TURN_QUESTION)])
            )
            return
        await updater.add_artifact(
            [Part(text=context.get_user_input())], artifact_id="answer", name="answer"
        )
        await updater.complete()


class SleeperExecutor(_TaskExecutor):
    """WORKING, then blocks until the SDK cancels it; ``cancel()`` publishes CANCELED."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = await _ensure_task(context, event_queue)
        await TaskUpdater(event_queue, task.id, task.context_id).start_work()
        # Never set: the SDK cancels this coroutine after calling cancel() below.
        await asyncio.Event().wait()


class MessageExecutor(AgentExecutor):
    """A single agent Message echoing the user's text; no task is created."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        await event_queue.enqueue_event(
            new_text_message(
                context.get_user_input(), context_id=context.context_id, role=Role.ROLE_AGENT
            )
        )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


def _first_user_text(context: RequestContext) -> str:
    task = context.current_task
    if task is not None:
        for message in task.history:
            if message.role == Role.ROLE_USER:
                return "\n".join(p.text for p in message.parts if p.HasField("text"))
    return context.get_user_input()


class RoutingExecutor(AgentExecutor):
    """Dispatches to the scenario executors by the task's first user text (see module doc)."""

    def __init__(self) -> None:
        self._echo = EchoExecutor()
        self._routes: tuple[tuple[str, AgentExecutor], ...] = (
            ("input", MultiTurnExecutor()),
            ("sleep", SleeperExecutor()),
            ("stream", StreamingExecutor()),
            ("message", MessageExecutor()),
        )

    def select(self, context: RequestContext) -> AgentExecutor:
        key = _first_user_text(context).strip().lower()
        for prefix, executor in self._routes:
            if key.startswith(prefix):
                return executor
        return self._echo

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        await self.select(context).execute(context, event_queue)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await self.select(context).cancel(context, event_queue)


# --------------------------------------------------------------------------- card and app


def build_agent_card(
    base_url: str, *, push: bool = True, extended_card: bool = True, extended: bool = False
) -> AgentCard:
    """The harness card: JSONRPC at ``base_url/`` and HTTP+JSON at ``base_url/rest``, v1.0.

    With ``extended=True`` this is the extended card: same interfaces, another name and an
    extra ``"secret"`` skill.
    """
    skills = [
        AgentSkill(
            id="echo",
            name="Echo",
            description="Echoes text; see tests/interop/sdk_server.py for scenario prefixes",
            tags=["echo", "test"],
            examples=["hello", "stream", "input", "sleep", "message hi"],
        )
    ]
    if extended:
        skills.append(
            AgentSkill(
                id="secret",
                name="Secret",
                description="Only listed on the extended card",
                tags=["extended"],
            )
        )
    return AgentCard(
        name="sdk-interop-agent (extended)" if extended else "sdk-interop-agent",
        description="a2a-sdk reference server used by the a2a-actors interop tests",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=f"{base_url}/", protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(
                url=f"{base_url}{REST_PREFIX}", protocol_binding="HTTP+JSON", protocol_version="1.0"
            ),
        ],
        capabilities=AgentCapabilities(
            streaming=True, push_notifications=push, extended_agent_card=extended_card
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=skills,
    )


def _build_app(base_url: str, *, push: bool, extended_card: bool) -> tuple[Starlette, AgentCard]:
    card = build_agent_card(base_url, push=push, extended_card=extended_card)
    push_store = InMemoryPushNotificationConfigStore() if push else None
    # Created here, used and closed on the server's own loop (lifespan below).
    push_http = httpx.AsyncClient(timeout=5.0) if push_store is not None else None
    handler = DefaultRequestHandler(
        agent_executor=RoutingExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=push_store,
        push_sender=(
            BasePushNotificationSender(push_http, push_store)
            if push_http is not None and push_store is not None
            else None
        ),
        extended_agent_card=(
            build_agent_card(base_url, push=push, extended_card=True, extended=True)
            if extended_card
            else None
        ),
    )

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await handler.aclose()
            if push_http is not None:
                await push_http.aclose()

    routes: list[BaseRoute] = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url="/"),
        *create_rest_routes(handler, path_prefix=REST_PREFIX),
    ]
    return Starlette(routes=routes, lifespan=lifespan), card


# --------------------------------------------------------------------------- threaded server


@dataclass(frozen=True, slots=True)
class SdkServer:
    """A running SDK server (see :func:`run_sdk_server`)."""

    port: int
    base_url: str  #: ``http://127.0.0.1:PORT`` (no trailing slash)
    jsonrpc_url: str  #: ``http://127.0.0.1:PORT/`` - POST JSON-RPC here
    rest_url: str  #: ``http://127.0.0.1:PORT/rest`` - HTTP+JSON routes hang below it
    card_url: str  #: ``http://127.0.0.1:PORT/.well-known/agent-card.json``
    card: AgentCard  #: the public card the server serves


@contextlib.contextmanager
def run_sdk_server(*, push: bool = True, extended_card: bool = True) -> Iterator[SdkServer]:
    """Serve the official SDK app on 127.0.0.1 (ephemeral port) from a background thread
    (:func:`tests.uvicorn_thread.serve_in_thread`)."""
    cards: list[AgentCard] = []

    def build(base_url: str) -> Starlette:
        app, card = _build_app(base_url, push=push, extended_card=extended_card)
        cards.append(card)
        return app

    with serve_in_thread(build, name="sdk-server") as base_url:
        yield SdkServer(
            port=int(base_url.rsplit(":", 1)[1]),
            base_url=base_url,
            jsonrpc_url=f"{base_url}/",
            rest_url=f"{base_url}{REST_PREFIX}",
            card_url=f"{base_url}{AGENT_CARD_WELL_KNOWN_PATH}",
            card=cards[0],
        )


# --------------------------------------------------------------------------- SDK client


async def sdk_client(
    card_or_url: AgentCard | str,
    *,
    binding: Binding,
    httpx_client: httpx.AsyncClient,
    streaming: bool = True,
) -> Client:
    """An official SDK ``Client`` speaking ``binding`` to the agent at ``card_or_url``.

    ``card_or_url`` is an ``AgentCard`` or the agent's base URL (the card is then fetched from
    ``<url>/.well-known/agent-card.json`` with ``httpx_client``). The interface with that
    binding (and protocolVersion 1.0) is picked from the card. ``httpx_client`` stays owned by
    the caller: ``await client.close()`` does not close it. The factory adds the
    ``A2A-Version: 1.0`` default header to it.

    ``streaming=False`` makes ``client.send_message`` use the unary SendMessage (blocking
    unless ``configuration.return_immediately``); with the default ``True`` it uses
    SendStreamingMessage whenever the card says ``capabilities.streaming``.
    """
    factory = ClientFactory(
        ClientConfig(
            httpx_client=httpx_client,
            streaming=streaming,
            supported_protocol_bindings=[binding],
        )
    )
    if isinstance(card_or_url, str):
        return await factory.create_from_url(card_or_url)
    return factory.create(card_or_url)
