"""Credentials for the agent, placed where its AgentCard says.

A2A leaves authentication to HTTP: the card declares ``securitySchemes`` and
``securityRequirements``; the client sends credentials obtained out of band. This module
turns the three ways a caller can supply them into one ``httpx.Auth`` applied to every A2A
request (never to the public card fetch):

* ``api_key``: sent in the header, query parameter or cookie that the card's
  ``apiKeySecurityScheme`` names (the first one listed in ``securityRequirements``, else the
  first declared). Without such a scheme it goes in the ``X-API-Key`` header. Pass an
  :class:`APIKey` to choose the placement yourself.
* ``bearer_token``: ``Authorization: Bearer <token>`` (HTTP auth or OAuth2/OIDC tokens): a
  string, or a callable (sync or async) returning the token, called for every request, so a
  short-lived JWT can be refreshed by the caller's own code (docs/trust.md). An exception it
  raises fails the call (nothing is sent).
* ``auth``: a hook ``(httpx.Request) -> None | Awaitable[None]`` that edits each request
  (e.g. sets a freshly refreshed OAuth token), or any ``httpx.Auth`` (whose flow may answer
  challenges). It runs after the static credentials, so it can override them.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Literal

import httpx

from a2a_actors.protocol._card import AgentCard

__all__ = (
    "APIKey",
    "AuthHook",
    "BearerToken",
    "CredentialsAuth",
    "api_key_for_card",
    "build_auth",
)

#: A caller-supplied hook that adds credentials to a request, sync or async.
AuthHook = Callable[[httpx.Request], Awaitable[None] | None]

#: A bearer token, or a callable (sync or async) returning the current one.
BearerToken = str | Callable[[], str | Awaitable[str]]


@dataclass(frozen=True, slots=True)
class APIKey:
    """An API key and where to put it (``location``: ``header``, ``query`` or ``cookie``)."""

    value: str
    location: Literal["header", "query", "cookie"] = "header"
    name: str = "X-API-Key"

    def apply(self, request: httpx.Request) -> None:
        """Add the key to ``request``."""
        if self.location == "query":
            request.url = request.url.copy_merge_params({self.name: self.value})
        elif self.location == "cookie":
            cookie = f"{self.name}={self.value}"
            existing = request.headers.get("Cookie")
            request.headers["Cookie"] = f"{existing}; {cookie}" if existing else cookie
        else:
            request.headers[self.name] = self.value


def api_key_for_card(card: AgentCard | None, value: str) -> APIKey:
    """Place ``value`` as the card's apiKey scheme says (``X-API-Key`` header by default)."""
    if card is None:
        return APIKey(value)
    names = [name for req in card.security_requirements for name in req.schemes]
    names += list(card.security_schemes)
    for name in names:
        scheme = card.security_schemes.get(name)
        key = scheme.api_key_security_scheme if scheme is not None else None
        if key is not None:
            location = key.location.lower()
            if location in ("header", "query", "cookie"):
                return APIKey(value, location, key.name)  # type: ignore[arg-type]
    return APIKey(value)


class CredentialsAuth(httpx.Auth):
    """An ``httpx.Auth`` applying an API key, a bearer token and/or a caller hook.

    Args:
        api_key: Placed as described by the :class:`APIKey`.
        bearer_token: Sent as ``Authorization: Bearer <token>``; a callable is called for
            every request (and awaited when it returns an awaitable).
        hook: A request hook (sync or async) or an ``httpx.Auth`` to run last.
    """

    def __init__(
        self,
        *,
        api_key: APIKey | None = None,
        bearer_token: BearerToken | None = None,
        hook: AuthHook | httpx.Auth | None = None,
    ) -> None:
        self._api_key = api_key
        self._bearer = bearer_token
        self._hook = hook

    def _apply_static(self, request: httpx.Request, token: str | None) -> None:
        if self._api_key is not None:
            self._api_key.apply(request)
        if token is not None:
            request.headers["Authorization"] = f"Bearer {token}"

    def _sync_token(self) -> str | None:
        bearer = self._bearer
        if bearer is None or isinstance(bearer, str):
            return bearer
        token = bearer()
        if inspect.isawaitable(token):
            if inspect.iscoroutine(token):
                token.close()
            raise TypeError("an async bearer token callable needs an httpx.AsyncClient")
        return _checked(token)

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        """Apply the credentials, then the hook (awaited when async) or the inner flow."""
        bearer = self._bearer
        if bearer is None or isinstance(bearer, str):
            token = bearer
        else:
            found = bearer()
            token = _checked(await found if inspect.isawaitable(found) else found)
        self._apply_static(request, token)
        hook = self._hook
        if isinstance(hook, httpx.Auth):
            flow = hook.async_auth_flow(request)
            try:
                outgoing = await flow.__anext__()
                while True:
                    response = yield outgoing
                    outgoing = await flow.asend(response)
            except StopAsyncIteration:
                return
            finally:
                await flow.aclose()
        if hook is not None:
            result = hook(request)
            if inspect.isawaitable(result):
                await result
        yield request

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response]:
        """Synchronous clients: static credentials and sync hooks/callables only."""
        self._apply_static(request, self._sync_token())
        hook = self._hook
        if isinstance(hook, httpx.Auth):
            yield from hook.sync_auth_flow(request)
            return
        if hook is not None:
            result = hook(request)
            if inspect.isawaitable(result):
                if inspect.iscoroutine(result):
                    result.close()
                raise TypeError("an async auth hook needs an httpx.AsyncClient")
        yield request


def build_auth(
    card: AgentCard | None,
    *,
    api_key: str | APIKey | None = None,
    bearer_token: BearerToken | None = None,
    auth: AuthHook | httpx.Auth | None = None,
) -> httpx.Auth | None:
    """The one ``httpx.Auth`` for the given credentials, or ``None`` when there are none."""
    if api_key is None and bearer_token is None and auth is None:
        return None
    if isinstance(auth, httpx.Auth) and api_key is None and bearer_token is None:
        return auth
    key = api_key_for_card(card, api_key) if isinstance(api_key, str) else api_key
    return CredentialsAuth(api_key=key, bearer_token=bearer_token, hook=auth)


def _checked(token: object) -> str:
    """A token a callable returned, refused when it cannot be a header value."""
    if not isinstance(token, str) or not token or any(c in token for c in "\r\n"):
        raise TypeError("a bearer token callable must return a non-empty one-line str")
    return token
