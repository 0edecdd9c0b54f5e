"""The AgentCard as served: built from the agent's declaration and the server's real setup.

Theory of operation
-------------------
:class:`Cards` is built once per app. The parts of the card that do not depend on the
request (skills, capabilities, security schemes) are computed up front; the interface URLs
depend on the base URL, which is ``ServerConfig.public_url`` or, when unset, the request's own
scheme and host. The encoded card is cached per base URL together with its validators:

* ``ETag``: a weak tag, a hash of the exact bytes served;
* ``Last-Modified``: when the app was created (the card never changes afterwards);
* ``Cache-Control: public, max-age=<ServerConfig.card_max_age>``.

Capabilities are never configured separately from what is served: ``streaming`` is whether
the streaming methods answer, ``pushNotifications`` whether the push-config methods do,
``extendedAgentCard`` whether GetExtendedAgentCard is declared, and ``extensions`` is the
agent's own declaration.

With ``ServerConfig.card_signing`` both cards are signed
(:mod:`a2a_actors.server._auth.card_signing`), once per base URL: the signed card is kept, so its
bytes and ``ETag`` do not change between requests.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

import msgspec

from a2a_actors.protocol import codec
from a2a_actors.protocol._card import (
    GRPC,
    HTTP_JSON,
    JSONRPC,
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
)
from a2a_actors.protocol._errors import (
    ExtendedAgentCardNotConfiguredError,
    UnsupportedOperationError,
)
from a2a_actors.server._addresses import authority
from a2a_actors.server._auth.credentials import Authenticator

if TYPE_CHECKING:
    from a2a_actors.server._auth.card_signing import CardSigner
from a2a_actors.server._config.config import ServerConfig
from a2a_actors.server._skills import load_skills

__all__ = ("AgentDeclaration", "Cards", "RenderedCard")

_CACHE_LIMIT = 32


class AgentDeclaration(Protocol):
    """What the card needs from an agent (the runtime's ``Agent`` provides it)."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def skills(self) -> Sequence[AgentSkill]: ...
    @property
    def extensions(self) -> Sequence[AgentExtension]: ...
    @property
    def input_modes(self) -> Sequence[str]: ...
    @property
    def output_modes(self) -> Sequence[str]: ...


@dataclass(frozen=True, slots=True)
class RenderedCard:
    """The bytes of a card and its HTTP cache validators."""

    body: bytes
    etag: str
    last_modified: str
    cache_control: str

    def matches(self, if_none_match: str | None, if_modified_since: str | None) -> bool:
        """Whether a conditional GET with these headers may be answered 304."""
        if if_none_match is not None:
            tags = {t.strip().removeprefix("W/") for t in if_none_match.split(",")}
            return "*" in tags or self.etag.removeprefix("W/") in tags
        if if_modified_since:
            try:
                since = email.utils.parsedate_to_datetime(if_modified_since)
                modified = email.utils.parsedate_to_datetime(self.last_modified)
            except (TypeError, ValueError, IndexError):
                return False
            if since.tzinfo is None:
                since = since.replace(tzinfo=dt.UTC)
            return modified <= since
        return False


#: Turns a 1.0 card (with a 0.3 interface) into the dual-version (1.0 + 0.3) JSON object.
LegacyCardHook = Callable[[AgentCard], dict[str, Any]]


class Cards:
    """Builds, encodes and caches the public and extended AgentCards.

    Args:
        agent: The agent's declaration (name, skills, extensions, modes).
        config: The server configuration (capabilities, URLs, caching, skills folders).
        auth: Supplies the security schemes and requirements.
        legacy_card: When set, applied to the encoded public card to add the 0.3 fields.

    Raises:
        SkillFileError: A ``SKILL.md`` in ``config.skill_dirs`` is malformed.
    """

    def __init__(
        self,
        agent: AgentDeclaration,
        config: ServerConfig,
        auth: Authenticator,
        *,
        legacy_card: LegacyCardHook | None = None,
    ) -> None:
        self._agent = agent
        self._config = config
        self._legacy_card = legacy_card
        skills = list(agent.skills)
        for folder in config.skill_dirs:
            skills.extend(load_skills(folder))
        self._skills = tuple(skills)
        self._capabilities = AgentCapabilities(
            streaming=config.streaming,
            push_notifications=config.push_notifications,
            extensions=tuple(agent.extensions),
            extended_agent_card=config.extended_card_declared,
        )
        self._schemes = auth.security_schemes()
        self._requirements = auth.security_requirements()
        now = dt.datetime.now(dt.UTC).replace(microsecond=0)
        self._last_modified = email.utils.format_datetime(now, usegmt=True)
        self._rendered: dict[str, RenderedCard] = {}
        self._grpc: tuple[str, str | None] | None = None  # (listening address, advertised)
        self._signer: CardSigner | None = None
        self._signed: dict[tuple[str, str], AgentCard] = {}
        if config.card_signing is not None:
            from a2a_actors.server._auth.card_signing import (
                CardSigner,  # PyJWT, rfc8785: the "signing" extra
            )

            self._signer = CardSigner(config.card_signing)

    @property
    def declared_extensions(self) -> frozenset[str]:
        """URIs of every extension on the card."""
        return frozenset(e.uri for e in self._capabilities.extensions)

    @property
    def required_extensions(self) -> frozenset[str]:
        """URIs of the card's ``required: true`` extensions."""
        return frozenset(e.uri for e in self._capabilities.extensions if e.required)

    def base_url(self, request_base: str) -> str:
        """The advertised base URL: the configured public URL, else the request's."""
        return (self._config.public_url or request_base).rstrip("/")

    def interfaces(self, base: str, *, legacy: bool = False) -> tuple[AgentInterface, ...]:
        """Every interface served under ``base`` (1.0 JSON-RPC first)."""
        rest = base + self._config.rest_prefix
        found = [
            AgentInterface(url=f"{base}/", protocol_binding=JSONRPC, protocol_version="1.0"),
            AgentInterface(url=rest, protocol_binding=HTTP_JSON, protocol_version="1.0"),
        ]
        if self._grpc is not None:
            found.append(
                AgentInterface(
                    url=self._grpc_url(base), protocol_binding=GRPC, protocol_version="1.0"
                )
            )
        if legacy:
            found.append(
                AgentInterface(url=f"{base}/", protocol_binding=JSONRPC, protocol_version="0.3")
            )
        return tuple(found)

    @property
    def grpc_address(self) -> str | None:
        """The address the gRPC binding listens on (``host:port``); None: not served."""
        return None if self._grpc is None else self._grpc[0]

    def declare_grpc(self, address: str, *, advertised: str | None = None) -> None:
        """List the gRPC interface, listening on ``address`` (``host:port``), on every card
        from now on: its ``url`` is ``advertised``, else the card's base URL host with the
        port of ``address`` (docs/grpc.md)."""
        self._grpc = (address, advertised)
        self._rendered.clear()
        self._signed.clear()

    def _grpc_url(self, base: str) -> str:
        address, advertised = self._grpc or ("", None)
        if advertised is not None:
            return advertised
        host = urlsplit(base).hostname or "localhost"
        return authority(host, address.rpartition(":")[2])

    def public(self, base: str) -> AgentCard:
        """The public card for base URL ``base``."""
        agent, config = self._agent, self._config
        card = AgentCard(
            name=agent.name,
            description=agent.description,
            version=agent.version,
            supported_interfaces=self.interfaces(base, legacy=self._legacy_card is not None),
            capabilities=self._capabilities,
            default_input_modes=tuple(agent.input_modes) or ("text/plain",),
            default_output_modes=tuple(agent.output_modes) or ("text/plain",),
            skills=self._skills,
            provider=config.provider,
            documentation_url=config.documentation_url,
            icon_url=config.icon_url,
            security_schemes=self._schemes,
            security_requirements=self._requirements,
        )
        return self._signed_once("public", base, card)

    def _signed_once(self, kind: str, base: str, card: AgentCard) -> AgentCard:
        """``card`` as served: signed, once per kind and base URL, when signing is on."""
        if self._signer is None:
            return card
        signed = self._signed.get((kind, base))
        if signed is None:
            if len(self._signed) >= _CACHE_LIMIT:
                self._signed.clear()
            signed = self._signed[kind, base] = self._signer.sign(card)
        return signed

    def extended(self, base: str) -> AgentCard:
        """The extended card for base URL ``base``.

        Raises:
            UnsupportedOperationError: The card does not declare an extended card (-32004).
            ExtendedAgentCardNotConfiguredError: Declared but not configured (-32007).
        """
        if not self._config.extended_card_declared:
            raise UnsupportedOperationError("This agent declares no extended agent card")
        extra = self._config.extended_card
        if extra is None:
            raise ExtendedAgentCardNotConfiguredError()
        card = self.public(base)
        extended = msgspec.structs.replace(
            card,
            supported_interfaces=self.interfaces(base),
            name=extra.name or card.name,
            description=extra.description or card.description,
            skills=(*card.skills, *extra.skills),
            signatures=(),
        )
        return self._signed_once("extended", base, extended)

    def rendered(self, request_base: str) -> RenderedCard:
        """The encoded public card for a request whose own base URL is ``request_base``."""
        base = self.base_url(request_base)
        cached = self._rendered.get(base)
        if cached is not None:
            return cached
        card = self.public(base)
        if self._legacy_card is not None:
            body = codec.encode(self._legacy_card(card))
        else:
            body = codec.encode(card)
        rendered = RenderedCard(
            body=body,
            etag=f'W/"{hashlib.sha256(body).hexdigest()[:32]}"',
            last_modified=self._last_modified,
            cache_control=f"public, max-age={self._config.card_max_age}",
        )
        if len(self._rendered) >= _CACHE_LIMIT:
            self._rendered.clear()
        self._rendered[base] = rendered
        return rendered
