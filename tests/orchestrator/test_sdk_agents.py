"""Delegating to agents served by the official a2a-sdk: foreign hops are leaves of the tree.

The SDK server (tests/interop/sdk_server.py) runs in its own thread with its own asyncio
loop; our root runs under trio. Its agent is chosen by the text: ``input…`` asks
:data:`MULTI_TURN_QUESTION`, ``sleep…`` waits to be cancelled, anything else echoes.
"""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest

from a2a_actors.client import A2AClient, text_message
from a2a_actors.protocol._models import Task, TaskState
from a2a_actors.protocol._requests import SendMessageConfiguration, SendMessageRequest
from a2a_actors.runtime import Supervisor, TaskContext
from orchestrator import Orchestrator, orchestrated, stream_delegate
from tests.interop.sdk_server import MULTI_TURN_QUESTION, SdkServer, run_sdk_server

from .helpers import TIMEOUT, record_of, send, status_text


@pytest.fixture(scope="module")
def sdk() -> Iterator[SdkServer]:
    with run_sdk_server(push=False, extended_card=False) as server:
        yield server


async def test_an_sdk_agent_answers_asks_and_is_cancelled(sdk: SdkServer) -> None:
    started = anyio.Event()

    async def root(ctx: TaskContext) -> str:
        async with stream_delegate(ctx, sdk.base_url, ctx.text) as events:
            if ctx.text == "sleep":
                started.set()  # the child exists and is recorded
            async for _ in events:
                pass
            return events.result().text

    with anyio.fail_after(TIMEOUT):
        async with (
            Orchestrator() as orch,
            Supervisor(orchestrated(root), delegator=orch) as sup,
        ):
            echoed = await send(sup, "hello sdk")
            assert echoed.status.state is TaskState.COMPLETED
            assert status_text(echoed) == "hello sdk"
            (entry,) = record_of(echoed).children
            assert (entry.agent, entry.url) == (sdk.card.name, sdk.base_url)

            question = await send(sup, "input please")
            assert question.status.state is TaskState.INPUT_REQUIRED
            assert status_text(question) == MULTI_TURN_QUESTION
            answered = await sup.send_message(
                SendMessageRequest(
                    message=text_message("Ada", task_id=question.id, context_id=question.context_id)
                )
            )
            assert isinstance(answered, Task)
            assert answered.status.state is TaskState.COMPLETED
            assert status_text(answered) == "Ada"

            sleeping = await sup.send_message(
                SendMessageRequest(
                    message=text_message("sleep"),
                    configuration=SendMessageConfiguration(return_immediately=True),
                )
            )
            assert isinstance(sleeping, Task)
            await started.wait()
            canceled = await sup.cancel_task(sleeping.id)
            assert canceled.status.state is TaskState.CANCELED
            (child,) = record_of(canceled).children
            assert child.state == "TASK_STATE_CANCELED"
            async with A2AClient(url=sdk.jsonrpc_url) as client:
                remote = await client.get_task(child.task_id)
            assert remote.status.state is TaskState.CANCELED
