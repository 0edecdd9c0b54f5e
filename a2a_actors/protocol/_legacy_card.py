"""AgentCard translation between A2A 0.3 and A2A 1.0 (pure functions, no I/O).

Theory of operation
-------------------
A 1.0 card lists its endpoints in ``supportedInterfaces``; a 0.3 card names one ``url`` and
``preferredTransport`` at the top level plus ``additionalInterfaces``, says
``supportsAuthenticatedExtendedCard`` instead of ``capabilities.extendedAgentCard``, writes
security schemes OpenAPI-style (tagged by ``type``) instead of as one-key wrappers, and
requirements as ``{"name": [scopes]}`` instead of ``{"schemes": {"name": {"list": …}}}``.

Serving both versions from one document (reference §8.2): :func:`card_to_v0_3` builds the
0.3 view from the interfaces whose ``protocolVersion`` is 0.3.x (or empty, as a2a-sdk
reads it); the first becomes ``url``/``preferredTransport``. :func:`dual_version_card` is
the 1.0 card with the 0.3 view merged in wherever the 1.0 card has no key of that name
(objects recursively, lists element by element), which is the document a2a-sdk 1.3 serves:
1.0 clients ignore the legacy keys and 0.3 clients ignore the 1.0 ones. A card without a
0.3 interface has no 0.3 view and is served as pure 1.0. Lossy points, as in a2a-sdk: the
0.3 view of a device-code OAuth scheme has empty ``flows`` and ``pkceRequired`` is dropped.

Reading: :func:`card_from_v0_3` accepts a pure 0.3 card, a dual card or a 1.0 card; 1.0
keys win wherever both spellings are present, and a ``null`` member counts as absent (0.3
Python agents write one for every unset field). A 0.3 OAuth scheme with several flows
keeps only the first of authorizationCode, clientCredentials, implicit, password (1.0
allows one flow per scheme); one with no flow at all (``"flows": {}``) is left out.
"""

from __future__ import annotations

from typing import Any

import msgspec

from a2a_actors.protocol import codec
from a2a_actors.protocol._card import (
    AgentCard,
    OAuth2SecurityScheme,
    SecurityRequirement,
    SecurityScheme,
)

__all__ = (
    "card_from_v0_3",
    "card_to_v0_3",
    "card_to_v0_3_fields",
    "dual_version_card",
    "is_v0_3_version",
)

#: 0.3 scheme ``type`` → 1.0 wrapper key.
_SCHEME_WRAPPERS = {
    "apiKey": "apiKeySecurityScheme",
    "http": "httpAuthSecurityScheme",
    "oauth2": "oauth2SecurityScheme",
    "openIdConnect": "openIdConnectSecurityScheme",
    "mutualTLS": "mtlsSecurityScheme",
}
_WRAPPER_KEYS = frozenset(_SCHEME_WRAPPERS.values())
#: The flows 0.3 knows, in the order a 0.3 scheme with several of them is reduced to one.
_V0_3_FLOWS = ("authorizationCode", "clientCredentials", "implicit", "password")
#: The fields each 0.3 flow requires (absent from our 1.0 output when empty).
_FLOW_REQUIRED = {
    "authorizationCode": ("authorizationUrl", "tokenUrl"),
    "clientCredentials": ("tokenUrl",),
    "implicit": ("authorizationUrl",),
    "password": ("tokenUrl",),
}


def is_v0_3_version(version: str) -> bool:
    """Whether an interface's ``protocolVersion`` is served with 0.3 semantics (0.3 ≤ v < 1).

    An empty version counts as 0.3, as in a2a-sdk; unparsable versions do not.
    """
    if not version:
        return True
    head = version.split(".")
    try:
        major, minor = int(head[0]), int(head[1]) if len(head) > 1 else 0
    except ValueError:
        return False
    return major == 0 and minor >= 3


def card_to_v0_3(card: AgentCard) -> dict[str, Any] | None:
    """The 0.3 form of ``card`` (JSON builtins), or ``None`` when it has no 0.3 interface."""
    legacy = [i for i in card.supported_interfaces if is_v0_3_version(i.protocol_version)]
    if not legacy:
        return None
    primary, *rest = legacy
    caps = card.capabilities
    capabilities: dict[str, Any] = {}
    if caps.streaming is not None:
        capabilities["streaming"] = caps.streaming
    if caps.push_notifications is not None:
        capabilities["pushNotifications"] = caps.push_notifications
    if caps.extensions:
        capabilities["extensions"] = [
            {**_json(e), "uri": e.uri, "required": e.required} for e in caps.extensions
        ]
    out: dict[str, Any] = {
        "name": card.name,
        "description": card.description,
        "version": card.version,
        "url": primary.url,
        "preferredTransport": primary.protocol_binding,
        "protocolVersion": primary.protocol_version or "0.3",
        "capabilities": capabilities,
        "defaultInputModes": list(card.default_input_modes),
        "defaultOutputModes": list(card.default_output_modes),
        "skills": [_skill_to_v0_3(s) for s in card.skills],
    }
    if rest:
        out["additionalInterfaces"] = [
            {"url": i.url, "transport": i.protocol_binding} for i in rest
        ]
    if card.provider is not None:
        out["provider"] = _json(card.provider)
    if card.documentation_url is not None:
        out["documentationUrl"] = card.documentation_url
    if card.icon_url is not None:
        out["iconUrl"] = card.icon_url
    if caps.extended_agent_card:
        out["supportsAuthenticatedExtendedCard"] = True
    if card.security_schemes:
        out["securitySchemes"] = {
            name: _scheme_to_v0_3(s) for name, s in card.security_schemes.items()
        }
    if card.security_requirements:
        out["security"] = [_requirement_to_v0_3(r) for r in card.security_requirements]
    if card.signatures:
        out["signatures"] = _json(card.signatures)
    return out


def card_to_v0_3_fields(card: AgentCard) -> dict[str, Any]:
    """The legacy keys a dual-version card adds to the 1.0 card (``{}`` without 0.3).

    Top-level ``url``, ``preferredTransport``, ``protocolVersion``,
    ``additionalInterfaces``, ``supportsAuthenticatedExtendedCard`` and ``security``; inside
    each security scheme its 0.3 body (``type``, ``in``, ``scheme``…); inside each skill its
    ``security``. Lists are given element by element (``{}`` where nothing is added).
    """
    legacy = card_to_v0_3(card)
    if legacy is None:
        return {}
    missing = _missing(_json(card), legacy)
    assert isinstance(missing, dict)
    return missing


def dual_version_card(card: AgentCard) -> dict[str, Any]:
    """The card as JSON builtins that both 1.0 and 0.3 clients read (see module docstring)."""
    out: dict[str, Any] = _json(card)
    _merge(out, card_to_v0_3_fields(card))
    return out


def card_from_v0_3(obj: Any) -> AgentCard:
    """Parse a 0.3-shaped (or dual, or 1.0) card from JSON builtins into an AgentCard.

    0.3 interfaces get the card's ``protocolVersion`` as major.minor (``"0.3"`` when absent).

    Raises:
        msgspec.ValidationError: The card does not fit (the message names the path).
    """
    if not isinstance(obj, dict):
        return codec.convert(obj, AgentCard)
    data = dict(obj)
    caps = data.get("capabilities")
    if data.get("supportsAuthenticatedExtendedCard") is True and isinstance(caps, dict):
        data["capabilities"] = {"extendedAgentCard": True, **caps}
    # The 1.0 members are looked up by value: a null one is absent (codec.convert drops
    # the nulls this translation leaves, at every depth).
    if data.get("supportedInterfaces") is None and isinstance(data.get("url"), str):
        data["supportedInterfaces"] = _interfaces_from_v0_3(data)
    if data.get("securityRequirements") is None and isinstance(data.get("security"), list):
        data["securityRequirements"] = [_requirement_from_v0_3(r) for r in data["security"]]
    if isinstance(data.get("skills"), list):
        data["skills"] = [_skill_from_v0_3(s) for s in data["skills"]]
    schemes = data.get("securitySchemes")
    if isinstance(schemes, dict):
        converted = {k: _scheme_from_v0_3(k, v) for k, v in schemes.items()}
        data["securitySchemes"] = {k: v for k, v in converted.items() if v is not None}
    return codec.convert(data, AgentCard)


# -- 1.0 → 0.3 ------------------------------------------------------------------------------


def _skill_to_v0_3(skill: Any) -> dict[str, Any]:
    out: dict[str, Any] = _json(skill)
    requirements = out.pop("securityRequirements", None)
    if requirements is not None:
        out["security"] = [_requirement_to_v0_3(r) for r in skill.security_requirements]
    return out


def _requirement_to_v0_3(req: SecurityRequirement) -> dict[str, list[str]]:
    return {name: list(scopes.list) for name, scopes in req.schemes.items()}


def _scheme_to_v0_3(scheme: SecurityScheme) -> dict[str, Any]:
    if (key := scheme.api_key_security_scheme) is not None:
        body: dict[str, Any] = {"type": "apiKey", "in": key.location, "name": key.name}
        return body | _nonempty(description=key.description)
    if (http := scheme.http_auth_security_scheme) is not None:
        body = {"type": "http", "scheme": http.scheme}
        return body | _nonempty(description=http.description, bearerFormat=http.bearer_format)
    if (oauth := scheme.oauth2_security_scheme) is not None:
        body = {"type": "oauth2", "flows": _flows_to_v0_3(oauth)}
        return body | _nonempty(
            description=oauth.description, oauth2MetadataUrl=oauth.oauth2_metadata_url
        )
    if (oidc := scheme.open_id_connect_security_scheme) is not None:
        body = {"type": "openIdConnect", "openIdConnectUrl": oidc.open_id_connect_url}
        return body | _nonempty(description=oidc.description)
    mtls = scheme.mtls_security_scheme
    assert mtls is not None  # exactly one member, checked when the scheme was built
    return {"type": "mutualTLS"} | _nonempty(description=mtls.description)


def _flows_to_v0_3(oauth: OAuth2SecurityScheme) -> dict[str, Any]:
    flows: dict[str, Any] = _json(oauth.flows)
    out: dict[str, Any] = {}
    for name in _V0_3_FLOWS:  # a device-code flow has no 0.3 form: flows stay empty
        flow = flows.get(name)
        if flow is not None:
            flow.pop("pkceRequired", None)
            flow.setdefault("scopes", {})
            for field in _FLOW_REQUIRED[name]:
                flow.setdefault(field, "")
            out[name] = flow
    return out


def _json(obj: object) -> Any:
    """``obj`` as plain JSON builtins (lists, not tuples), exactly as it goes on the wire."""
    return codec.parse(codec.encode(obj))


def _nonempty(**fields: str) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v}


def _missing(base: Any, extra: Any) -> Any:
    """What of ``extra`` a merge into ``base`` adds (lists merge element by element)."""
    if isinstance(base, dict) and isinstance(extra, dict):
        out: dict[str, Any] = {}
        for key, value in extra.items():
            if key not in base:
                out[key] = value
            elif (sub := _missing(base[key], value)) not in (None, {}, []):
                out[key] = sub
        return out
    if isinstance(base, list) and isinstance(extra, list):
        items = [_missing(b, e) or {} for b, e in zip(base, extra, strict=False)]
        return items if any(items) else None
    return None


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> None:
    for key, value in extra.items():
        if key not in base:
            base[key] = value
        elif isinstance(value, dict) and isinstance(base[key], dict):
            _merge(base[key], value)
        elif isinstance(value, list) and isinstance(base[key], list):
            for b, e in zip(base[key], value, strict=False):
                if isinstance(b, dict) and isinstance(e, dict):
                    _merge(b, e)


# -- 0.3 → 1.0 ------------------------------------------------------------------------------


def _interfaces_from_v0_3(data: dict[str, Any]) -> list[Any]:
    version = _major_minor(data.get("protocolVersion"))
    found: list[Any] = [
        {
            "url": data["url"],
            "protocolBinding": data.get("preferredTransport") or "JSONRPC",
            "protocolVersion": version,
        }
    ]
    extra = data.get("additionalInterfaces")
    for iface in extra if isinstance(extra, list) else ():
        if isinstance(iface, dict):
            iface = {
                "url": iface.get("url"),
                "protocolBinding": iface.get("transport"),
                "protocolVersion": version,
            }
        if iface not in found:  # 0.3 cards usually repeat the main interface here
            found.append(iface)
    return found


def _major_minor(version: Any) -> str:
    if isinstance(version, str) and version.count(".") >= 1:
        return ".".join(version.split(".")[:2])
    return "0.3"


def _requirement_from_v0_3(req: Any) -> Any:
    if not isinstance(req, dict) or "schemes" in req:
        return req
    return {"schemes": {name: {"list": scopes} for name, scopes in req.items()}}


def _skill_from_v0_3(skill: Any) -> Any:
    if not isinstance(skill, dict) or skill.get("securityRequirements") is not None:
        return skill
    security = skill.get("security")
    if not isinstance(security, list):
        return skill
    return {**skill, "securityRequirements": [_requirement_from_v0_3(r) for r in security]}


def _scheme_from_v0_3(name: str, scheme: Any) -> Any:
    if not isinstance(scheme, dict):
        return scheme
    wrapped = {k: v for k, v in scheme.items() if k in _WRAPPER_KEYS and v is not None}
    if wrapped:  # a 1.0 (or dual) scheme: the wrapper wins
        return wrapped
    kind = scheme.get("type")
    wrapper = _SCHEME_WRAPPERS.get(kind) if isinstance(kind, str) else None
    if wrapper is None:
        raise msgspec.ValidationError(
            f"Unknown security scheme type {kind!r} - at `$.securitySchemes.{name}.type`"
        )
    body = {k: v for k, v in scheme.items() if k != "type" and v is not None}
    if "in" in body:
        body["location"] = body.pop("in")
    flows = body.get("flows")
    if isinstance(flows, dict):
        first = next((f for f in _V0_3_FLOWS if flows.get(f) is not None), None)
        if first is None:  # e.g. the 0.3 view of a device-code scheme: nothing to use
            return None
        body["flows"] = {first: flows[first]}
    return {wrapper: body}
