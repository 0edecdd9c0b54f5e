"""a2a-sdk ``AgentExecutor``\\ s served by a2a-actors (``a2a_actors.frameworks.a2a_sdk``).

Differential part: the executors of ``tests/interop/sdk_server.py`` (written against the
SDK's public API) are served once by the SDK's own server (``run_sdk_server``) and once by
a2a-actors (``as_agent`` over the same executor); the official SDK client must see the same
states, artifact chunks (and their ``append``/``lastChunk`` flags), questions, messages and
errors from both, ids and timestamps aside. The one intended difference, an executor that
raises, is checked as such. The rest checks what only a2a-actors can show: the caller's
identity in ``call_context``, cancel (``execute()`` interrupted, ``cancel()`` called),
protocol violations refused, a question waiting across a restart, the card.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from a2a.client import A2ACardResolver, Client
from a2a.helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    Artifact,
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a.utils.errors import (
    InternalError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from starlette.applications import Starlette

from a2a_actors.frameworks.a2a_sdk import as_agent
from a2a_actors.server import ServerConfig
from a2a_actors.stores._sqlite import SQLiteTaskStore
from tests.frameworks.harness import SDK_WARNINGS
from tests.interop.sdk_server import (
    MULTI_TURN_QUESTION,
    MultiTurnExecutor,
    RoutingExecutor,
    SdkServer,
    run_sdk_server,
    sdk_client,
)
from tests.server.helpers import served
from tests.uvicorn_thread import serve_in_thread

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings(SDK_WARNINGS)]

TIMEOUT = 20.0
S = TaskState


# --------------------------------------------------------------------------- both servers


class Side:
    """The official SDK client of one server (streaming, and a blocking one)."""

    def __init__(self, streaming: Client, blocking: Client) -> None:
        self.streaming = streaming
        self.blocking = blocking

    @staticmethod
    def request(text: str, *, task_id: str = "", blocking: bool = True) -> SendMessageRequest:
        message = Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text=text)])
        message.task_id = task_id
        return SendMessageRequest(
            message=message,
            configuration=SendMessageConfiguration(return_immediately=not blocking),
        )

    async def stream(self, text: str, *, task_id: str = "") -> list[StreamResponse]:
        request = self.request(text, task_id=task_id)
        return [event async for event in self.streaming.send_message(request)]

    async def send(self, text: str, *, task_id: str = "", blocking: bool = True) -> StreamResponse:
        request = self.request(text, task_id=task_id, blocking=blocking)
        events = [event async for event in self.blocking.send_message(request)]
        assert len(events) == 1, events
        return events[0]

    async def task(self, text: str, **options: Any) -> Task:
        answer = await self.send(text, **options)
        assert answer.HasField("task"), answer
        return answer.task

    async def get(self, task_id: str) -> Task:
        task: Task = await self.streaming.get_task(GetTaskRequest(id=task_id))
        return task

    async def cancel(self, task_id: str) -> Task:
        task: Task = await self.streaming.cancel_task(CancelTaskRequest(id=task_id))
        return task


@asynccontextmanager
async def side(url: str, headers: dict[str, str] | None = None) -> AsyncIterator[Side]:
    async with httpx.AsyncClient(timeout=TIMEOUT, headers=headers) as http:
        streaming = await sdk_client(url, binding="JSONRPC", httpx_client=http)
        blocking = await sdk_client(url, binding="JSONRPC", httpx_client=http, streaming=False)
        try:
            yield Side(streaming, blocking)
        finally:
            await streaming.close()
            await blocking.close()


@asynccontextmanager
async def ours(
    executor: AgentExecutor, config: ServerConfig | None = None, **options: Any
) -> AsyncIterator[Side]:
    async with served(as_agent(executor, **options), config) as url, side(url) as client:
        yield client


@pytest.fixture(scope="module")
def sdk() -> Iterator[SdkServer]:
    with run_sdk_server(push=False, extended_card=False) as server:
        yield server


@asynccontextmanager
async def both(sdk: SdkServer) -> AsyncIterator[tuple[Side, Side]]:
    """The SDK's server and ours, with the same executor (``RoutingExecutor``)."""
    async with side(sdk.base_url) as theirs, ours(RoutingExecutor()) as mine:
        yield theirs, mine


def text_of(message: Message) -> str:
    return "".join(p.text for p in message.parts if p.HasField("text"))


def observe(events: Sequence[StreamResponse]) -> list[tuple[Any, ...]]:
    """What a client sees of a stream, ids and timestamps aside."""
    seen: list[tuple[Any, ...]] = []
    for event in events:
        kind = event.WhichOneof("payload")
        if kind == "task":
            status = event.task.status
            seen.append(("state", status.state, text_of(status.message)))
        elif kind == "status_update":
            status = event.status_update.status
            seen.append(("state", status.state, text_of(status.message)))
        elif kind == "artifact_update":
            update = event.artifact_update
            artifact = update.artifact
            chunk = (artifact.artifact_id, artifact.name, text_of(Message(parts=artifact.parts)))
            seen.append(("artifact", *chunk, update.append, update.last_chunk))
        else:
            seen.append(("message", event.message.role, text_of(event.message)))
    return seen


def final(task: Task) -> tuple[Any, ...]:
    """A task as a client reads it, ids and timestamps aside.

    The history leaves out the current status message: a2a-actors records a status message
    in the history at once, the SDK when the next status replaces it.
    """
    history = list(task.history)
    if history and history[-1].message_id == task.status.message.message_id:
        history.pop()
    return (
        task.status.state,
        text_of(task.status.message),
        [(a.artifact_id, a.name, text_of(Message(parts=a.parts))) for a in task.artifacts],
        [(m.role, text_of(m)) for m in history],
    )


# --------------------------------------------------------------------------- differential


@pytest.mark.parametrize("text", ["hello", "stream it", "message hi"])
async def test_the_same_stream_from_both(sdk: SdkServer, text: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with both(sdk) as (theirs, mine):
            expected, got = observe(await theirs.stream(text)), observe(await mine.stream(text))
    assert got == expected
    if text.startswith("stream"):  # the chunks of one artifact, flags included
        assert [c[4:] for c in got if c[0] == "artifact"] == [
            (False, False),
            (True, False),
            (True, True),
        ]


#: What each blocking answer holds: the task's artifacts, or the message's text.
ANSWERS: dict[str, Any] = {
    "hello": [("echo", "echo", "hello")],
    "stream it": [("stream", "stream", "alpha beta gamma")],
    "message hi": [("message", Role.ROLE_AGENT, "message hi")],
}


@pytest.mark.parametrize("text", list(ANSWERS))
async def test_the_same_blocking_answer_from_both(sdk: SdkServer, text: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with both(sdk) as (theirs, mine):
            expected, got = await theirs.send(text), await mine.send(text)
    assert got.WhichOneof("payload") == expected.WhichOneof("payload")
    if expected.HasField("task"):
        assert final(got.task) == final(expected.task)
        assert final(got.task)[:3] == (S.TASK_STATE_COMPLETED, "", ANSWERS[text])
    else:
        assert observe([got]) == observe([expected]) == ANSWERS[text]


async def test_the_same_question_and_follow_up_from_both(sdk: SdkServer) -> None:
    with anyio.fail_after(TIMEOUT):
        async with both(sdk) as (theirs, mine):
            turns: list[tuple[Any, ...]] = []
            for client in (theirs, mine):
                first = await client.stream("input please")
                task_id = first[0].task.id
                second = await client.stream("Ada", task_id=task_id)
                asked = await client.task("input again")
                answered = await client.task("Grace", task_id=asked.id)
                turns.append((observe(first), observe(second), final(asked), final(answered)))
    assert turns[1] == turns[0]
    first, second, _, answered = turns[1]
    assert first[-1] == ("state", S.TASK_STATE_INPUT_REQUIRED, MULTI_TURN_QUESTION)
    assert second[-2:] == [
        ("artifact", "answer", "answer", "Ada", False, False),
        ("state", S.TASK_STATE_COMPLETED, ""),
    ]
    assert answered[3] == [
        (Role.ROLE_USER, "input again"),
        (Role.ROLE_AGENT, MULTI_TURN_QUESTION),
        (Role.ROLE_USER, "Grace"),
    ]


async def test_the_same_cancel_from_both(sdk: SdkServer) -> None:
    with anyio.fail_after(TIMEOUT):
        async with both(sdk) as (theirs, mine):
            seen = []
            for client in (theirs, mine):
                running = await client.task("sleep", blocking=False)
                canceled = await client.cancel(running.id)
                waiting = await client.task("input")
                dropped = await client.cancel(waiting.id)
                seen.append([final(t) for t in (canceled, await client.get(running.id), dropped)])
    assert seen[1] == seen[0]
    assert {t[0] for t in seen[1]} == {S.TASK_STATE_CANCELED}


async def test_the_same_errors_from_both(sdk: SdkServer) -> None:
    async def error_of(call: Any) -> type[Exception] | None:
        try:
            await call
        except Exception as exc:
            return type(exc)
        return None

    with anyio.fail_after(TIMEOUT):
        async with both(sdk) as (theirs, mine):
            seen = []
            for client in (theirs, mine):
                done = await client.task("hello")
                seen.append(
                    [
                        await error_of(client.get("no-such-task")),
                        await error_of(client.cancel(done.id)),
                        await error_of(client.send("more", task_id=done.id)),
                        await error_of(client.send("more", task_id="no-such-task")),
                    ]
                )
    assert (
        seen[1]
        == seen[0]
        == [
            TaskNotFoundError,
            TaskNotCancelableError,
            UnsupportedOperationError,
            TaskNotFoundError,
        ]
    )


class RaisingExecutor(AgentExecutor):
    """WORKING, then an exception."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = await first_task(context, event_queue)
        await TaskUpdater(event_queue, task.id, task.context_id).start_work()
        raise RuntimeError("the model is down")

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


def sdk_app(executor: AgentExecutor) -> Any:
    """``executor`` on the SDK's own server (its public route factories, JSON-RPC only)."""

    def build(base_url: str) -> Starlette:
        interface = AgentInterface(
            url=f"{base_url}/", protocol_binding="JSONRPC", protocol_version="1.0"
        )
        card = AgentCard(
            name="sdk",
            description="the SDK's server",
            version="1.0.0",
            supported_interfaces=[interface],
            capabilities=AgentCapabilities(streaming=True),
            default_input_modes=["text/plain"],
            default_output_modes=["text/plain"],
        )
        handler = DefaultRequestHandler(
            agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card
        )
        routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, rpc_url="/")]
        return Starlette(routes=routes)

    return serve_in_thread(build, name="sdk-app")


async def test_a_raising_executor_fails_its_task_where_the_sdk_answers_an_error() -> None:
    # The intended difference: the SDK answers -32603 (a blocking send, and the stream
    # after its first events); a2a-actors fails the task, with a readable status message.
    with anyio.fail_after(TIMEOUT):
        with sdk_app(RaisingExecutor()) as url:
            async with side(url) as theirs:
                with pytest.raises(InternalError, match="the model is down"):
                    await theirs.send("hi")
        async with ours(RaisingExecutor()) as mine:
            failed = await mine.task("hi")
            events = await mine.stream("hi")
    said = "a2a-sdk agent failed: RuntimeError: the model is down"
    assert final(failed)[:2] == (S.TASK_STATE_FAILED, said)
    assert observe(events)[-1] == ("state", S.TASK_STATE_FAILED, said)


class WholeTaskExecutor(AgentExecutor):
    """One event: the finished Task, its artifact included."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        task = new_task_from_user_message(context.message)
        task.status.state = S.TASK_STATE_COMPLETED
        task.artifacts.append(Artifact(artifact_id="all", name="all", parts=[Part(text="done")]))
        await event_queue.enqueue_event(task)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


async def test_a_finished_task_enqueued_at_once_is_the_same_task() -> None:
    with anyio.fail_after(TIMEOUT):
        with sdk_app(WholeTaskExecutor()) as url:
            async with side(url) as theirs:
                expected = await theirs.task("go")
        async with ours(WholeTaskExecutor()) as mine:
            got = await mine.task("go")
    assert final(got) == final(expected)
    assert final(got)[:3] == (S.TASK_STATE_COMPLETED, "", [("all", "all", "done")])


# --------------------------------------------------------------------------- a2a-actors only


async def first_task(context: RequestContext, event_queue: EventQueue) -> Task:
    """The current task, or a new one enqueued first (as the SDK requires)."""
    if context.current_task is not None:
        return context.current_task
    assert context.message is not None
    task = new_task_from_user_message(context.message)
    await event_queue.enqueue_event(task)
    return task


class WhoExecutor(AgentExecutor):
    """Answers with who the request's call context says the caller is."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = await first_task(context, event_queue)
        user = context.call_context.user
        said = f"{user.user_name}|{user.is_authenticated}|{sorted(context.requested_extensions)}"
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.add_artifact([Part(text=said)], name="who")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


async def test_the_callers_identity_reaches_the_call_context() -> None:
    config = ServerConfig(api_keys={"alice-key": "alice"})
    with anyio.fail_after(TIMEOUT):
        async with (
            served(as_agent(WhoExecutor()), config) as url,
            side(url, {"X-API-Key": "alice-key"}) as alice,
        ):
            known = await alice.task("who am I?")
        async with ours(WhoExecutor()) as anybody:
            anonymous = await anybody.task("who am I?")
    assert final(known)[2] == [(known.artifacts[0].artifact_id, "who", "alice|True|[]")]
    assert final(anonymous)[2][0][2] == "|False|[]"


class LongRunner(AgentExecutor):
    """Works until cancelled; records what happens, in order."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.log: list[str] = []

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = await first_task(context, event_queue)
        await TaskUpdater(event_queue, task.id, task.context_id).start_work()
        self.started.set()
        try:
            await asyncio.Event().wait()  # never set: only a cancel ends this
        finally:
            self.log.append("execute: finally")

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        assert task is not None
        assert context.message is None
        self.log.append(f"cancel: {TaskState.Name(task.status.state)}")
        assert context.task_id is not None
        assert context.context_id is not None
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


async def test_cancel_interrupts_execute_and_calls_cancel() -> None:
    runner = LongRunner()
    with anyio.fail_after(TIMEOUT):
        async with ours(runner) as client:
            running = await client.task("work", blocking=False)
            await runner.started.wait()
            canceled = await client.cancel(running.id)
            stored = await client.get(running.id)
    assert runner.log == ["execute: finally", "cancel: TASK_STATE_WORKING"]
    assert canceled.status.state == stored.status.state == S.TASK_STATE_CANCELED


class AskingRecorder(MultiTurnExecutor):
    """The SDK harness's multi-turn executor, recording its cancel() and current tasks."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        current = context.current_task
        self.seen.append("new" if current is None else TaskState.Name(current.status.state))
        await super().execute(context, event_queue)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        self.seen.append("cancel")
        await super().cancel(context, event_queue)


async def test_a_cancel_while_waiting_for_input_calls_cancel() -> None:
    executor = AskingRecorder()
    with anyio.fail_after(TIMEOUT):
        async with ours(executor) as client:
            waiting = await client.task("input")
            canceled = await client.cancel(waiting.id)
    assert waiting.status.state == S.TASK_STATE_INPUT_REQUIRED
    assert canceled.status.state == S.TASK_STATE_CANCELED
    assert executor.seen == ["new", "cancel"]


async def test_a_question_waiting_across_a_restart_is_answered_after_it(tmp_path: Path) -> None:
    executor = AskingRecorder()
    path = tmp_path / "tasks.db"

    async def call(text: str, task_id: str = "") -> Task:
        async with SQLiteTaskStore.open(path) as store:
            config = ServerConfig(supervisor_options={"store": store, "keep_interrupted": True})
            async with ours(executor, config) as client:
                return await client.task(text, task_id=task_id)

    with anyio.fail_after(TIMEOUT):
        asked = await call("input")
        answered = await call("Ada", asked.id)
    assert asked.status.state == S.TASK_STATE_INPUT_REQUIRED
    assert final(answered)[:3] == (S.TASK_STATE_COMPLETED, "", [("answer", "answer", "Ada")])
    # The executor was run again with the task still waiting, as the SDK shows it; the
    # first server's shutdown did not call cancel() (the task stayed waiting, stored).
    assert executor.seen == ["new", "TASK_STATE_INPUT_REQUIRED"]


class AuthExecutor(AgentExecutor):
    """AUTH_REQUIRED first; the follow-up's text is the credential."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        current = context.current_task
        task = await first_task(context, event_queue)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        if current is None:
            await updater.requires_auth(updater.new_agent_message([Part(text="Sign in.")]))
            return
        assert current.status.state == S.TASK_STATE_AUTH_REQUIRED
        assert text_of(current.status.message) == "Sign in."
        await updater.complete(updater.new_agent_message([Part(text="in")]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


async def test_auth_required_then_the_follow_up_runs_execute_again() -> None:
    with anyio.fail_after(TIMEOUT):
        async with ours(AuthExecutor()) as client:
            asked = await client.task("open")
            done = await client.task("token", task_id=asked.id)
    assert final(asked)[:2] == (S.TASK_STATE_AUTH_REQUIRED, "Sign in.")
    assert final(done)[:2] == (S.TASK_STATE_COMPLETED, "in")


class Gated(AgentExecutor):
    """Two chunks of one artifact with a gate between them (set by the test)."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = await first_task(context, event_queue)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.add_artifact([Part(text="one ")], artifact_id="a", name="a")
        await self.gate.wait()
        await updater.add_artifact([Part(text="two")], artifact_id="a", append=True)
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


async def test_each_event_is_published_when_it_is_enqueued() -> None:
    executor = Gated()
    chunks = []
    with anyio.fail_after(TIMEOUT):
        async with ours(executor) as client:
            async for event in client.streaming.send_message(Side.request("go")):
                if event.HasField("artifact_update"):
                    chunks.append(text_of(Message(parts=event.artifact_update.artifact.parts)))
                    executor.gate.set()  # the first chunk arrived before the second exists
    assert chunks == ["one ", "two"]


class Unruly(AgentExecutor):
    """Completes, then tries what the protocol forbids; records what each attempt raised."""

    def __init__(self) -> None:
        self.refused: list[str] = []

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = await first_task(context, event_queue)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.add_artifact([Part(text="kept")], artifact_id="kept", name="kept")
        await updater.complete()
        working = TaskStatus(state=S.TASK_STATE_WORKING)
        more = Artifact(artifact_id="late", parts=[Part(text="late")])
        for event in (
            TaskStatusUpdateEvent(task_id=task.id, context_id=task.context_id, status=working),
            TaskArtifactUpdateEvent(task_id=task.id, context_id=task.context_id, artifact=more),
            TaskStatusUpdateEvent(task_id="another", context_id=task.context_id, status=working),
        ):
            try:
                await event_queue.enqueue_event(event)
            except Exception as exc:
                self.refused.append(type(exc).__name__)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


async def test_events_the_protocol_forbids_are_refused_and_the_task_is_kept() -> None:
    executor = Unruly()
    with anyio.fail_after(TIMEOUT):
        async with ours(executor) as client:
            done = await client.task("go")
            stored = await client.get(done.id)
    assert executor.refused == [
        "IllegalTransitionError",
        "IllegalTransitionError",
        "InvalidAgentResponseError",
    ]
    assert final(stored) == final(done)
    assert final(stored)[:3] == (S.TASK_STATE_COMPLETED, "", [("kept", "kept", "kept")])


class Stray(AgentExecutor):
    """Enqueues an event of another task, and lets the refusal propagate."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = await first_task(context, event_queue)
        await TaskUpdater(event_queue, "another-task", task.context_id).start_work()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


async def test_an_event_of_another_task_fails_the_task() -> None:
    with anyio.fail_after(TIMEOUT):
        async with ours(Stray()) as client:
            failed = await client.task("go")
    state, said = final(failed)[:2]
    assert state == S.TASK_STATE_FAILED
    assert said.startswith("a2a-sdk agent failed: InvalidAgentResponseError: ")
    assert "'another-task'" in said


class Quitter(AgentExecutor):
    """Cancels its own task (TaskUpdater.cancel() inside execute())."""

    def __init__(self) -> None:
        self.log: list[str] = []

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = await first_task(context, event_queue)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        try:
            await updater.start_work()
            await updater.cancel()
            self.log.append("after cancel")
        finally:
            self.log.append("execute: finally")

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        self.log.append("cancel")


class Idle(AgentExecutor):
    """Works, then returns without a final state."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = await first_task(context, event_queue)
        await TaskUpdater(event_queue, task.id, task.context_id).start_work()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


async def test_the_executors_own_cancel_and_a_return_without_a_final_state() -> None:
    quitter = Quitter()
    with anyio.fail_after(TIMEOUT):
        async with ours(quitter) as client:
            canceled = await client.task("go")
        async with ours(Idle()) as client:
            completed = await client.task("go")
    assert canceled.status.state == S.TASK_STATE_CANCELED
    assert quitter.log == ["execute: finally"]  # interrupted there; cancel() not called
    assert completed.status.state == S.TASK_STATE_COMPLETED


async def test_the_card_comes_from_the_sdk_card_and_the_interfaces_from_the_server() -> None:
    card = AgentCard(
        name="echoer",
        description="Echoes.",
        version="2.1.0",
        supported_interfaces=[AgentInterface(url="http://elsewhere/", protocol_binding="JSONRPC")],
        capabilities=AgentCapabilities(
            streaming=False, extensions=[AgentExtension(uri="urn:x:ext", description="x")]
        ),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes text", tags=["echo"])],
    )
    with anyio.fail_after(TIMEOUT):
        async with (
            served(as_agent(WhoExecutor(), card=card)) as url,
            httpx.AsyncClient(timeout=TIMEOUT) as http,
        ):
            got = await A2ACardResolver(http, url).get_agent_card()
        default = as_agent(WhoExecutor())
    assert (got.name, got.description, got.version) == ("echoer", "Echoes.", "2.1.0")
    assert [s.id for s in got.skills] == ["echo"]
    assert [e.uri for e in got.capabilities.extensions] == ["urn:x:ext"]
    assert list(got.default_input_modes) == ["text/plain", "application/json"]
    assert got.capabilities.streaming  # the server's, not the card's
    assert {i.url for i in got.supported_interfaces} >= {f"{url}/"}
    assert (default.name, default.description) == ("WhoExecutor", WhoExecutor.__doc__)
    with pytest.raises(TypeError, match="AgentExecutor"):
        as_agent(object())  # type: ignore[arg-type]
