"""Finding agents by name: the :class:`Registry` protocol and the static registry.

A registry maps agent **names** to where they are served and what their card says. Three
implementations share the protocol:

* :class:`StaticRegistry`: names to URLs, from a dict or a JSON/TOML file; the card is
  fetched from the URL's well-known path when resolved (and cached);
* :class:`~a2a_actors.client._registry.wellknown.WellKnownRegistry`: the well-known card resolver as
  a registry: a name is an agent's base URL (or a card's name among URLs it was told of);
* :class:`~a2a_actors.client._registry.nats.NatsRegistry`: NATS JetStream KV, shared by every
  process; a server publishes its card when it listens (``a2a-actors serve --register
  nats://...``) and its entry expires when it stops refreshing it (SIGKILL included).

:func:`open_registry` opens one from a string: ``nats://HOST:PORT`` (several comma-separated
for a NATS cluster), or the path of a JSON/TOML file.

Resolving a name nobody published raises :class:`UnknownAgentError`, whose message lists the
close matches among the names the registry knows (``difflib``).

Who uses a registry: ``A2AClient.connect(name, registry=...)``, ``RemoteAgent.connect``,
an orchestrator's ``registry=`` (``ctx.delegate("translator", ...)`` and pipeline steps
named by strings), and the CLI (``--registry``, ``a2a-actors agents``).
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Protocol, runtime_checkable

import anyio
import httpx
from anyio.streams.memory import MemoryObjectSendStream

from a2a_actors.client._discovery import DEFAULT_CARD_CACHE, CardCache, discover
from a2a_actors.client._registry.entries import (
    RegistryChange,
    RegistryEntry,
    unknown_agent,
)
from a2a_actors.protocol._card import AgentCard

__all__ = (
    "REGISTRY_ENV",
    "Registry",
    "StaticRegistry",
    "Watchers",
    "is_url",
    "open_registry",
)

#: The environment variable naming the registry an orchestrator resolves names in when it
#: was given none (``nats://HOST:PORT`` or a file path): how a pipeline served from the
#: CLI finds its steps by name.
REGISTRY_ENV = "A2A_ACTORS_REGISTRY"


def is_url(text: str) -> bool:
    """Whether ``text`` is an ``http(s)://`` URL (not a name to look up)."""
    return text.startswith(("http://", "https://"))


@runtime_checkable
class Registry(Protocol):
    """Where agents are published and found by name.

    An entry published lives until it is withdrawn; a registry shared between processes may also
    drop the entries of a process that stopped
    (:class:`~a2a_actors.client._registry.nats.NatsRegistry`).
    """

    async def publish(self, card: AgentCard, url: str) -> None:
        """Register the agent of ``card``, served at base URL ``url``, under ``card.name``
        (replacing an earlier entry of that name)."""
        ...

    async def withdraw(self, name: str) -> None:
        """Remove the entry of ``name``; no error when there is none."""
        ...

    async def resolve(self, name: str) -> RegistryEntry:
        """The entry of ``name``.

        Raises:
            UnknownAgentError: Nobody is registered under ``name`` (with close matches).
            AgentCardError: The entry's card could not be fetched (static, well-known).
            A2AConnectionError: Its server could not be reached to fetch the card.
        """
        ...

    async def list(self) -> list[RegistryEntry]:
        """Every entry, sorted by name."""
        ...

    def watch(self) -> AbstractAsyncContextManager[AsyncIterator[RegistryChange]]:
        """``async with registry.watch() as changes: async for change in changes``: first
        one change per entry present now, then each later publish and withdrawal."""
        ...


class Watchers:
    """The watchers of an in-process registry: each gets every change, without blocking
    the registry (a watcher that lags more than ``buffer`` changes is dropped)."""

    def __init__(self, buffer: int = 256) -> None:
        self._buffer = buffer
        self._sends: set[MemoryObjectSendStream[RegistryChange]] = set()

    def send_nowait(self, change: RegistryChange) -> None:
        for send in list(self._sends):
            try:
                send.send_nowait(change)
            except (anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._sends.discard(send)
                send.close()

    @asynccontextmanager
    async def watch(
        self, current: Iterable[RegistryChange]
    ) -> AsyncIterator[AsyncIterator[RegistryChange]]:
        current = list(current)
        size = len(current) + self._buffer
        send, receive = anyio.create_memory_object_stream[RegistryChange](size)
        for change in current:
            send.send_nowait(change)
        self._sends.add(send)
        try:
            async with receive:
                yield receive
        finally:
            self._sends.discard(send)
            send.close()


class StaticRegistry:
    """Names mapped to base URLs, from a dict or a file; cards fetched when resolved.

    ``publish`` and ``withdraw`` change this object's mapping only (never the file). A
    published card is kept and returned as is; an entry that has only a URL has its card
    fetched from the URL's well-known path at each :meth:`resolve` (revalidated through
    ``card_cache``).

    Args:
        agents: Name -> base URL.
        http_client: Borrowed for the card fetches; a temporary one otherwise.
        card_cache: Where fetched cards are cached (``None``: no cache).
    """

    def __init__(
        self,
        agents: Mapping[str, str] | None = None,
        *,
        http_client: httpx.AsyncClient | None = None,
        card_cache: CardCache | None = DEFAULT_CARD_CACHE,
    ) -> None:
        self._urls: dict[str, str] = {}
        self._cards: dict[str, AgentCard] = {}
        for name, url in (agents or {}).items():
            self._urls[name] = _checked_url(name, url)
        self._http = http_client
        self._cache = card_cache
        self._watchers = Watchers()

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], **options: object) -> StaticRegistry:
        """Read a JSON or TOML file mapping names to URLs (optionally under ``agents``)::

            {"translator": "http://10.0.0.5:8000"}        # registry.json
            [agents]                                      # registry.toml
            translator = "http://10.0.0.5:8000"

        Raises:
            ValueError: The file is not JSON/TOML, not such a mapping, or a URL is not http(s).
            OSError: The file cannot be read.
        """
        file = Path(path)
        text = file.read_text(encoding="utf-8")
        try:
            data = tomllib.loads(text) if file.suffix == ".toml" else json.loads(text)
        except (ValueError, tomllib.TOMLDecodeError) as exc:
            raise ValueError(f"registry file {file}: {exc}") from None
        if isinstance(data, dict) and isinstance(data.get("agents"), dict):
            data = data["agents"]
        if not isinstance(data, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in data.items()
        ):
            raise ValueError(f"registry file {file}: expected a mapping of names to URLs")
        return cls(data, **options)  # type: ignore[arg-type]

    async def publish(self, card: AgentCard, url: str) -> None:
        """Register ``card`` under ``card.name`` at ``url`` (in this object only)."""
        base = self._urls[card.name] = _checked_url(card.name, url)
        self._cards[card.name] = card
        self._watchers.send_nowait(RegistryChange(card.name, RegistryEntry(card.name, base, card)))

    async def withdraw(self, name: str) -> None:
        """Forget ``name`` (in this object only)."""
        if self._urls.pop(name, None) is not None:
            self._cards.pop(name, None)
            self._watchers.send_nowait(RegistryChange(name, None))

    async def resolve(self, name: str) -> RegistryEntry:
        """The entry of ``name``, its card fetched unless it was published with one."""
        url = self._urls.get(name)
        if url is None:
            raise unknown_agent(name, self._urls)
        card = self._cards.get(name)
        if card is None:
            card = await discover(url, http=self._http, cache=self._cache)
        return RegistryEntry(name, url, card)

    def urls(self) -> dict[str, str]:
        """Name -> base URL of every entry, sorted by name (no card fetched)."""
        return {name: self._urls[name] for name in sorted(self._urls)}

    async def list(self) -> list[RegistryEntry]:
        """Every entry, each card fetched as :meth:`resolve` does."""
        return [await self.resolve(name) for name in sorted(self._urls)]

    def watch(self) -> AbstractAsyncContextManager[AsyncIterator[RegistryChange]]:
        """First the entries published with a card (URL-only entries are not announced: a
        watch fetches no card), then every change made through this object."""
        current = [
            RegistryChange(name, RegistryEntry(name, self._urls[name], card))
            for name, card in sorted(self._cards.items())
        ]
        return self._watchers.watch(current)


def _checked_url(name: str, url: str) -> str:
    if not is_url(url):
        raise ValueError(f"the URL of agent {name!r} must be http(s)://...; got {url!r}")
    return url.rstrip("/")


def open_registry(spec: str, **options: object) -> AbstractAsyncContextManager[Registry]:
    """Open the registry a string names, for an ``async with`` block.

    * ``nats://HOST:PORT`` (comma-separated for several servers):
      :class:`~a2a_actors.client._registry.nats.NatsRegistry` (needs the ``cluster`` extra);
      ``options`` are its ``open`` arguments (``ttl``, ``bucket``, ``timeout``);
    * anything else is the path of a JSON or TOML file: :class:`StaticRegistry` (``options``
      are its constructor's).

    Raises:
        ValueError: The file is not a registry file.
        OSError: The file cannot be read.
        ClusterExtraMissingError: A NATS URL, and nats-py is not installed.
        ClusterUnavailableError: NATS cannot be reached (on entering).
    """
    if spec.startswith(("nats://", "tls://")):
        from a2a_actors.cluster._errors import require_nats

        require_nats()
        from a2a_actors.client._registry.nats import NatsRegistry  # nats-py only when asked for

        return NatsRegistry.open(spec.split(","), **options)  # type: ignore[arg-type]
    return _opened(StaticRegistry.from_file(spec, **options))


@asynccontextmanager
async def _opened(registry: Registry) -> AsyncIterator[Registry]:
    yield registry
