"""A2AClient: an A2A client over httpx, built from a URL, a card, or by discovery.

:class:`A2AClient` is :class:`~a2a_actors.client._methods.A2AMethods` (the eleven typed methods)
plus what a real connection needs: choosing the transport for an interface (:func:`make_transport`),
credentials from the card (:mod:`a2a_actors.client._auth`), timeouts suited to long-running agents
(:class:`~a2a_actors.client._transports.transport.Timeouts`), discovery (:meth:`A2AClient.connect`)
and lifetime.

Lifetime: the client owns the ``httpx.AsyncClient`` it creates (closed by
:meth:`A2AClient.aclose` or by leaving ``async with``); one passed in as ``http_client``
stays the caller's. It works under trio and asyncio alike (httpx runs on anyio).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType
from typing import cast

import httpx

from a2a_actors._version import __version__
from a2a_actors.client._auth import APIKey, AuthHook, BearerToken, build_auth
from a2a_actors.client._card_verify import CardKeys, CardKeysSource, CardSignatureError, card_keys
from a2a_actors.client._discovery import (
    DEFAULT_CARD_CACHE,
    TASKS_SEND_BINDING,
    CardCache,
    discover,
    parse_version,
    resolve_interface,
)
from a2a_actors.client._methods import A2AMethods
from a2a_actors.client._registry.registry import Registry, is_url
from a2a_actors.client._transports.grpc_binding import GRPC_BINDING, transport_class
from a2a_actors.client._transports.jsonrpc import JSONRPCTransport
from a2a_actors.client._transports.legacy import LegacyTransport, TasksSendTransport
from a2a_actors.client._transports.rest import RESTTransport
from a2a_actors.client._transports.transport import Timeouts, Transport
from a2a_actors.client.middleware import (
    ClientCall,
    ClientMiddleware,
    MiddlewareTransport,
    run_chain,
)
from a2a_actors.protocol._card import AgentCard, AgentInterface

__all__ = ("A2AClient", "make_transport")

_USER_AGENT = {"User-Agent": f"a2a-actors/{__version__}"}


class A2AClient(A2AMethods):
    """A client for one A2A agent.

    Build it from exactly one of: an endpoint ``url`` (with ``binding``, ``protocol_version`` and
    ``tenant``), a ``card`` (the interface is chosen as
    :func:`~a2a_actors.client._discovery.resolve_interface` says), or a ready ``transport``
    (optionally with the ``card`` it came from). Or let :meth:`connect` discover the card first.

    Args:
        url: The interface URL (JSON-RPC endpoint, or REST base).
        card: An AgentCard to choose the interface from; kept as :attr:`card`.
        transport: A transport to use as is (auth and timeouts are then its business).
        binding: ``"JSONRPC"``, ``"HTTP+JSON"`` or ``"GRPC"`` (``url`` is then
            ``host:port``), with ``url``.
        protocol_version: ``"1.0"``, or ``"0.3"`` to speak legacy JSON-RPC, with ``url``.
        tenant: Copied into every request, with ``url``.
        bindings: Binding preference, with ``card``; by default as
            :func:`~a2a_actors.client._discovery.auto_bindings` says (gRPC when the card prefers it
            or offers nothing else, and the ``grpc`` extra is installed). ``("GRPC",)`` forces gRPC.
        http_client: An ``httpx.AsyncClient`` to borrow instead of creating one.
        api_key: Sent as the card's apiKey scheme says (:mod:`a2a_actors.client._auth`).
        bearer_token: Sent as ``Authorization: Bearer …``: a string, or a callable (sync or
            async) returning the token, called for every request (to refresh it).
        auth: A request hook or ``httpx.Auth`` for tokens obtained elsewhere.
        extensions: Extension URIs activated on every call (``A2A-Extensions``).
        timeouts: Connect/read/write/stream timeouts
        (:class:`~a2a_actors.client._transports.transport.Timeouts`).
        resubscribe: Resume cut streams with SubscribeToTask (default for every stream).
        max_resubscribes: Re-subscriptions allowed per stream.
        middleware: Caller-side middleware around every call, outermost first (see
            :mod:`.middleware`).
        verify_card: Trusted keys (:class:`~a2a_actors.client._card_verify.CardKeys`): ``card``,
            when given, must be signed by one of them, and so must the extended card
            :meth:`get_extended_card` fetches (docs/trust.md).

    Raises:
        CardSignatureError: ``card`` is not signed by one of ``verify_card``'s keys.
        ValueError: Not exactly one of ``url``, ``card`` and ``transport``, or a binding or
            version this client cannot speak.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        card: AgentCard | None = None,
        transport: Transport | None = None,
        binding: str = "JSONRPC",
        protocol_version: str = "1.0",
        tenant: str = "",
        bindings: tuple[str, ...] | None = None,
        http_client: httpx.AsyncClient | None = None,
        api_key: str | APIKey | None = None,
        bearer_token: BearerToken | None = None,
        auth: AuthHook | httpx.Auth | None = None,
        extensions: Sequence[str] = (),
        timeouts: Timeouts | None = None,
        resubscribe: bool = False,
        max_resubscribes: int = 3,
        middleware: Sequence[ClientMiddleware] = (),
        verify_card: CardKeys | None = None,
    ) -> None:
        if (transport is None and (url is None) == (card is None)) or (
            transport is not None and url is not None
        ):
            raise ValueError("give exactly one of url, card, transport (a card may go with it)")
        if verify_card is not None and card is not None:
            verify_card.verify(card)  # before anything is opened
        self._timeouts = timeouts or Timeouts()
        self._own_http = http_client is None and transport is None
        self._http: httpx.AsyncClient | None = http_client
        if transport is None:
            if card is not None:
                base = card.supported_interfaces[0].url if card.supported_interfaces else ""
                interface = resolve_interface(card, base_url=base, bindings=bindings)
            else:
                assert url is not None
                interface = AgentInterface(
                    url=url,
                    protocol_binding=binding,
                    protocol_version=protocol_version,
                    tenant=tenant,
                )
            credentials = build_auth(card, api_key=api_key, bearer_token=bearer_token, auth=auth)
            self._http = http_client or httpx.AsyncClient(
                timeout=self._timeouts.unary(), headers=_USER_AGENT
            )
            transport = make_transport(
                interface, self._http, auth=credentials, timeouts=self._timeouts
            )
        if middleware:
            transport = MiddlewareTransport(transport, middleware)
        super().__init__(
            transport,
            card=card,
            extensions=extensions,
            resubscribe=resubscribe,
            max_resubscribes=max_resubscribes,
        )
        self._card_keys = verify_card

    @classmethod
    async def connect(
        cls,
        base_url: str,
        *,
        bindings: tuple[str, ...] | None = None,
        card_cache: CardCache | None = DEFAULT_CARD_CACHE,
        http_client: httpx.AsyncClient | None = None,
        api_key: str | APIKey | None = None,
        bearer_token: BearerToken | None = None,
        auth: AuthHook | httpx.Auth | None = None,
        extensions: Sequence[str] = (),
        timeouts: Timeouts | None = None,
        resubscribe: bool = False,
        max_resubscribes: int = 3,
        middleware: Sequence[ClientMiddleware] = (),
        registry: Registry | None = None,
        verify_card: CardKeysSource | None = None,
    ) -> A2AClient:
        """Discover the agent at ``base_url`` and return a client for its best interface.

        The card is fetched as :func:`~a2a_actors.client._discovery.discover` says (cached,
        revalidated), the interface chosen as
        :func:`~a2a_actors.client._discovery.resolve_interface` says; other arguments are those of
        the constructor. With a ``registry``, ``base_url`` may be an agent's name instead: the card
        and URL are then the registry's entry (:mod:`a2a_actors.client._registry.registry`). A card
        fetch goes through ``middleware`` as a ``GetAgentCard`` call. With ``verify_card`` (trusted
        keys: :class:`~a2a_actors.client._card_verify.CardKeys`, a JWKS object, or a JWKS file or
        URL) the card must carry a signature one of them verifies, and so must the extended card
        :meth:`get_extended_card` fetches later (docs/trust.md).

        Raises:
            AgentCardError: No usable card.
            CardSignatureError: ``verify_card`` is given and the card is not signed by
                one of its keys.
            ValueError: ``verify_card`` names a file or URL that holds no usable JWKS.
            GRPCUnavailableError: gRPC is chosen (the card offers nothing else, or
                ``("GRPC",)`` was asked) and the ``grpc`` extra is not installed.
            UnknownAgentError: A name that ``registry`` does not know (close matches said).
            A2AConnectionError: The agent could not be reached.
        """
        tmo = timeouts or Timeouts()
        http = http_client or httpx.AsyncClient(timeout=tmo.unary(), headers=_USER_AGENT)
        try:
            if registry is not None and not is_url(base_url):
                entry = await registry.resolve(base_url)
                card, base_url = entry.card, entry.url
            else:

                async def fetch(call: ClientCall) -> object:
                    return await discover(
                        call.url, http=http, cache=card_cache, timeout=tmo.unary()
                    )

                call = ClientCall("GetAgentCard", base_url, base_url)
                card = cast(AgentCard, await run_chain(middleware, call, fetch))
            keys = None if verify_card is None else await card_keys(verify_card, http=http)
            if keys is not None:
                keys.verify(card)
            interface = resolve_interface(card, base_url=base_url.rstrip("/"), bindings=bindings)
        except BaseException:
            if http_client is None:
                await http.aclose()
            raise
        credentials = build_auth(card, api_key=api_key, bearer_token=bearer_token, auth=auth)
        client = cls(
            transport=make_transport(interface, http, auth=credentials, timeouts=tmo),
            card=card,
            extensions=extensions,
            timeouts=tmo,
            resubscribe=resubscribe,
            max_resubscribes=max_resubscribes,
            http_client=http,
            middleware=middleware,
            verify_card=keys,  # the card is verified again: cheap, and nothing to clean up
        )
        client._own_http = http_client is None
        return client

    async def get_extended_card(self, *, extensions: Sequence[str] = ()) -> AgentCard:
        """GetExtendedAgentCard (see :class:`~a2a_actors.client._methods.A2AMethods`); with
        ``verify_card`` given to :meth:`connect`, a card not signed by one of its keys is refused.

        Raises:
            CardSignatureError: The extended card is not signed by a trusted key (the card
                held before stays :attr:`card`).
        """
        previous = self.card
        card = await super().get_extended_card(extensions=extensions)
        if self._card_keys is not None:
            try:
                self._card_keys.verify(card)
            except CardSignatureError:
                self.card = previous
                raise
        return card

    # -- lifetime --------------------------------------------------------------------------

    # -- lifetime --------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close the transport and the ``httpx.AsyncClient`` if this client created it."""
        await self._transport.aclose()
        if self._own_http and self._http is not None:
            await self._http.aclose()

    async def __aenter__(self) -> A2AClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def make_transport(
    interface: AgentInterface,
    http: httpx.AsyncClient,
    *,
    auth: httpx.Auth | None = None,
    timeouts: Timeouts | None = None,
) -> Transport:
    """The transport for ``interface``: by binding for 1.x, legacy for 0.x / ``tasks/send``.

    A ``GRPC`` interface gets :class:`~a2a_actors.client._transports.grpc.GRPCTransport` (``http``
    unused), imported only then.

    Raises:
        GRPCUnavailableError: A gRPC interface without the ``grpc`` extra installed.
        ValueError: A binding or version this client does not speak.
    """
    version = parse_version(interface.protocol_version)
    binding = interface.protocol_binding.upper()
    if binding == TASKS_SEND_BINDING.upper():
        return TasksSendTransport(interface, http, auth=auth, timeouts=timeouts)
    if version is not None and version[0] == 1:
        if binding == "JSONRPC":
            return JSONRPCTransport(interface, http, auth=auth, timeouts=timeouts)
        if binding == "HTTP+JSON":
            return RESTTransport(interface, http, auth=auth, timeouts=timeouts)
        if binding == GRPC_BINDING:
            return transport_class()(interface, auth=auth, timeouts=timeouts)
    if version is not None and version[0] == 0 and binding == "JSONRPC":
        return LegacyTransport(interface, http, auth=auth, timeouts=timeouts)
    raise ValueError(
        f"cannot speak {interface.protocol_binding} {interface.protocol_version or '(no version)'}"
    )
