"""Request checks that come before the protocol decodes anything.

Both bindings apply them in the same order, each failure with its own answer (see
docs/server.md): method (405, by routing), credentials (401, no body read), ``Content-Type``
(-32005 / HTTP 415), body size (HTTP 413, without reading an oversized body), then the
protocol's own decoding (-32700, -32600), ``A2A-Version`` (-32009), method (-32601) and
params (-32602).

Every failure raised here is an :class:`HTTPRefusal` (an A2A error plus the HTTP status to
answer with, when that differs from the error table's) or an A2A error itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

from werkzeug.exceptions import RequestEntityTooLarge

from a2a_actors.protocol._errors import (
    A2AError,
    ContentTypeNotSupportedError,
    PayloadTooLargeError,
    VersionNotSupportedError,
)

__all__ = (
    "FORWARDED_HEADERS",
    "forwarded_headers",
    "LEGACY_VERSION",
    "HTTPRefusal",
    "HeaderLookup",
    "Lookup",
    "check_content_type",
    "is_legacy",
    "is_supported_v1",
    "read_body",
    "requested_extensions",
    "requested_version",
    "version_error",
)

#: The version a request without (or with an empty) ``A2A-Version`` speaks.
LEGACY_VERSION = "0.3"

_JSON_TYPES = frozenset({"application/json", "application/a2a+json"})
_VERSION = re.compile(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?")


@dataclass(slots=True)
class HTTPRefusal(Exception):
    """A request refused at the HTTP level: ``error`` answered with ``status``.

    Attributes:
        error: The A2A error to put in the body.
        status: The HTTP status (overrides the error table's for this answer).
        headers: Extra response headers (``WWW-Authenticate``, ``Retry-After``).
    """

    error: A2AError
    status: int
    headers: dict[str, str] = field(default_factory=dict)


def check_content_type(content_type: str | None) -> None:
    """Accept JSON bodies only.

    A missing ``Content-Type`` is accepted (the body must still be JSON); ``application/json``,
    ``application/a2a+json`` and any ``+json`` type are accepted, with any parameters.

    Raises:
        ContentTypeNotSupportedError: The declared type is not JSON.
    """
    if content_type is None or not content_type.strip():
        return
    mime = content_type.split(";", 1)[0].strip().lower()
    if mime in _JSON_TYPES or mime.endswith("+json"):
        return
    raise ContentTypeNotSupportedError(
        f"Content-Type {mime!r} is not supported; send application/json",
        metadata={"contentType": mime[:100]},
    )


class Lookup(Protocol):
    """Headers or query arguments: anything with ``get(name)``."""

    def get(self, key: str, /) -> str | None: ...


class HeaderLookup(Lookup, Protocol):
    """Request headers: ``get(name)`` (first value) and ``getlist(name)``, case-insensitive."""

    def getlist(self, key: str, /) -> list[str]: ...


class _Body(Protocol):
    def __aiter__(self) -> _Body: ...
    async def __anext__(self) -> bytes: ...


def _too_large(limit: int) -> HTTPRefusal:
    return HTTPRefusal(
        PayloadTooLargeError(
            f"Request body exceeds the limit of {limit} bytes (serve --max-body-bytes)"
        ),
        413,
    )


async def read_body(content_length: int | None, body: _Body, limit: int) -> bytes:
    """Read a request body of at most ``limit`` bytes.

    ``Content-Length`` is checked first, so an announced oversized body is refused without
    reading any of it; otherwise chunks are counted as they stream in and reading stops at
    the first chunk past the limit.

    Raises:
        HTTPRefusal: Status 413 when the body is (or announces to be) too large.
    """
    if content_length is not None and content_length > limit:
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in body:
            size += len(chunk)
            if size > limit:
                raise _too_large(limit)
            chunks.append(chunk)
    except RequestEntityTooLarge:
        raise _too_large(limit) from None
    return b"".join(chunks)


def requested_version(headers: Lookup, query: Lookup) -> str:
    """The A2A version a request asks for: header, then ``?A2A-Version=``, else ``"0.3"``."""
    value = (headers.get("A2A-Version") or "").strip()
    if not value:
        value = (query.get("A2A-Version") or query.get("a2a-version") or "").strip()
    return value or LEGACY_VERSION


def is_supported_v1(version: str) -> bool:
    """Whether ``version`` is any 1.x (``1``, ``1.0``, ``1.0.3``, ``1.1``), as the SDK accepts."""
    m = _VERSION.fullmatch(version)
    return m is not None and int(m.group(1)) == 1


def is_legacy(version: str) -> bool:
    """Whether ``version`` is 0.3 (the version of a request without the header)."""
    m = _VERSION.fullmatch(version)
    return m is not None and int(m.group(1)) == 0 and m.group(2) == "3"


def version_error(version: str) -> VersionNotSupportedError:
    """The -32009 answer for ``version``."""
    shown = version[:32]
    return VersionNotSupportedError(
        f"A2A version {shown!r} is not supported; send A2A-Version: 1.0",
        metadata={"version": shown},
    )


def requested_extensions(values: Iterable[str]) -> frozenset[str]:
    """The extension URIs of every ``A2A-Extensions`` header line (comma-separated)."""
    return frozenset(uri for value in values for part in value.split(",") if (uri := part.strip()))


#: Request headers passed on to agents as ``ctx.headers`` (W3C Trace Context).
FORWARDED_HEADERS = ("traceparent", "tracestate")


def forwarded_headers(get: Callable[[str], str | None]) -> dict[str, str]:
    """The request headers agents may see (:data:`FORWARDED_HEADERS`), lower-case names.

    Args:
        get: Looks a request header up by name (e.g. ``request.headers.get``).
    """
    return {name: value for name in FORWARDED_HEADERS if (value := get(name))}
