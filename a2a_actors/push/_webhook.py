"""One push attempt: POST one event to one webhook, SSRF-safe by construction.

Theory of operation
-------------------
:func:`post_event` is a single attempt, with no retries and no state of its own;
:class:`~a2a_actors.push._delivery.PushDelivery` decides when to call it again. It:

1. re-checks the URL with :meth:`PushPolicy.check_url`;
2. resolves the host once (through the injectable :class:`Resolver`), checks *every*
   resolved address with :meth:`PushPolicy.check_addresses`, and connects **to the checked
   address**, with ``Host`` and TLS SNI still naming the host — so a DNS answer that changes
   between check and connect cannot redirect the request;
3. POSTs the bare StreamResponse JSON with ``Content-Type: application/json``,
   ``Authorization: <scheme> <credentials>`` when the config has authentication, and
   ``X-A2A-Notification-Token`` when it has a token. Redirects are never followed.

A 2xx returns. HTTP 500, 502, 503, 504, 408, 425 and 429, timeouts, and connection or
resolution errors raise :class:`TransientFailure`; any other status (3xx, other 4xx and
5xx) and a refused URL or address raise :class:`PermanentFailure`. Either message is a
short reason (an HTTP status, an exception type, a policy reason naming the host or
address), never a URL, a header or a body, so it can be logged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import anyio
import httpx

from a2a_actors.protocol._requests import TaskPushNotificationConfig
from a2a_actors.push._policy import IPAddress, PushPolicy, UnsafeURLError

__all__ = ("PermanentFailure", "Resolver", "TransientFailure", "post_event", "system_resolver")

Resolver = Callable[[str, int], Awaitable[Sequence[IPAddress]]]
_RETRY_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})


async def system_resolver(host: str, port: int) -> Sequence[IPAddress]:
    """Resolve ``host`` with the system resolver (every address, IPv4 and IPv6)."""
    import ipaddress

    infos = await anyio.getaddrinfo(host, port, type=0)
    seen: dict[str, IPAddress] = {}
    for _family, _type, _proto, _canon, sockaddr in infos:
        text = str(sockaddr[0]).split("%", 1)[0]
        seen.setdefault(text, ipaddress.ip_address(text))
    return list(seen.values())


class PermanentFailure(Exception):
    """The event cannot be delivered to this config; do not retry it."""


class TransientFailure(Exception):
    """The attempt failed in a way worth retrying."""


async def post_event(
    transport: httpx.AsyncBaseTransport,
    config: TaskPushNotificationConfig,
    body: bytes,
    *,
    policy: PushPolicy,
    resolver: Resolver,
    timeout: httpx.Timeout,
    total: float,
) -> None:
    """POST ``body`` (an encoded StreamResponse) to ``config.url`` once; see the module.

    Args:
        transport: Sends the request (driven directly: no client, no redirects, no proxy).
        config: The webhook: URL, token, authentication.
        body: The JSON to send.
        policy: Decides whether the URL and the resolved addresses may be contacted.
        resolver: Async ``(host, port) -> addresses``.
        timeout: httpx timeouts of the request (connect, read, …).
        total: Bound in seconds on the resolution, and on the request and response.

    Raises:
        PermanentFailure: Refused by the policy, or an HTTP status not worth retrying.
        TransientFailure: Resolution or connection failed or timed out, or a status worth
            retrying (500, 502, 503, 504, 408, 425, 429).
        Exception: Whatever ``resolver`` or a policy ``allow`` hook raises.
    """
    try:
        target = policy.check_url(config.url)
        if target.ip is not None:
            address = policy.check_addresses(target, [target.ip])
        else:
            with anyio.fail_after(total):
                addresses = await resolver(target.host, target.port)
            address = policy.check_addresses(target, addresses)
    except UnsafeURLError as exc:
        raise PermanentFailure(exc.reason) from None
    except (OSError, TimeoutError) as exc:
        raise TransientFailure(f"cannot resolve host: {type(exc).__name__}") from None
    host = f"[{address}]" if address.version == 6 else str(address)
    url = f"{target.scheme}://{host}:{target.port}{target.path_and_query}"
    headers = {"Content-Type": "application/json", "Host": target.authority}
    if config.authentication is not None:
        auth = config.authentication
        headers["Authorization"] = f"{auth.scheme} {auth.credentials}".strip()
    if config.token:
        headers["X-A2A-Notification-Token"] = config.token
    extensions: dict[str, object] = {"timeout": timeout.as_dict()}
    if target.scheme == "https":
        extensions["sni_hostname"] = target.host
    request = httpx.Request("POST", url, content=body, headers=headers, extensions=extensions)
    try:
        with anyio.fail_after(total):
            response = await transport.handle_async_request(request)
            await response.aclose()  # the body is never needed
    except (httpx.TimeoutException, TimeoutError):
        raise TransientFailure("timed out") from None
    except httpx.TransportError as exc:
        raise TransientFailure(f"connection failed: {type(exc).__name__}") from None
    if 200 <= response.status_code < 300:
        return
    if response.status_code in _RETRY_STATUS:
        raise TransientFailure(f"HTTP {response.status_code}")
    raise PermanentFailure(f"HTTP {response.status_code}")
