"""Delegation targets: how the target of ``ctx.delegate`` becomes a :class:`~._links.Link`.

What a target may be is the contract of :mod:`orchestrator._delegator`. :class:`Targets`
(one per :class:`~orchestrator._delegator.Orchestrator`) resolves one: a local agent becomes a
:class:`~._links.LocalLink` to an orchestrated wrapper of it, in the delegating task's own
supervisor; a :class:`~a2a_actors.client.RemoteAgent` or
:class:`~a2a_actors.client.A2AClient` a :class:`~._links.RemoteLink` over that client; a
name is looked up with the resolver, at most eight times in a row (names may name names).

An ``http(s)://`` base URL is connected once: its :class:`~._links.RemoteLink` (an
:class:`~a2a_actors.client.A2AClient` made by the client factory, by default one sharing
an ``httpx.AsyncClient`` for connection reuse, and what its card says about streaming and
the correlation extension) is cached per base URL, and concurrent first delegations to one
URL wait for one connection (a lock per URL).

A name the resolver does not know is looked up in the registry
(:mod:`a2a_actors.client._registry.registry`): the one given, else the one the
``A2A_ACTORS_REGISTRY`` environment variable names (opened for that one lookup), and the
entry's URL is then a remote target like any other. Names are looked up at every
delegation, so a server that left the registry is no longer called.
:meth:`Targets.aclose` closes those clients, then the ``httpx.AsyncClient`` if it made it;
one it was given stays its owner's.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TypeAlias

import anyio
import httpx

from a2a_actors.client import A2AClient, RemoteAgent, Timeouts
from a2a_actors.client._registry.registry import REGISTRY_ENV, Registry, open_registry
from a2a_actors.client.middleware import ClientMiddleware
from a2a_actors.protocol._errors import A2AError, UnsupportedOperationError
from a2a_actors.runtime import Agent, TaskContext, as_agent
from orchestrator._errors import DelegationError
from orchestrator._links import Link, LocalLink, RemoteLink, starts_at_once
from orchestrator._orchestrated import orchestrated

__all__ = ("ClientFactory", "Resolver", "Targets")

#: Makes the client for a remote base URL (to add credentials, pick a binding...).
ClientFactory: TypeAlias = Callable[[str], Awaitable[A2AClient]]
#: Names -> targets: a mapping, or a function returning the target (None: unknown).
Resolver: TypeAlias = Mapping[str, object] | Callable[[str], object]

_MAX_RESOLVE = 8


class Targets:
    """The delegation targets of one orchestrator, and the remote links it connected.

    Args:
        http_client: An ``httpx.AsyncClient`` to borrow for remote agents (never closed
            here); by default one is created on first use and closed by :meth:`aclose`.
        client_factory: Makes the :class:`~a2a_actors.client.A2AClient` of a base URL;
            by default ``A2AClient.connect(url, http_client=...)``.
        resolver: Names -> targets, for string targets that are not URLs.
        timeouts: Timeouts of the default clients.
        registry: Where names the resolver does not know are looked up (module docstring).
        middleware: Caller-side middleware of the default clients (a ``client_factory``
            adds its own).
    """

    def __init__(
        self,
        *,
        http_client: httpx.AsyncClient | None,
        client_factory: ClientFactory | None,
        resolver: Resolver | None,
        timeouts: Timeouts,
        registry: Registry | None = None,
        middleware: Sequence[ClientMiddleware] = (),
    ) -> None:
        self._http = http_client
        self._own_http = http_client is None
        self._factory = client_factory
        self._resolver = resolver
        self._timeouts = timeouts
        self._registry = registry
        self._middleware = tuple(middleware)
        self._links: dict[str, RemoteLink] = {}
        self._connecting: dict[str, anyio.Lock] = {}

    async def link(self, ctx: TaskContext, target: object) -> Link:
        """The link to ``target`` for a delegation from ``ctx``'s task.

        Raises:
            TypeError: ``target`` is none of the kinds of target.
            ValueError: Target names resolve to each other in a loop.
            UnsupportedOperationError: A name that no resolver knows.
            DelegationError: A remote agent could not be reached.
        """
        for _ in range(_MAX_RESOLVE):
            if isinstance(target, RemoteAgent):
                client = target.client
                return RemoteLink(
                    client,
                    name=target.name,
                    url=client.interface.url.rstrip("/"),
                    streaming=target.streaming,
                    orchestrated=starts_at_once(client.card),
                )
            if isinstance(target, A2AClient):
                card = target.card
                url = target.interface.url.rstrip("/")
                return RemoteLink(
                    target,
                    name=card.name if card is not None else url,
                    url=url,
                    streaming=card is None or bool(card.capabilities.streaming),
                    orchestrated=starts_at_once(card),
                )
            if isinstance(target, str):
                if target.startswith(("http://", "https://")):
                    return await self.remote(target)
                target = await self._resolve(target)
                continue
            if isinstance(target, Agent) or callable(target) or hasattr(target, "handle"):
                return LocalLink(ctx.supervisor, ctx.caller, orchestrated(as_agent(target)))
            raise TypeError(
                "a delegation target is an Agent, an async function of a TaskContext, an "
                f"http(s) URL, a RemoteAgent, an A2AClient or a resolvable name; got {target!r}"
            )
        raise ValueError("delegation target names resolve to each other in a loop")

    async def remote(self, url: str) -> RemoteLink:
        """The (cached) link of the agent at base URL ``url``, connected on first use.

        Raises:
            DelegationError: The agent could not be reached or has no usable card.
        """
        key = url.rstrip("/")
        link = self._links.get(key)
        if link is not None:
            return link
        lock = self._connecting.setdefault(key, anyio.Lock())
        async with lock:
            link = self._links.get(key)
            if link is not None:
                return link
            try:
                if self._factory is not None:
                    client = await self._factory(key)
                else:
                    client = await A2AClient.connect(
                        key,
                        http_client=self._http_client(),
                        timeouts=self._timeouts,
                        middleware=self._middleware,
                    )
            except A2AError as exc:
                raise DelegationError(
                    f"could not reach the agent at {key}: {exc}", origin_agent=key
                ) from exc
            card = client.card
            link = RemoteLink(
                client,
                name=card.name if card is not None else key,
                url=key,
                streaming=card is None or bool(card.capabilities.streaming),
                orchestrated=starts_at_once(card),
            )
            self._links[key] = link
            return link

    async def aclose(self) -> None:
        """Close the remote clients and the ``httpx.AsyncClient`` if it is ours."""
        links, self._links = self._links, {}
        for link in links.values():
            await link.client.aclose()
        if self._own_http and self._http is not None:
            http, self._http = self._http, None
            await http.aclose()

    async def _resolve(self, name: str) -> object:
        resolver = self._resolver
        found: object = None
        if isinstance(resolver, Mapping):
            found = resolver.get(name)
        elif resolver is not None:
            found = resolver(name)
        if found is not None:
            return found
        spec = os.environ.get(REGISTRY_ENV, "")
        if self._registry is None and not spec:
            raise UnsupportedOperationError(
                f"unknown delegation target {name!r}: not an http(s) URL, and no resolver "
                f"or registry names it (set {REGISTRY_ENV} or pass registry=)"
            )
        try:
            if self._registry is not None:
                entry = await self._registry.resolve(name)
            else:
                async with open_registry(spec) as registry:
                    entry = await registry.resolve(name)
        except A2AError as exc:  # UnknownAgentError (close matches), card or connection
            raise DelegationError(str(exc), origin_agent=name) from exc
        except (OSError, ValueError, RuntimeError) as exc:  # the registry cannot be opened
            raise DelegationError(
                f"cannot look {name!r} up in the registry: {exc}", origin_agent=name
            ) from exc
        return entry.url

    def _http_client(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=self._timeouts.unary())
        return self._http
