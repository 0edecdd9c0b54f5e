"""The static and well-known registries against real servers, on trio and asyncio:
publish, resolve, withdraw, list, watch, files, and unknown names with close matches."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from a2a_actors.client import A2AClient, A2AConnectionError, AgentCardError, RemoteAgent
from a2a_actors.client._registry.entries import RegistryChange, UnknownAgentError
from a2a_actors.client._registry.registry import Registry, StaticRegistry, open_registry
from a2a_actors.client._registry.wellknown import WellKnownRegistry
from a2a_actors.protocol import Task
from a2a_actors.protocol._card import AgentCard
from tests.registry.helpers import reverser, served, upper

pytestmark = pytest.mark.anyio


async def card_of(url: str) -> AgentCard:
    async with await A2AClient.connect(url, card_cache=None) as client:
        assert client.card is not None
        return client.card


@pytest.mark.parametrize("kind", ["static", "well-known"])
async def test_publish_resolve_withdraw(kind: str) -> None:
    with anyio.fail_after(10):
        async with served(upper) as url:
            card = await card_of(url)
            registry: Registry = StaticRegistry() if kind == "static" else WellKnownRegistry()
            assert isinstance(registry, Registry)
            with pytest.raises(UnknownAgentError):
                await registry.resolve("upper")
            await registry.publish(card, url)
            entry = await registry.resolve("upper")
            assert (entry.name, entry.url, entry.card.name) == ("upper", url, "upper")
            assert [e.name for e in await registry.list()] == ["upper"]
            await registry.withdraw("upper")
            with pytest.raises(UnknownAgentError):
                await registry.resolve("upper")
            assert await registry.list() == []
            await registry.withdraw("upper")  # twice: no error


async def test_unknown_names_list_close_matches() -> None:
    registry = StaticRegistry(
        {"translator": "http://127.0.0.1:1", "transcriber": "http://127.0.0.1:2"}
    )
    with pytest.raises(UnknownAgentError) as caught:
        await registry.resolve("translater")
    assert caught.value.close_matches[0] == "translator"
    assert "did you mean 'translator'" in str(caught.value)
    with pytest.raises(UnknownAgentError) as far:
        await registry.resolve("zebra")
    assert far.value.close_matches == ()
    assert str(far.value) == "no agent named 'zebra' is registered"


@pytest.mark.parametrize("suffix", [".json", ".toml"])
async def test_a_file_maps_names_to_urls_and_cards_are_fetched(tmp_path: Path, suffix: str) -> None:
    with anyio.fail_after(10):
        async with served(upper) as up, served(reverser) as rev:
            file = tmp_path / f"agents{suffix}"
            if suffix == ".json":
                file.write_text(json.dumps({"shout": up, "mirror": rev}))
            else:
                file.write_text(f'[agents]\nshout = "{up}"\nmirror = "{rev}"\n')
            async with open_registry(str(file)) as registry:
                entry = await registry.resolve("shout")
                assert (entry.name, entry.url, entry.card.name) == ("shout", up, "upper")
                listed = await registry.list()
                assert [(e.name, e.card.name) for e in listed] == [
                    ("mirror", "reverser"),
                    ("shout", "upper"),
                ]
                async with await A2AClient.connect("mirror", registry=registry) as client:
                    task = await client.send_message("abc")
                assert isinstance(task, Task)
                assert task.status.message is not None
                assert task.status.message.text == "cba"
                remote = await RemoteAgent.connect("shout", registry=registry)
                async with remote:
                    assert (await remote.call("abc")).text == "ABC"


def test_bad_registry_files_are_refused_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "list.json").write_text('["http://x"]')
    (tmp_path / "broken.toml").write_text("agents = [")
    (tmp_path / "ftp.json").write_text('{"a": "ftp://x"}')
    with pytest.raises(ValueError, match="expected a mapping of names to URLs"):
        StaticRegistry.from_file(tmp_path / "list.json")
    with pytest.raises(ValueError, match=r"broken\.toml"):
        StaticRegistry.from_file(tmp_path / "broken.toml")
    with pytest.raises(ValueError, match="must be http"):
        StaticRegistry.from_file(tmp_path / "ftp.json")
    with pytest.raises(FileNotFoundError):
        StaticRegistry.from_file(tmp_path / "missing.json")


async def test_watch_sees_publish_and_withdraw() -> None:
    with anyio.fail_after(10):
        async with served(upper) as url:
            card = await card_of(url)
            registry = StaticRegistry()
            await registry.publish(card, url)
            async with registry.watch() as changes:
                await registry.withdraw("upper")
                await registry.publish(card, url)
                seen: list[RegistryChange] = []
                async for change in changes:
                    seen.append(change)
                    if len(seen) == 3:
                        break
    assert [(c.name, c.entry is not None) for c in seen] == [
        ("upper", True),
        ("upper", False),
        ("upper", True),
    ]


async def test_well_known_resolves_urls_and_names_and_checks_what_is_published() -> None:
    with anyio.fail_after(10):
        async with served(upper) as up, served(reverser) as rev:
            registry = WellKnownRegistry([up])
            by_url = await registry.resolve(rev + "/")
            assert (by_url.name, by_url.url) == ("reverser", rev)
            assert (await registry.resolve("upper")).url == up
            with pytest.raises(UnknownAgentError, match="did you mean 'upper'"):
                await registry.resolve("uper")
            with pytest.raises(AgentCardError, match="serves the card of 'reverser'"):
                await registry.publish(await card_of(up), rev)
            await registry.publish(await card_of(rev), rev)
            assert [e.name for e in await registry.list()] == ["reverser", "upper"]
        # both servers stopped: their cards no longer resolve; list leaves them out
        assert await registry.list() == []
        with pytest.raises(A2AConnectionError):
            await registry.resolve(up)
