"""Finding an agent: fetch and cache its AgentCard, then choose the interface to speak.

Fetching (:func:`discover`): ``GET {base}/.well-known/agent-card.json`` (the 1.0 and 0.3
path), and when that is 404/405/410, the legacy ``{base}/.well-known/agent.json`` (0.2.x). A
URL that already ends in ``.json`` is fetched as is. The request carries ``A2A-Version: 1.0``
and no credentials. Both 1.0 cards and 0.3-shaped cards (top-level ``url``,
``preferredTransport``, ``additionalInterfaces``) are accepted; the latter are translated
by :func:`a2a_actors.protocol._legacy_card.card_from_v0_3` into a 1.0 card whose interfaces
say ``0.3``.

Caching: a :class:`CardCache` remembers each card with its ``ETag`` / ``Last-Modified``; the
next fetch of the same URL sends ``If-None-Match`` / ``If-Modified-Since`` and a ``304`` keeps
the cached card. By default one process-wide cache is shared.

Choosing (:func:`select_interface`), among interfaces whose binding the client speaks:

1. any ``1.x`` interface beats a ``0.x`` one (we speak 1.0; 0.3 only as a fallback);
2. then the caller's binding preference; when the caller states none
   (:func:`auto_bindings`): JSON-RPC, then HTTP+JSON, and gRPC when the ``grpc`` extra is
   installed — first when the card lists it first (its preferred interface), else last
   (used when it is the only one);
3. then ``1.0`` before later ``1.x`` (lowest first), and for 0.x the newest (0.2 at least);
4. then the card's own order.

0.x interfaces are used only with the JSON-RPC binding. When nothing qualifies,
:func:`resolve_interface` returns the ``POST /tasks/send`` fallback interface, except for a
card that only speaks gRPC without the ``grpc`` extra (a one-line error names it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import httpx
import msgspec

from a2a_actors.client._errors import AgentCardError
from a2a_actors.client._transports.grpc_binding import GRPC_BINDING, grpc_installed, missing_extra
from a2a_actors.client._transports.transport import map_httpx_errors
from a2a_actors.protocol import codec
from a2a_actors.protocol._card import AgentCard, AgentInterface
from a2a_actors.protocol._legacy_card import card_from_v0_3

__all__ = (
    "CARD_PATH",
    "DEFAULT_BINDINGS",
    "DEFAULT_CARD_CACHE",
    "LEGACY_CARD_PATH",
    "TASKS_SEND_BINDING",
    "CachedCard",
    "auto_bindings",
    "CardCache",
    "discover",
    "parse_card",
    "parse_version",
    "resolve_interface",
    "select_interface",
)

CARD_PATH = "/.well-known/agent-card.json"
LEGACY_CARD_PATH = "/.well-known/agent.json"
DEFAULT_BINDINGS: tuple[str, ...] = ("JSONRPC", "HTTP+JSON")
#: ``protocolBinding`` of the fallback interface: JSON-RPC ``tasks/send`` POSTed to
#: ``{url}/tasks/send`` (pre-0.2 agents).
TASKS_SEND_BINDING = "tasks/send"
_NOT_THERE = frozenset({404, 405, 410})
_VERSION = re.compile(r"^\s*v?(\d+)(?:\.(\d+))?")


@dataclass(frozen=True, slots=True)
class CachedCard:
    """A card with the validators it was served with."""

    card: AgentCard
    etag: str | None = None
    last_modified: str | None = None


class CardCache:
    """Cards by URL, revalidated with ``If-None-Match`` / ``If-Modified-Since``.

    Plain dict operations only, so it is safe to share between tasks and event loops.
    """

    def __init__(self) -> None:
        self._cards: dict[str, CachedCard] = {}

    def get(self, url: str) -> CachedCard | None:
        """The cached entry for ``url``, if any."""
        return self._cards.get(url)

    def put(self, url: str, entry: CachedCard) -> None:
        """Remember ``entry`` for ``url``."""
        self._cards[url] = entry

    def clear(self) -> None:
        """Forget every card."""
        self._cards.clear()


#: The process-wide cache :func:`discover` uses unless told otherwise.
DEFAULT_CARD_CACHE = CardCache()


def parse_card(data: bytes) -> AgentCard:
    """Decode a 1.0 card, or a 0.3-shaped one translated to 1.0.

    Raises:
        AgentCardError: The bytes are not a card in either shape.
    """
    try:
        obj: Any = codec.parse(data)
    except msgspec.DecodeError as exc:
        raise AgentCardError(f"agent card is not JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise AgentCardError("agent card is not a JSON object")
    try:
        # null means absent: a card with "supportedInterfaces": null is read as 0.3
        if any(obj.get(k) is not None for k in ("supportedInterfaces", "supported_interfaces")):
            return codec.convert(obj, AgentCard)
        return card_from_v0_3(obj)
    except (msgspec.ValidationError, ValueError, TypeError, KeyError) as exc:
        raise AgentCardError(f"invalid agent card: {exc}") from None


async def _fetch(
    url: str, http: httpx.AsyncClient, cache: CardCache | None, timeout: httpx.Timeout
) -> AgentCard | None:
    headers = {"A2A-Version": "1.0", "Accept": "application/json"}
    cached = cache.get(url) if cache is not None else None
    if cached is not None:
        if cached.etag:
            headers["If-None-Match"] = cached.etag
        if cached.last_modified:
            headers["If-Modified-Since"] = cached.last_modified
    with map_httpx_errors(url):
        response = await http.get(url, headers=headers, timeout=timeout, follow_redirects=True)
    if response.status_code == 304 and cached is not None:
        return cached.card
    if response.status_code in _NOT_THERE:
        return None
    if response.status_code != 200:
        raise AgentCardError(f"HTTP {response.status_code} fetching the agent card at {url}")
    card = parse_card(response.content)
    if cache is not None:
        entry = CachedCard(
            card, response.headers.get("etag"), response.headers.get("last-modified")
        )
        cache.put(url, entry)
    return card


async def discover(
    url: str,
    *,
    http: httpx.AsyncClient | None = None,
    cache: CardCache | None = DEFAULT_CARD_CACHE,
    timeout: float | httpx.Timeout = 30.0,
) -> AgentCard:
    """Fetch the AgentCard of the agent at ``url`` (see the module docstring).

    Args:
        url: The agent's base URL, or the full URL of a card (ending in ``.json``).
        http: The client to fetch with (borrowed); a temporary one otherwise.
        cache: Where cards are cached and revalidated; ``None`` disables caching.
        timeout: The fetch timeout.

    Raises:
        AgentCardError: No card at either path, an error status, or an unparsable card.
        A2AConnectionError: The agent could not be reached.
    """
    base = url.rstrip("/")
    candidates = [url] if base.endswith(".json") else [base + CARD_PATH, base + LEGACY_CARD_PATH]
    tmo = timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout)
    own = http is None
    client = http if http is not None else httpx.AsyncClient()
    try:
        for candidate in candidates:
            card = await _fetch(candidate, client, cache, tmo)
            if card is not None:
                return card
    finally:
        if own:
            await client.aclose()
    raise AgentCardError(f"no agent card at {' or '.join(candidates)}")


def parse_version(version: str) -> tuple[int, int] | None:
    """``"1.0"`` → ``(1, 0)``, ``"0.3.0"`` → ``(0, 3)``; ``None`` when unparsable."""
    m = _VERSION.match(version)
    if m is None:
        return None
    return int(m.group(1)), int(m.group(2) or 0)


def select_interface(
    card: AgentCard, *, bindings: tuple[str, ...] = DEFAULT_BINDINGS
) -> AgentInterface | None:
    """The best interface of ``card`` for a client speaking ``bindings`` (in preference order).

    Returns:
        The chosen interface, or ``None`` when none is usable (see the module docstring).
    """
    wanted = [b.upper() for b in bindings]
    best: tuple[tuple[int, int, int, int], AgentInterface] | None = None
    for index, iface in enumerate(card.supported_interfaces):
        binding = iface.protocol_binding.upper()
        version = parse_version(iface.protocol_version)
        if binding not in wanted or version is None:
            continue
        major, minor = version
        if major == 1:
            key = (0, wanted.index(binding), minor, index)
        elif major == 0 and minor >= 2 and binding == "JSONRPC":
            key = (1, wanted.index(binding), -minor, index)
        else:
            continue
        if best is None or key < best[0]:
            best = (key, iface)
    return best[1] if best is not None else None


def auto_bindings(card: AgentCard) -> tuple[str, ...]:
    """The binding preference for ``card`` when the caller states none (module docstring)."""
    if not grpc_installed():
        return DEFAULT_BINDINGS
    first = next((i for i in card.supported_interfaces if _major(i.protocol_version) == 1), None)
    if first is not None and first.protocol_binding.upper() == GRPC_BINDING:
        return (GRPC_BINDING, *DEFAULT_BINDINGS)
    return (*DEFAULT_BINDINGS, GRPC_BINDING)


def _major(version: str) -> int | None:
    parsed = parse_version(version)
    return None if parsed is None else parsed[0]


def resolve_interface(
    card: AgentCard, *, base_url: str, bindings: tuple[str, ...] | None = None
) -> AgentInterface:
    """:func:`select_interface`, or the ``tasks/send`` fallback when it finds nothing.

    ``bindings`` ``None`` means :func:`auto_bindings`. The fallback goes to the first
    HTTP(S) interface URL of the card, else ``base_url``.

    Raises:
        GRPCUnavailableError: With ``bindings`` ``None``, the card's 1.x interfaces are all
            gRPC and the ``grpc`` extra is not installed.
    """
    wanted = auto_bindings(card) if bindings is None else bindings
    chosen = select_interface(card, bindings=wanted)
    if chosen is not None:
        return chosen
    if bindings is None and any(
        i.protocol_binding.upper() == GRPC_BINDING and _major(i.protocol_version) == 1
        for i in card.supported_interfaces
    ):
        raise missing_extra()
    url = next(
        (i.url for i in card.supported_interfaces if i.url.startswith(("http://", "https://"))),
        base_url,
    )
    return AgentInterface(url=url, protocol_binding=TASKS_SEND_BINDING, protocol_version="0.1")
