"""Credentials from the card: API key placement, Bearer, caller hooks, httpx.Auth."""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any

import anyio
import httpx
import pytest

from a2a_actors.client import A2AClient, APIKey
from a2a_actors.client._auth import api_key_for_card, build_auth
from a2a_actors.protocol import codec
from a2a_actors.protocol._card import AgentCard
from a2a_actors.protocol._errors import UnauthenticatedError
from a2a_actors.protocol._models import Task, TaskState

TIMEOUT = 5.0
BASE = "http://agent.test"
TASK = {"id": "t-1", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}


def card_with(schemes: dict[str, Any], requirements: list[dict[str, Any]] | None = None) -> Any:
    card: dict[str, Any] = {
        "name": "secure",
        "description": "needs credentials",
        "version": "1",
        "supportedInterfaces": [
            {"url": f"{BASE}/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
        "securitySchemes": schemes,
    }
    if requirements is not None:
        card["securityRequirements"] = requirements
    return card


class Recorder:
    """A MockTransport handler: serves ``card`` and answers GetTask, recording requests."""

    def __init__(self, card: Any) -> None:
        self.card = card
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if request.url.path.startswith("/.well-known/"):
            return httpx.Response(200, json=self.card)
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": 1, "result": TASK})


async def call_with(card: Any, **credentials: Any) -> list[httpx.Request]:
    """Connect with ``credentials`` and call GetTask once (callers hold the fail_after guard)."""
    recorder = Recorder(card)
    async with httpx.AsyncClient(transport=httpx.MockTransport(recorder)) as http:
        client = await A2AClient.connect(BASE, http_client=http, card_cache=None, **credentials)
        async with client:
            await client.get_task("t-1")
    return recorder.requests


@pytest.mark.parametrize(
    ("location", "check"),
    [
        ("header", lambda r: r.headers["X-Agent-Key"] == "s3cret"),
        ("query", lambda r: r.url.params["agent_key"] == "s3cret"),
        ("cookie", lambda r: r.headers["cookie"] == "agent_key=s3cret"),
    ],
)
async def test_api_key_where_the_card_says(location: str, check: Any) -> None:
    with anyio.fail_after(TIMEOUT):
        name = "X-Agent-Key" if location == "header" else "agent_key"
        card = card_with(
            {"key": {"apiKeySecurityScheme": {"location": location, "name": name}}},
            [{"schemes": {"key": {"list": []}}}],
        )
        card_request, call = await call_with(card, api_key="s3cret")
        assert check(call)
        # The public card is fetched without credentials.
        assert "s3cret" not in str(card_request.url)
        assert all("s3cret" not in v for v in card_request.headers.values())


async def test_api_key_scheme_listed_in_requirements_wins() -> None:
    with anyio.fail_after(TIMEOUT):
        card = card_with(
            {
                "first": {"apiKeySecurityScheme": {"location": "header", "name": "X-First"}},
                "second": {"apiKeySecurityScheme": {"location": "header", "name": "X-Second"}},
            },
            [{"schemes": {"second": {}}}],
        )
        _, call = await call_with(card, api_key="k")
        assert call.headers["X-Second"] == "k"
        assert "X-First" not in call.headers


async def test_api_key_without_scheme_uses_default_header() -> None:
    with anyio.fail_after(TIMEOUT):
        _, call = await call_with(card_with({}), api_key="k")
        assert call.headers["X-API-Key"] == "k"


async def test_bearer_token() -> None:
    with anyio.fail_after(TIMEOUT):
        card = card_with({"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}})
        _, call = await call_with(card, bearer_token="tok")
        assert call.headers["Authorization"] == "Bearer tok"


async def test_sync_and_async_hooks() -> None:
    with anyio.fail_after(TIMEOUT):

        def sync_hook(request: httpx.Request) -> None:
            request.headers["X-Sync"] = "1"

        async def async_hook(request: httpx.Request) -> None:
            await anyio.lowlevel.checkpoint()
            request.headers["Authorization"] = "Bearer fresh-oauth-token"

        _, call = await call_with(card_with({}), auth=sync_hook)
        assert call.headers["X-Sync"] == "1"
        _, call = await call_with(card_with({}), auth=async_hook, bearer_token="stale")
        assert call.headers["Authorization"] == "Bearer fresh-oauth-token"  # the hook runs last


class ChallengeAuth(httpx.Auth):
    """Answers a 401 challenge once, as an OAuth refresh flow would."""

    def __init__(self) -> None:
        self.calls = 0

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response]:
        self.calls += 1
        request.headers["Authorization"] = "Bearer old"
        response = yield request
        if response.status_code == 401:
            request.headers["Authorization"] = "Bearer new"
            yield request


async def test_httpx_auth_with_challenge() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("Authorization", ""))
        if request.headers.get("Authorization") != "Bearer new":
            return httpx.Response(401, text="expired")
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": 1, "result": TASK})

    auth = ChallengeAuth()
    with anyio.fail_after(TIMEOUT):
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            for credentials in ({"auth": auth}, {"auth": auth, "api_key": "k"}):
                client = A2AClient(f"{BASE}/a2a", http_client=http, **credentials)
                async with client:
                    assert (await client.get_task("t-1")).id == "t-1"
    assert seen == ["Bearer old", "Bearer new"] * 2


def test_build_auth_shapes() -> None:
    assert build_auth(None) is None
    plain = httpx.BasicAuth("u", "p")
    assert build_auth(None, auth=plain) is plain
    card = codec.convert(
        card_with({"k": {"apiKeySecurityScheme": {"location": "query", "name": "key"}}}),
        AgentCard,
    )
    assert api_key_for_card(card, "v") == APIKey("v", "query", "key")
    assert api_key_for_card(None, "v") == APIKey("v")


def test_sync_client_with_credentials() -> None:
    auth = build_auth(None, api_key=APIKey("v", "cookie", "sid"), auth=lambda r: None)
    assert auth is not None
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200)

    with httpx.Client(transport=httpx.MockTransport(handler), auth=auth) as http:
        http.get(BASE, cookies=None)
    assert seen[0].headers["cookie"] == "sid=v"

    async def async_hook(request: httpx.Request) -> None:
        return None

    async_auth = build_auth(None, auth=async_hook)
    with (
        httpx.Client(transport=httpx.MockTransport(handler), auth=async_auth) as http,
        pytest.raises(TypeError, match="AsyncClient"),
    ):
        http.get(BASE)


# -- against our server, whose card declares an API key and a Bearer scheme ----------------


@pytest.fixture(scope="module")
def secured() -> Iterator[str]:
    from tests.client.ours import default_config, run_our_server

    config = default_config(api_keys={"s3cret": "alice"}, bearer_tokens={"t0ken": "bob"})
    with run_our_server(config) as url:
        yield url


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
@pytest.mark.parametrize(
    "credentials",
    [{"api_key": "s3cret"}, {"bearer_token": "t0ken"}],
    ids=["api-key", "bearer"],
)
async def test_our_server_accepts_credentials_from_the_card(
    secured: str, binding: str, credentials: dict[str, str]
) -> None:
    with anyio.fail_after(TIMEOUT):
        client = await A2AClient.connect(
            secured,
            bindings=(binding,),
            card_cache=None,
            api_key=credentials.get("api_key"),
            bearer_token=credentials.get("bearer_token"),
        )
        async with client:
            assert client.card is not None
            assert set(client.card.security_schemes) == {"apiKey", "bearer"}
            task = await client.send_message("hello with credentials")
            assert isinstance(task, Task)
            assert task.status.state is TaskState.COMPLETED
            extended = await client.get_extended_card()  # needs credentials
            assert extended.name.endswith("(extended)")


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
@pytest.mark.parametrize(
    "credentials",
    [{}, {"api_key": "wrong"}, {"bearer_token": "wrong"}],
    ids=["none", "key", "token"],
)
async def test_our_server_refuses_missing_or_wrong_credentials(
    secured: str, binding: str, credentials: dict[str, str]
) -> None:
    with anyio.fail_after(TIMEOUT):
        client = await A2AClient.connect(
            secured,
            bindings=(binding,),
            card_cache=None,
            api_key=credentials.get("api_key"),
            bearer_token=credentials.get("bearer_token"),
        )
        async with client:
            with pytest.raises(UnauthenticatedError) as caught:
                await client.send_message("hello")
    assert caught.value.remote
    assert caught.value.reason == "UNAUTHENTICATED"
