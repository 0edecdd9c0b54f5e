"""The well-known card resolver as a :class:`~a2a_actors.client._registry.registry.Registry`: URL ->
card.

Every agent publishes its card at ``{base}/.well-known/agent-card.json``, so a base URL is already a
name that resolves: :meth:`WellKnownRegistry.resolve` of an ``http(s)://`` URL fetches that card
(:func:`~a2a_actors.client._discovery.discover`, cached and revalidated). The registry also keeps
the URLs it was told of (constructor, :meth:`~WellKnownRegistry.publish`), so that the name *on a
card* resolves too: ``resolve("translator")`` fetches each known URL's card and returns the one
whose ``name`` is ``translator``. Cards are always the live ones: the entry of an agent that stopped
serving fails to resolve (``A2AConnectionError``).
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Iterable
from contextlib import AbstractAsyncContextManager

import httpx

from a2a_actors.client._discovery import DEFAULT_CARD_CACHE, CardCache, discover
from a2a_actors.client._errors import A2AConnectionError, AgentCardError
from a2a_actors.client._registry.entries import RegistryChange, RegistryEntry, unknown_agent
from a2a_actors.client._registry.registry import Watchers, is_url
from a2a_actors.protocol._card import AgentCard

__all__ = ("WellKnownRegistry",)


class WellKnownRegistry:
    """Names are base URLs, or the card names of the URLs it knows (module docstring).

    Args:
        urls: Base URLs to know from the start.
        http_client: Borrowed for the card fetches; a temporary one otherwise.
        card_cache: Where cards are cached and revalidated (``None``: no cache).
    """

    def __init__(
        self,
        urls: Iterable[str] = (),
        *,
        http_client: httpx.AsyncClient | None = None,
        card_cache: CardCache | None = DEFAULT_CARD_CACHE,
    ) -> None:
        self._urls: dict[str, None] = {}  # ordered set
        for url in urls:
            self._urls[_base(url)] = None
        self._http = http_client
        self._cache = card_cache
        self._watchers = Watchers()

    async def publish(self, card: AgentCard, url: str) -> None:
        """Know ``url``, after checking that it serves a card named ``card.name``.

        Raises:
            AgentCardError: ``url`` serves no card, or one with another name.
            A2AConnectionError: ``url`` cannot be reached.
            ValueError: ``url`` is not ``http(s)://``.
        """
        base = _base(url)
        served = await self._fetch(base)
        if served.name != card.name:
            raise AgentCardError(f"{base} serves the card of {served.name!r}, not of {card.name!r}")
        self._urls[base] = None
        self._watchers.send_nowait(
            RegistryChange(card.name, RegistryEntry(card.name, base, served))
        )

    async def withdraw(self, name: str) -> None:
        """Forget the URL ``name``, or every known URL whose card is named ``name``."""
        if is_url(name):
            gone = [_base(name)] if _base(name) in self._urls else []
        else:
            gone = [e.url for e in await self._known() if e.name == name]
        for url in gone:
            del self._urls[url]
        if gone:
            self._watchers.send_nowait(RegistryChange(name, None))

    async def resolve(self, name: str) -> RegistryEntry:
        """The card at URL ``name``, or the known URL whose card is named ``name``.

        Raises:
            UnknownAgentError: ``name`` is not a URL and no known URL's card has that name.
            AgentCardError: The URL serves no usable card.
            A2AConnectionError: The URL cannot be reached.
        """
        if is_url(name):
            base = _base(name)
            card = await self._fetch(base)
            return RegistryEntry(card.name, base, card)
        known = await self._known()
        for entry in known:
            if entry.name == name:
                return entry
        raise unknown_agent(name, [e.name for e in known])

    async def list(self) -> list[RegistryEntry]:
        """The entries of the known URLs that answer, sorted by name."""
        return sorted(await self._known(), key=lambda e: (e.name, e.url))

    def watch(self) -> AbstractAsyncContextManager[AsyncIterator[RegistryChange]]:
        """Changes made through this object (the URLs known now are not announced: a watch
        fetches no card)."""
        return self._watchers.watch(())

    async def _known(self) -> builtins.list[RegistryEntry]:
        """The known URLs' entries; a URL that does not answer is left out."""
        entries = []
        for url in list(self._urls):
            try:
                card = await self._fetch(url)
            except (AgentCardError, A2AConnectionError):
                continue  # not (or no longer) an agent: left out, not an error
            entries.append(RegistryEntry(card.name, url, card))
        return entries

    async def _fetch(self, url: str) -> AgentCard:
        return await discover(url, http=self._http, cache=self._cache)


def _base(url: str) -> str:
    if not is_url(url):
        raise ValueError(f"a well-known registry knows http(s):// URLs; got {url!r}")
    return url.rstrip("/")
