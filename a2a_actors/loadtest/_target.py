"""Targets: what ``a2a-actors bench TARGET`` points at, resolved to an :class:`Endpoint`.

A target is an agent's base URL, or ``NAME=URL`` to label it in the table. Resolving one
reads its AgentCard with the client's discovery (:func:`a2a_actors.client.discover`) and
picks the interface with :func:`~a2a_actors.client.select_interface`: the card's best of
JSON-RPC and HTTP+JSON, or only the binding ``--binding`` names. Without a card, a target
with ``--binding`` is used as the interface URL itself.

Credentials become plain header lines (and query parameters) baked into every request:
``--api-key`` goes where the card's apiKey scheme says (``X-API-Key`` by default), as the
client places it (:func:`a2a_actors.client._auth.api_key_for_card`); ``--bearer-token``
becomes ``Authorization: Bearer …``; each ``--header 'Name: value'`` is added as is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

from a2a_actors.client._auth import api_key_for_card
from a2a_actors.client._discovery import discover, parse_version, select_interface
from a2a_actors.client._errors import A2AConnectionError
from a2a_actors.protocol._card import AgentCard
from a2a_actors.protocol._errors import A2AError

__all__ = (
    "BINDINGS",
    "BenchError",
    "Credentials",
    "Endpoint",
    "TargetSpec",
    "UsageError",
    "resolve",
)

#: ``--binding`` values and the card's ``protocolBinding`` each stands for.
BINDINGS: dict[str, str] = {"jsonrpc": "JSONRPC", "rest": "HTTP+JSON", "grpc": "GRPC"}


class BenchError(Exception):
    """A problem that stops the benchmark, with a message for the user."""


class UsageError(BenchError):
    """The command line asks for something that cannot be (exit status 2)."""


@dataclass(frozen=True, slots=True)
class TargetSpec:
    """A target as given on the command line."""

    name: str
    url: str

    @classmethod
    def parse(cls, text: str) -> TargetSpec:
        """``URL`` or ``NAME=URL``; the name defaults to the URL's host, port and path."""
        name, sep, url = text.partition("=")
        if not sep or "://" in name:
            name, url = "", text
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(f"target {text!r}: not an http:// or https:// URL (or NAME=URL)")
        return cls(name or (parts.netloc + parts.path.rstrip("/")), url)


@dataclass(frozen=True, slots=True)
class Credentials:
    """What ``--api-key``, ``--bearer-token`` and ``--header`` asked for."""

    api_key: str | None = None
    bearer_token: str | None = None
    headers: tuple[tuple[str, str], ...] = ()

    @staticmethod
    def parse_header(text: str) -> tuple[str, str]:
        """``'Name: value'`` → ``(name, value)``."""
        name, sep, value = text.partition(":")
        if not sep or not name.strip() or any(c in text for c in "\r\n"):
            raise UsageError(f"--header {text!r}: expected 'Name: value' on one line")
        return name.strip(), value.strip()


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A resolved target: where and how to send requests, and what to add to each."""

    name: str
    url: str  #: the interface URL
    binding: str  #: ``jsonrpc`` or ``rest``
    host: str
    port: int
    path: str  #: the interface URL's path, without a trailing slash for REST
    tenant: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    query: tuple[tuple[str, str], ...] = ()
    streaming: bool | None = None  #: the card's streaming capability; None without a card
    card_name: str = field(default="")
    tls: bool = False  #: https: verified against the system's CAs (or ``SSL_CERT_FILE``)

    def to_json(self) -> dict[str, object]:
        """The endpoint as JSON (for the worker processes and the ``--json`` output)."""
        return {
            "name": self.name,
            "url": self.url,
            "binding": self.binding,
            "host": self.host,
            "port": self.port,
            "path": self.path,
            "tenant": self.tenant,
            "headers": [list(h) for h in self.headers],
            "query": [list(q) for q in self.query],
            "streaming": self.streaming,
            "card_name": self.card_name,
            "tls": self.tls,
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Endpoint:
        """Read back what :meth:`to_json` wrote."""
        streaming = data["streaming"]
        return cls(
            name=str(data["name"]),
            url=str(data["url"]),
            binding=str(data["binding"]),
            host=str(data["host"]),
            port=int(str(data["port"])),
            path=str(data["path"]),
            tenant=str(data["tenant"]),
            headers=_pairs(data["headers"]),
            query=_pairs(data["query"]),
            streaming=None if streaming is None else bool(streaming),
            card_name=str(data["card_name"]),
            tls=bool(data["tls"]),
        )


def _pairs(value: object) -> tuple[tuple[str, str], ...]:
    assert isinstance(value, list)
    return tuple((str(name), str(text)) for name, text in value)


async def _card(url: str) -> AgentCard | None:
    try:
        return await discover(url, cache=None, timeout=10.0)
    except A2AConnectionError as exc:
        raise BenchError(f"cannot reach {url}: {exc.message}") from None
    except A2AError:
        return None


async def resolve(spec: TargetSpec, binding: str | None, credentials: Credentials) -> Endpoint:
    """Discover ``spec``'s card and build its :class:`Endpoint` (see the module docstring).

    Raises:
        BenchError: gRPC was asked for, the target cannot be reached, or it has no usable
            interface.
    """
    if binding == "grpc":
        raise UsageError(
            "--binding grpc: a2a-actors bench drives the JSON bindings only (gRPC: "
            "benchmarks/bench_grpc.py); use jsonrpc or rest"
        )
    card = await _card(spec.url)
    if card is None:
        if binding is None:
            raise BenchError(
                f"{spec.url}: no agent card found; pass --binding jsonrpc|rest to send to "
                "this URL as it is"
            )
        url, tenant, chosen = spec.url, "", binding
    else:
        wanted = (BINDINGS[binding],) if binding else (BINDINGS["jsonrpc"], BINDINGS["rest"])
        iface = select_interface(card, bindings=wanted)
        version = parse_version(iface.protocol_version) if iface is not None else None
        if iface is None or version is None or version[0] != 1:
            offered = ", ".join(
                f"{i.protocol_binding} {i.protocol_version}" for i in card.supported_interfaces
            )
            raise BenchError(
                f"{spec.url}: the card offers no A2A 1.x interface over "
                f"{' or '.join(wanted)} (it offers: {offered or 'nothing'})"
            )
        url, tenant = iface.url, iface.tenant
        chosen = "jsonrpc" if iface.protocol_binding.upper() == "JSONRPC" else "rest"
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BenchError(f"{spec.url}: its interface URL {url!r} is not http:// or https://")
    headers = list(credentials.headers)
    query: list[tuple[str, str]] = []
    if credentials.api_key is not None:
        key = api_key_for_card(card, credentials.api_key)
        if key.location == "query":
            query.append((key.name, key.value))
        elif key.location == "cookie":
            headers.append(("Cookie", f"{key.name}={key.value}"))
        else:
            headers.append((key.name, key.value))
    if credentials.bearer_token is not None:
        headers.append(("Authorization", f"Bearer {credentials.bearer_token}"))
    path = parts.path or "/"
    return Endpoint(
        name=spec.name,
        url=url,
        binding=chosen,
        host=parts.hostname,
        port=parts.port or (443 if parts.scheme == "https" else 80),
        tls=parts.scheme == "https",
        path=path.rstrip("/") if chosen == "rest" else path,
        tenant=tenant,
        headers=tuple(headers),
        query=tuple(query),
        streaming=None if card is None else bool(card.capabilities.streaming),
        card_name="" if card is None else card.name,
    )
