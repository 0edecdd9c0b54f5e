"""Discovery: card fetch and fallback path, ETag revalidation, interface choice, tenant."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from a2a_actors.client import (
    A2AClient,
    AgentCardError,
    CardCache,
    discover,
    resolve_interface,
    select_interface,
)
from a2a_actors.client._discovery import CARD_PATH, TASKS_SEND_BINDING, parse_card, parse_version
from a2a_actors.protocol import codec
from a2a_actors.protocol._card import AgentCapabilities, AgentCard, AgentInterface
from tests.client.conftest import ServedScenario

TIMEOUT = 5.0
BASE = "http://agent.test"


def card_json(*interfaces: dict[str, str], name: str = "agent") -> dict[str, Any]:
    return {
        "name": name,
        "description": "a test agent",
        "version": "1.0.0",
        "supportedInterfaces": list(interfaces),
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}],
    }


def iface(url: str, binding: str, version: str, tenant: str = "") -> dict[str, str]:
    out = {"url": url, "protocolBinding": binding, "protocolVersion": version}
    if tenant:
        out["tenant"] = tenant
    return out


def card_of(*interfaces: tuple[str, str]) -> AgentCard:
    return AgentCard(
        name="a",
        description="d",
        version="1",
        supported_interfaces=tuple(
            AgentInterface(url=f"http://h/{i}", protocol_binding=b, protocol_version=v)
            for i, (b, v) in enumerate(interfaces)
        ),
        capabilities=AgentCapabilities(),
        default_input_modes=(),
        default_output_modes=(),
        skills=(),
    )


# -- fetching ------------------------------------------------------------------------------


async def test_etag_revalidation(agent_server: ServedScenario) -> None:
    statuses: list[int] = []
    sent: list[httpx.Headers] = []

    async def record(response: httpx.Response) -> None:
        statuses.append(response.status_code)
        sent.append(response.request.headers)

    cache = CardCache()
    with anyio.fail_after(TIMEOUT):
        async with httpx.AsyncClient(event_hooks={"response": [record]}) as http:
            first = await discover(agent_server.base_url, http=http, cache=cache)
            second = await discover(agent_server.base_url, http=http, cache=cache)
    assert statuses == [200, 304]
    assert "if-none-match" not in sent[0]
    entry = cache.get(agent_server.base_url + CARD_PATH)
    assert entry is not None
    assert entry.etag
    assert sent[1]["if-none-match"] == entry.etag
    assert sent[0]["a2a-version"] == "1.0"
    assert second is first  # the cached card, kept on 304
    assert first.name == agent_server.name


async def test_etag_change_replaces_the_cached_card() -> None:
    versions = iter([("v1", "one"), ("v2", "two")])

    def handler(request: httpx.Request) -> httpx.Response:
        etag, name = next(versions)
        if request.headers.get("if-none-match") == etag:  # pragma: no cover - never matches
            return httpx.Response(304)
        body = card_json(iface(f"{BASE}/a2a", "JSONRPC", "1.0"), name=name)
        return httpx.Response(200, json=body, headers={"etag": f'W/"{etag}"'})

    cache = CardCache()
    with anyio.fail_after(TIMEOUT):
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            assert (await discover(BASE, http=http, cache=cache)).name == "one"
            assert (await discover(BASE, http=http, cache=cache)).name == "two"


async def test_legacy_well_known_path_and_v0_3_card() -> None:
    legacy_card = {
        "name": "old",
        "description": "a 0.3 agent",
        "version": "0.1",
        "url": f"{BASE}/rpc",
        "preferredTransport": "JSONRPC",
        "protocolVersion": "0.3.0",
        "capabilities": {"streaming": False},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}],
    }
    paths: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        paths.append(request.url.path)
        if request.url.path == "/.well-known/agent.json":
            return httpx.Response(200, json=legacy_card)
        return httpx.Response(404, text="Not Found")

    with anyio.fail_after(TIMEOUT):
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            card = await discover(BASE, http=http, cache=None)
    assert paths == ["/.well-known/agent-card.json", "/.well-known/agent.json"]
    assert card.name == "old"
    assert card.supported_interfaces == (
        AgentInterface(url=f"{BASE}/rpc", protocol_binding="JSONRPC", protocol_version="0.3"),
    )


async def test_card_url_fetched_as_is() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/cards/mine.json"
        return httpx.Response(200, json=card_json(iface(f"{BASE}/a2a", "JSONRPC", "1.0")))

    with anyio.fail_after(TIMEOUT):
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            card = await discover(f"{BASE}/cards/mine.json", http=http, cache=None)
    assert card.name == "agent"


@pytest.mark.parametrize(
    ("status", "content", "match"),
    [
        (404, b"Not Found", "no agent card at"),
        (500, b"boom", "HTTP 500 fetching the agent card"),
        (200, b"<html>", "agent card is not JSON"),
        (200, b"[1, 2]", "not a JSON object"),
        (200, b'{"name": "x", "supportedInterfaces": []}', "invalid agent card"),
    ],
)
async def test_card_errors(status: int, content: bytes, match: str) -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(status, content=content))
    with anyio.fail_after(TIMEOUT):
        async with httpx.AsyncClient(transport=transport) as http:
            with pytest.raises(AgentCardError, match=match):
                await discover(BASE, http=http, cache=None)


def test_parse_card_accepts_snake_case() -> None:
    data = card_json(iface(f"{BASE}/a2a", "JSONRPC", "1.0"))
    data["default_input_modes"] = data.pop("defaultInputModes")
    assert parse_card(json.dumps(data).encode()).default_input_modes == ("text/plain",)


# -- choosing ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("interfaces", "bindings", "expected"),
    [
        ((("JSONRPC", "1.0"), ("HTTP+JSON", "1.0")), ("JSONRPC", "HTTP+JSON"), 0),
        ((("HTTP+JSON", "1.0"), ("JSONRPC", "1.0")), ("JSONRPC", "HTTP+JSON"), 1),
        ((("JSONRPC", "1.0"), ("HTTP+JSON", "1.0")), ("HTTP+JSON", "JSONRPC"), 1),
        ((("JSONRPC", "1.2"), ("JSONRPC", "1.0")), ("JSONRPC",), 1),  # 1.0 before >1.0
        ((("JSONRPC", "1.2"), ("JSONRPC", "1.1")), ("JSONRPC",), 1),  # then the lowest
        ((("JSONRPC", "0.3"), ("HTTP+JSON", "1.0")), ("JSONRPC", "HTTP+JSON"), 1),  # 1.x first
        ((("JSONRPC", "0.3"), ("GRPC", "1.0")), ("JSONRPC", "HTTP+JSON"), 0),  # else 0.3
        ((("JSONRPC", "0.2.6"), ("JSONRPC", "0.3.0")), ("JSONRPC",), 1),  # newest 0.x
        ((("HTTP+JSON", "0.3"),), ("JSONRPC", "HTTP+JSON"), None),  # 0.x REST: no
        ((("JSONRPC", "2.0"), ("GRPC", "1.0")), ("JSONRPC", "HTTP+JSON"), None),
        ((("jsonrpc", "1.0"),), ("JSONRPC",), 0),  # binding names are case-insensitive
        ((("JSONRPC", "garbage"),), ("JSONRPC",), None),
    ],
)
def test_select_interface(
    interfaces: tuple[tuple[str, str], ...], bindings: tuple[str, ...], expected: int | None
) -> None:
    card = card_of(*interfaces)
    chosen = select_interface(card, bindings=bindings)
    if expected is None:
        assert chosen is None
    else:
        assert chosen == card.supported_interfaces[expected]


def test_resolve_falls_back_to_tasks_send() -> None:
    card = card_of(("GRPC", "1.0"))
    # JSON bindings asked for (by default a gRPC-only card is spoken to over gRPC)
    fallback = resolve_interface(card, base_url="http://base", bindings=("JSONRPC", "HTTP+JSON"))
    assert fallback.protocol_binding == TASKS_SEND_BINDING
    assert fallback.url == "http://h/0"
    grpc_only = AgentCard(
        name="a",
        description="d",
        version="1",
        supported_interfaces=(
            AgentInterface(url="h:443", protocol_binding="GRPC", protocol_version="1.0"),
        ),
        capabilities=AgentCapabilities(),
        default_input_modes=(),
        default_output_modes=(),
        skills=(),
    )
    json_only = ("JSONRPC", "HTTP+JSON")
    assert resolve_interface(grpc_only, base_url="http://base", bindings=json_only).url == (
        "http://base"
    )


def test_parse_version() -> None:
    assert parse_version("1.0") == (1, 0)
    assert parse_version("1.0.3") == (1, 0)
    assert parse_version("0.3.0") == (0, 3)
    assert parse_version("1") == (1, 0)
    assert parse_version("abc") is None


def test_client_refuses_what_it_cannot_speak() -> None:
    with pytest.raises(ValueError, match=r"cannot speak SOAP 1\.0"):
        A2AClient("http://h", binding="SOAP")
    with pytest.raises(ValueError, match="exactly one"):
        A2AClient()


# -- tenant --------------------------------------------------------------------------------


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_tenant_copied_into_every_request(binding: str) -> None:
    card = card_json(
        iface(f"{BASE}/a2a", "JSONRPC", "1.0", tenant="acme"),
        iface(f"{BASE}/rest", "HTTP+JSON", "1.0", tenant="acme"),
    )
    task = {"id": "t-1", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}
    requests: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.startswith("/.well-known/"):
            return httpx.Response(200, json=card)
        requests.append(request)
        if binding == "JSONRPC":
            method = json.loads(request.content)["method"]
            result: Any = {"task": task} if method == "SendMessage" else task
            return httpx.Response(200, json={"jsonrpc": "2.0", "id": 1, "result": result})
        if request.url.path.endswith("message:send"):
            return httpx.Response(200, json={"task": task})
        return httpx.Response(200, json=task)

    with anyio.fail_after(TIMEOUT):
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            client = await A2AClient.connect(
                BASE, bindings=(binding,), http_client=http, card_cache=None
            )
            assert client.interface.tenant == "acme"
            await client.send_message("hi")
            await client.get_task("t-1", history_length=2)
            await client.cancel_task("t-1")
            await client.aclose()
            assert not http.is_closed  # a borrowed client stays open
    if binding == "JSONRPC":
        params = [json.loads(r.content)["params"] for r in requests]
        assert [p["tenant"] for p in params] == ["acme"] * 3
        assert params[1] == {"id": "t-1", "historyLength": 2, "tenant": "acme"}
    else:
        paths = [(r.method, r.url.path, r.url.query.decode()) for r in requests]
        assert paths == [
            ("POST", "/rest/acme/message:send", ""),
            ("GET", "/rest/acme/tasks/t-1", "historyLength=2"),
            ("POST", "/rest/acme/tasks/t-1:cancel", ""),
        ]
        assert json.loads(requests[0].content)["tenant"] == "acme"


async def test_headers_version_and_extensions() -> None:
    seen: list[httpx.Headers] = []
    task = {"id": "t-1", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers)
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": 1, "result": task})

    with anyio.fail_after(TIMEOUT):
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            exts = ["urn:ext:a", "urn:ext:b"]
            async with A2AClient("http://h/a2a", http_client=http, extensions=exts) as client:
                await client.get_task("t-1")
                await client.get_task("t-1", extensions=["urn:ext:c", "urn:ext:a"])
            async with A2AClient("http://h/a2a", http_client=http) as plain:
                await plain.get_task("t-1")
    assert [h["a2a-version"] for h in seen] == ["1.0", "1.0", "1.0"]
    assert seen[0]["a2a-extensions"] == "urn:ext:a, urn:ext:b"
    assert seen[1]["a2a-extensions"] == "urn:ext:a, urn:ext:b, urn:ext:c"
    assert "a2a-extensions" not in seen[2]
    assert seen[0]["content-type"] == "application/json"


def test_card_round_trip() -> None:
    data = card_json(iface(f"{BASE}/a2a", "JSONRPC", "1.0", tenant="t"))
    card = parse_card(json.dumps(data).encode())
    assert json.loads(codec.encode(card))["supportedInterfaces"][0]["tenant"] == "t"
