"""JWTs on every binding: one subject's tasks are invisible to another over gRPC as over
JSON-RPC and REST, with our client sending fresh tokens from a callable, and a key rotated
into a JWKS URL is fetched for a gRPC call too (asyncio: the gRPC server runs on it)."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest

from a2a_actors.client import A2AClient
from a2a_actors.protocol._errors import TaskNotFoundError, UnauthenticatedError
from a2a_actors.protocol._models import Task, TaskState
from a2a_actors.server import ServerConfig
from a2a_actors.server._config.trust import JWTOptions

from ..grpc.server_helpers import TIMEOUT, grpc_served
from .keys import AUDIENCE, ISSUER, SigningKey, json_server, jwks

OLD = SigningKey.make("old", "ES256")
NEW = SigningKey.make("new", "EdDSA")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _tokens(key: list[SigningKey], sub: str) -> Callable[[], str]:
    return lambda: key[0].token(sub)


async def _drain(client: A2AClient, task_id: str) -> None:
    async with client.subscribe(task_id) as events:
        async for _ in events:
            pass


@pytest.mark.anyio
async def test_subjects_are_isolated_over_grpc_and_rotated_keys_are_fetched() -> None:
    signing = [OLD]
    with anyio.fail_after(TIMEOUT * 2):
        async with json_server(jwks(OLD)) as idp:
            options = JWTOptions(jwks=idp.url, issuer=ISSUER, audience=AUDIENCE, refresh_interval=0)
            async with grpc_served(config=ServerConfig(jwt=options)) as served:
                alice = A2AClient(
                    served.address, binding="GRPC", bearer_token=_tokens(signing, "alice")
                )
                bob = A2AClient(
                    served.address, binding="GRPC", bearer_token=_tokens(signing, "bob")
                )
                nobody = A2AClient(served.address, binding="GRPC")
                async with alice, bob, nobody:
                    task = await alice.send_message("input")
                    assert isinstance(task, Task)
                    assert task.status.state == TaskState.INPUT_REQUIRED
                    with pytest.raises(TaskNotFoundError):
                        await bob.get_task(task.id)
                    with pytest.raises(TaskNotFoundError):
                        await bob.cancel_task(task.id)
                    with pytest.raises(TaskNotFoundError):
                        await bob.send_message("hijack", task_id=task.id)
                    with pytest.raises(TaskNotFoundError):
                        await _drain(bob, task.id)
                    assert (await bob.list_tasks()).tasks == ()
                    with pytest.raises(UnauthenticatedError):
                        await nobody.list_tasks()

                    idp.document = jwks(OLD, NEW)  # the provider rotates a key in
                    signing[0] = NEW
                    assert (await alice.get_task(task.id)).id == task.id
                    assert idp.fetches == 2
                    done = await alice.send_message("Ada", task_id=task.id)
                    assert isinstance(done, Task)
                    assert done.status.state == TaskState.COMPLETED
