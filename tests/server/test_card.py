"""The served AgentCard: contents, caching validators, URLs, SKILL.md skills."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from a2a_actors.protocol._card import AgentProvider
from a2a_actors.server import ExtendedCard, ServerConfig

from .agents import SKILL
from .helpers import TIMEOUT, running_app

pytestmark = pytest.mark.anyio

CARD = "/.well-known/agent-card.json"
PURE = ServerConfig(legacy_v0_3=False)


async def test_card_contents_follow_the_configuration() -> None:
    config = PURE.replace(
        push_notifications=True,
        extended_card=ExtendedCard(),
        provider=AgentProvider(organization="Acme", url="https://acme.example"),
        documentation_url="https://docs.example",
    )
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=config) as client:
            response = await client.get(CARD, headers={"Host": "agents.example:8443"})
            assert response.status_code == 200
            assert response.headers["Content-Type"] == "application/json"
            card = await response.get_json()
            assert card["supportedInterfaces"] == [
                {
                    "url": "http://agents.example:8443/",
                    "protocolBinding": "JSONRPC",
                    "protocolVersion": "1.0",
                },
                {
                    "url": "http://agents.example:8443/rest",
                    "protocolBinding": "HTTP+JSON",
                    "protocolVersion": "1.0",
                },
            ]
            assert card["capabilities"]["streaming"] is True
            assert card["capabilities"]["pushNotifications"] is True
            assert card["capabilities"]["extendedAgentCard"] is True
            assert [e["uri"] for e in card["capabilities"]["extensions"]] == [
                "urn:test:ext",
                "urn:test:required",
            ]
            assert card["skills"] == [
                {
                    "id": SKILL.id,
                    "name": SKILL.name,
                    "description": SKILL.description,
                    "tags": ["test"],
                }
            ]
            assert card["provider"] == {"organization": "Acme", "url": "https://acme.example"}
            assert card["documentationUrl"] == "https://docs.example"
            for key in ("url", "protocolVersion", "preferredTransport", "securitySchemes"):
                assert key not in card
        async with running_app(config=PURE.replace(streaming=False)) as client:
            card = await (await client.get(CARD)).get_json()
            assert card["capabilities"] == {
                "streaming": False,
                "pushNotifications": False,
                "extensions": card["capabilities"]["extensions"],
                "extendedAgentCard": False,
            }


async def test_public_url_wins_over_the_host_header() -> None:
    config = PURE.replace(public_url="https://a2a.example.com/agents/echo/", rest_prefix="/api")
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=config) as client:
            card = await (await client.get(CARD, headers={"Host": "evil.example"})).get_json()
            assert [i["url"] for i in card["supportedInterfaces"]] == [
                "https://a2a.example.com/agents/echo/",
                "https://a2a.example.com/agents/echo/api",
            ]


async def test_cache_validators_and_304() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=PURE.replace(card_max_age=120)) as client:
            response = await client.get(CARD)
            etag = response.headers["ETag"]
            modified = response.headers["Last-Modified"]
            assert etag.startswith('W/"')
            assert response.headers["Cache-Control"] == "public, max-age=120"
            assert modified.endswith(" GMT")
            body = await response.get_data(as_text=False)

            again = await client.get(CARD, headers={"If-None-Match": etag})
            assert again.status_code == 304
            assert await again.get_data() == b""
            assert again.headers["ETag"] == etag
            strong = await client.get(CARD, headers={"If-None-Match": etag.removeprefix("W/")})
            assert strong.status_code == 304
            listed = await client.get(CARD, headers={"If-None-Match": f'"other", {etag}'})
            assert listed.status_code == 304
            other = await client.get(CARD, headers={"If-None-Match": '"something-else"'})
            assert other.status_code == 200
            assert await other.get_data() == body

            since = await client.get(CARD, headers={"If-Modified-Since": modified})
            assert since.status_code == 304
            old = await client.get(
                CARD, headers={"If-Modified-Since": "Mon, 01 Jan 1990 00:00:00 GMT"}
            )
            assert old.status_code == 200
            junk = await client.get(CARD, headers={"If-Modified-Since": "not a date"})
            assert junk.status_code == 200

            legacy = await client.get("/.well-known/agent.json")
            assert legacy.status_code == 200
            assert await legacy.get_data() == body
            # another host is another card, with another tag
            elsewhere = await client.get(CARD, headers={"Host": "other.example"})
            assert elsewhere.headers["ETag"] != etag


async def test_dual_version_card_when_legacy_is_on() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app() as client:
            card = await (await client.get(CARD)).get_json()
            versions = [
                (i["protocolBinding"], i["protocolVersion"]) for i in card["supportedInterfaces"]
            ]
            assert versions == [("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("JSONRPC", "0.3")]
            assert card["url"] == "http://localhost/"
            assert card["protocolVersion"] == "0.3"
            assert card["preferredTransport"] == "JSONRPC"


async def test_skills_from_skill_md_folders(tmp_path: Path) -> None:
    weather = tmp_path / "skills" / "weather"
    weather.mkdir(parents=True)
    (weather / "SKILL.md").write_text(
        "---\n"
        "name: Weather forecast\n"
        'description: "Forecasts: any city"\n'
        "tags: [weather, forecast]\n"
        "examples:\n"
        "  - Rain in Paris?\n"
        "---\n"
        "# Weather\nBody text is not published.\n",
        encoding="utf-8",
    )
    plain = tmp_path / "skills" / "plain"
    plain.mkdir()
    (plain / "SKILL.md").write_text(
        "---\ndescription: >\n  Folded\n  text\n---\n", encoding="utf-8"
    )
    (tmp_path / "skills" / "not-a-skill").mkdir()
    config = PURE.replace(skill_dirs=(tmp_path / "skills",))
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=config) as client:
            card = await (await client.get(CARD)).get_json()
            assert card["skills"][1:] == [
                {"id": "plain", "name": "plain", "description": "Folded text", "tags": ["skill"]},
                {
                    "id": "weather",
                    "name": "Weather forecast",
                    "description": "Forecasts: any city",
                    "tags": ["weather", "forecast"],
                    "examples": ["Rain in Paris?"],
                },
            ]


async def test_card_is_json_even_for_head_and_unknown_paths() -> None:
    with anyio.fail_after(TIMEOUT):
        async with running_app(config=PURE) as client:
            head = await client.open(CARD, method="HEAD")
            assert head.status_code == 200
            missing = await client.get("/nope")
            assert missing.status_code == 404
            assert json.loads(await missing.get_data())["error"]["code"] == 404
            post = await client.post(CARD, data=b"{}")
            assert post.status_code == 405
