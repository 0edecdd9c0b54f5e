"""PushConfigs rules beyond the wire tests: URL checks at create, redaction, lifetime."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence

import anyio
import pytest

from a2a_actors.protocol._errors import InvalidParamsError
from a2a_actors.protocol._requests import AuthenticationInfo, TaskPushNotificationConfig
from a2a_actors.push._policy import IPAddress, PushPolicy
from a2a_actors.server._push_configs import MemoryPushConfigStore, PushConfigs, redact_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://h.example/cb", "https://h.example/cb"),
        ("https://h.example/cb?sig=abc", "https://h.example/cb?***"),
        ("https://h.example?sig=abc#frag", "https://h.example?***"),
        ("https://h.example/cb#frag", "https://h.example/cb#***"),
        ("https://u:p@h.example/cb?x", "https://***@h.example/cb?***"),
        ("https://u:p@h.example", "https://***@h.example"),
        ("http://[::1]:8080/a/b", "http://[::1]:8080/a/b"),
    ],
)
def test_redact_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def config(
    task_id: str = "t1", config_id: str = "c1", url: str = "https://h.example/"
) -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(
        url=url,
        id=config_id,
        task_id=task_id,
        token="tok",
        authentication=AuthenticationInfo(scheme="Bearer", credentials="cred"),
    )


async def test_create_redacts_and_stores_the_secrets() -> None:
    store = MemoryPushConfigStore()
    push = PushConfigs(store, policy=PushPolicy())
    created = await push.create("t1", config(url="https://93.184.216.34/cb?sig=s"))
    assert (created.token, created.authentication) == ("", AuthenticationInfo(scheme="Bearer"))
    assert created.url == "https://93.184.216.34/cb?***"
    (stored,) = store.configs_for("t1")
    assert (stored.token, stored.url) == ("tok", "https://93.184.216.34/cb?sig=s")


async def test_validate_resolves_names_once_and_checks_every_address() -> None:
    calls: list[tuple[str, int]] = []
    answers = {
        "public.example.com": ["93.184.216.34"],
        "mixed.example.com": ["1.1.1.1", "10.0.0.1"],
    }

    async def resolve(host: str, port: int) -> Sequence[IPAddress]:
        calls.append((host, port))
        if host == "slow.example.com":
            await anyio.sleep_forever()
        if host not in answers:
            raise socket.gaierror(socket.EAI_NONAME, "unknown")
        return [ipaddress.ip_address(a) for a in answers[host]]

    push = PushConfigs(
        MemoryPushConfigStore(), policy=PushPolicy(), resolver=resolve, resolve_timeout=0.05
    )
    with anyio.fail_after(5):
        await push.validate(config(url="https://public.example.com:8443/x"))
        assert calls == [("public.example.com", 8443)]
        with pytest.raises(InvalidParamsError, match=r"address 10\.0\.0\.1 is private") as info:
            await push.validate(config(url="https://mixed.example.com/x"))
        assert info.value.field == "url"
        # Unresolvable or slow: accepted (delivery checks again before every attempt).
        await push.validate(config(url="https://unknown.example.com/x"))
        await push.validate(config(url="https://slow.example.com/x"))
        # IP literals need no resolution.
        calls.clear()
        await push.validate(config(url="https://93.184.216.34/x"))
        assert calls == []
    # allow_private admits everything, so nothing is resolved either.
    private = PushConfigs(
        MemoryPushConfigStore(), policy=PushPolicy(allow_private=True), resolver=resolve
    )
    await private.validate(config(url="http://private.example.com/x"))
    assert calls == []


async def test_retire_keeps_a_config_replaced_meanwhile_and_forget_task_drops_all() -> None:
    store = MemoryPushConfigStore()
    push = PushConfigs(store)
    original = config()
    await store.put(original, limit=32)
    await store.put(config(config_id="c2"), limit=32)
    replacement = config(url="https://other.example/")
    await store.put(replacement, limit=32)
    await push.retire(original)  # replaced: kept
    assert [c.url for c in store.configs_for("t1")] == [
        "https://other.example/",
        "https://h.example/",
    ]
    twin = config(url="https://other.example/")
    await store.put(twin, limit=32)
    await push.retire(replacement)  # replaced by an equal config: still kept
    assert [c.id for c in store.configs_for("t1")] == ["c1", "c2"]
    await push.retire(twin)
    assert [c.id for c in store.configs_for("t1")] == ["c2"]
    await push.forget_task("t1")
    assert (store.configs_for("t1"), len(store)) == ((), 0)


async def test_a_refused_put_leaves_no_empty_entry() -> None:
    store = MemoryPushConfigStore()
    assert not await store.put(config(), limit=0)
    assert store._by_task == {}
