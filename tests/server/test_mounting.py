"""Apps mounted in FastAPI (and any ASGI host that runs no lifespan of theirs).

Served for real: FastAPI on uvicorn in a thread, two of our apps mounted side by side, the
official SDK's client speaking JSON-RPC and HTTP+JSON to each through loopback HTTP. Then the
two ways the runtime starts (first use, or ``lifespan(...)`` joined to the host's) and what
each leaves behind at shutdown; the first-use start is also driven without any server (httpx's
ASGI transport runs no lifespan) on both backends, with concurrent first requests.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, cast

import anyio
import httpx
import pytest
from a2a.types.a2a_pb2 import (
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskState,
)
from fastapi import FastAPI
from quart import Quart

from a2a_actors.runtime import TaskContext, agent
from a2a_actors.server import create_app, lifespan, service_of
from tests.interop.sdk_server import Binding, sdk_client
from tests.server.agents import CHUNKS, scenario_agent
from tests.uvicorn_thread import serve_in_thread

if TYPE_CHECKING:
    from starlette.types import ASGIApp

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings(
        r"ignore:Async generator '(a2a\.client|httpx|httpcore)\..*' was garbage collected"
        r":ResourceWarning"
    ),
]

TIMEOUT = 15.0


class Sleeper:
    """An agent that waits until cancelled and says, across threads, that it was."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.cancelled = threading.Event()

    def agent(self) -> object:
        @agent(name="sleeper")
        async def sleeper(ctx: TaskContext) -> None:
            await ctx.start()
            self.started.set()
            try:
                await anyio.sleep_forever()
            finally:
                self.cancelled.set()

        return sleeper


def user_message(text: str) -> SendMessageRequest:
    return SendMessageRequest(
        message=Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text=text)]),
        configuration=SendMessageConfiguration(return_immediately=False),
    )


@contextmanager
def fastapi_host(
    build: Callable[[], tuple[FastAPI, list[Quart]]],
) -> Iterator[tuple[str, list[Quart]]]:
    apps: list[Quart] = []

    def make(_base_url: str) -> FastAPI:
        host, mounted = build()
        apps.extend(mounted)
        return host

    with serve_in_thread(make, name="fastapi-host") as base_url:
        yield base_url, apps


def two_agents(*, joined: bool, sleeper: Sleeper | None = None) -> tuple[FastAPI, list[Quart]]:
    """FastAPI with the scenario agent at /agents/scenario and a second one at /agents/other."""
    scenario = create_app(scenario_agent, backend="asyncio")
    other = create_app(
        sleeper.agent() if sleeper is not None else scenario_agent, backend="asyncio"
    )
    host = FastAPI(lifespan=lifespan(scenario, other) if joined else None)

    @host.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    # Quart types its __call__ more narrowly than Starlette's ASGIApp: the same protocol.
    host.mount("/agents/scenario", cast("ASGIApp", scenario))
    host.mount("/agents/other", cast("ASGIApp", other))
    return host, [scenario, other]


@asynccontextmanager
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=TIMEOUT) as client:
        yield client


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_mounted_apps_serve_every_call_without_their_lifespan(binding: Binding) -> None:
    with fastapi_host(lambda: two_agents(joined=False)) as (base, apps), anyio.fail_after(TIMEOUT):
        async with http() as httpx_client:
            assert (await httpx_client.get(f"{base}/health")).json() == {"status": "ok"}
            for prefix in ("/agents/scenario", "/agents/other"):
                client = await sdk_client(
                    f"{base}{prefix}", binding=binding, httpx_client=httpx_client
                )
                card = (
                    await httpx_client.get(f"{base}{prefix}/.well-known/agent-card.json")
                ).json()
                urls = [i["url"] for i in card["supportedInterfaces"]]
                assert urls
                assert all(url.startswith(f"{base}{prefix}") for url in urls)
                events = [e async for e in client.send_message(user_message("stream it"))]
                texts = [
                    p.text
                    for e in events
                    if e.HasField("artifact_update")
                    for p in e.artifact_update.artifact.parts
                ]
                assert texts == list(CHUNKS)
                assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
                await client.close()
        assert all(service_of(app).serving for app in apps)


async def test_a_lifespan_joined_to_the_host_starts_before_serving_and_cancels_at_shutdown() -> (
    None
):
    sleeper = Sleeper()
    with fastapi_host(lambda: two_agents(joined=True, sleeper=sleeper)) as (base, apps):
        # Up before any request reached them: the host's start-up started both.
        assert all(service_of(app).serving for app in apps)
        with anyio.fail_after(TIMEOUT):
            async with http() as httpx_client:
                client = await sdk_client(
                    f"{base}/agents/other", binding="JSONRPC", httpx_client=httpx_client
                )
                request = user_message("wait")
                request.configuration.return_immediately = True
                async for _ in client.send_message(request):
                    break
                await client.close()
        assert sleeper.started.wait(TIMEOUT)
        assert not sleeper.cancelled.is_set()
    # The host's shutdown stopped both runtimes, the live task CANCELED on the way.
    assert sleeper.cancelled.is_set()
    assert all(service_of(app).stopped.is_set() and not service_of(app).serving for app in apps)


async def test_a_lifespan_refuses_an_app_already_started() -> None:
    app = create_app(scenario_agent)
    with anyio.fail_after(TIMEOUT):
        async with lifespan(app):
            assert service_of(app).serving
            with pytest.raises(RuntimeError, match="already started"):
                async with lifespan(app):
                    pass
        assert not service_of(app).serving


async def test_the_first_requests_start_the_runtime_once() -> None:
    """Without any lifespan (httpx's ASGI transport runs none), concurrent first calls start
    one runtime, on trio and on asyncio alike, and each is answered."""
    app = create_app(scenario_agent)
    service = service_of(app)
    transport = httpx.ASGITransport(app=cast("ASGIApp", app))
    results: list[int] = []
    with anyio.fail_after(TIMEOUT):
        async with httpx.AsyncClient(transport=transport, base_url="http://agents") as client:

            async def send(i: int) -> None:
                body = {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "SendMessage",
                    "params": {
                        "message": {
                            "messageId": uuid.uuid4().hex,
                            "role": "ROLE_USER",
                            "parts": [{"text": f"hello {i}"}],
                        }
                    },
                }
                response = await client.post("/", json=body, headers={"A2A-Version": "1.0"})
                task = response.json()["result"]["task"]
                assert task["status"]["state"] == "TASK_STATE_COMPLETED"
                results.append(i)

            async with anyio.create_task_group() as tg:
                for i in range(5):
                    tg.start_soon(send, i)
        assert sorted(results) == list(range(5))
        assert service.serving
        assert not service.claim()  # claimed by the first request, once
