"""A framework agent's conversation in a cluster: the next task of a context continues it on
another node (the conversation lives in the shared task store)."""

from __future__ import annotations

import functools
from pathlib import Path

import anyio
import pytest
from pydantic_ai import Agent as PydanticAgent

from a2a_actors.client import A2AClient
from a2a_actors.frameworks.pydantic_ai import as_agent
from a2a_actors.protocol import Task, TaskState
from a2a_actors.server import ClusterOptions, ServerConfig, serve
from tests.frameworks.pydantic_models import Script, say
from tests.frameworks.test_pydantic_ai import user_texts

from .helpers import nats_server

pytestmark = pytest.mark.anyio


async def test_a_conversation_continues_on_another_node(tmp_path: Path) -> None:
    script = Script(say("Noted: tea."), say("Tea."))
    agent = as_agent(PydanticAgent(script.model()), name="memo")
    with anyio.fail_after(30):
        async with nats_server(tmp_path) as server, anyio.create_task_group() as tg:

            def config(node_id: str) -> ServerConfig:
                return ServerConfig(cluster=ClusterOptions(urls=(server.url,), node_id=node_id))

            url_a = await tg.start(functools.partial(serve, agent, config=config("a")))
            url_b = await tg.start(functools.partial(serve, agent, config=config("b")))
            async with await A2AClient.connect(url_a, card_cache=None) as a:
                first = await a.send_message("I drink tea.")
            assert isinstance(first, Task)
            async with await A2AClient.connect(url_b, card_cache=None) as b:
                second = await b.send_message("What do I drink?", context_id=first.context_id)
            assert isinstance(second, Task)
            assert second.status.state is TaskState.COMPLETED
            assert user_texts(script.seen[1]) == ["I drink tea.", "What do I drink?"]
            tg.cancel_scope.cancel()
