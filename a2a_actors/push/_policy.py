"""SSRF policy for push-notification webhook URLs (pure: no sockets, no DNS).

Delivery code uses it in three steps: :meth:`PushPolicy.check_url` when a push config is
created and again before every delivery; resolve ``PushTarget.host`` itself; then
:meth:`PushPolicy.check_addresses` with *all* resolved addresses, connecting only to the
address it returns (so DNS rebinding between check and connect is impossible).

Host names are parsed the way browsers (WHATWG) and ``inet_aton`` do: any host whose last
label is numeric (``2130706433``, ``0x7f.1``, ``0177.0.0.1``, ``127.1``) *is* an IPv4
address and is checked as one, or refused if malformed. Unless ``allow_private`` or the
``allow`` hook admits them, two kinds of names are refused too: single-label names
(``localhost``, ``ip6-loopback``, ``metadata``, ``instance-data``: they resolve via search
domains to internal hosts) and names under the private-use suffixes of
:data:`_BLOCKED_SUFFIXES` (``.localhost``, ``.internal`` incl. ``metadata.google.internal``,
``.local``, ``.localdomain``, ``.arpa``, ...). The address check is the real defence; the
name rules only fail early and readably.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias
from urllib.parse import quote

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

__all__ = ("IPAddress", "PushPolicy", "PushTarget", "UnsafeURLError")

IPAddress: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address

_DEFAULT_PORTS = {"https": 443, "http": 80}
_Network: TypeAlias = ipaddress.IPv4Network | ipaddress.IPv6Network


def _nets(*nets: str) -> tuple[_Network, ...]:
    return tuple(ipaddress.ip_network(net) for net in nets)


# (reason, networks); first match wins, so specific blocks precede their supernets.
_BLOCKED: tuple[tuple[str, tuple[_Network, ...]], ...] = (
    ("a cloud metadata endpoint", _nets("169.254.169.254/32", "169.254.170.2/32")),
    ("a cloud metadata endpoint", _nets("100.100.100.200/32", "168.63.129.16/32")),
    ("a cloud metadata endpoint", _nets("fd00:ec2::254/128")),
    ("broadcast", _nets("255.255.255.255/32")),
    ("unspecified", _nets("0.0.0.0/8", "::/128")),
    ("loopback", _nets("127.0.0.0/8", "::1/128")),
    ("private", _nets("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")),
    ("shared address space (CGNAT)", _nets("100.64.0.0/10")),
    ("link-local", _nets("169.254.0.0/16", "fe80::/10")),
    ("multicast", _nets("224.0.0.0/4", "ff00::/8")),
    ("reserved for documentation", _nets("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24")),
    ("reserved for documentation", _nets("2001:db8::/32", "3fff::/20")),
    ("reserved for benchmarking", _nets("198.18.0.0/15", "2001:2::/48")),
    ("reserved for IETF protocol assignments", _nets("192.0.0.0/24")),
    ("IPv4-compatible (deprecated)", _nets("::/96")),
    ("Teredo", _nets("2001::/32")),
    ("unique-local", _nets("fc00::/7")),
    ("site-local (deprecated)", _nets("fec0::/10")),
    ("local-use NAT64", _nets("64:ff9b:1::/48")),
    ("discard-only", _nets("100::/64")),
    ("SRv6 segment identifiers", _nets("5f00::/16")),
    ("reserved", _nets("192.88.99.0/24", "240.0.0.0/4", "::/8", "2001::/23")),
)
_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_BLOCKED_SUFFIXES = (
    *(".localhost", ".local", ".localdomain", ".internal", ".arpa"),
    *(".home", ".corp", ".lan", ".intranet"),
)
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_HOST_CHARS = re.compile(r"[a-z0-9_-]{1,63}(\.[a-z0-9_-]{1,63})*")
_NUMERIC_LABEL = re.compile(r"0x[0-9a-f]*|[0-9]+")
_PATH_SAFE = "/:@!$&'()*+,;=%"
_HEX, _OCT, _DEC = re.compile("[0-9a-f]+"), re.compile("[0-7]+"), re.compile("[0-9]+")


class UnsafeURLError(ValueError):
    """A push URL or resolved address refused by :class:`PushPolicy`.

    Attributes:
        url: The offending URL *redacted*: userinfo, query and fragment removed, control
            characters escaped, truncated. Safe to log.
        reason: Short human-readable reason, e.g. ``"address 10.0.0.1 is private"``.
    """

    def __init__(self, url: str, reason: str) -> None:
        self.url = _redact(url)
        self.reason = reason
        super().__init__(self.url, reason)  # picklable; args hold no secrets

    def __str__(self) -> str:
        return f"refused push notification URL '{self.url}': {self.reason}"


@dataclass(frozen=True, slots=True)
class PushTarget:
    """A statically checked push URL, split into what a connection needs.

    ``url`` and ``path_and_query`` are left out of ``repr`` (the query may carry secrets).

    Attributes:
        url: Normalised URL: scheme, normalised host, port if not default, path and query;
            the fragment is dropped.
        scheme: ``"https"`` or ``"http"``.
        host: Lower-case, IDNA-encoded, no trailing dot; IP literals in canonical form
            (IPv6 without brackets or zone). Use for SNI and DNS resolution.
        port: Explicit port, else 443 for https and 80 for http.
        ip: The address when the host is an IP literal (in any spelling), else ``None``.
        path_and_query: Request target for the request line; starts with ``/``; non-ASCII
            and characters not allowed by RFC 3986 percent-encoded.
    """

    url: str = field(repr=False)
    scheme: str
    host: str
    port: int
    ip: IPAddress | None
    path_and_query: str = field(repr=False)

    @property
    def authority(self) -> str:
        """The ``Host`` header value: host (bracketed if IPv6), plus port if not default."""
        host = f"[{self.host}]" if isinstance(self.ip, ipaddress.IPv6Address) else self.host
        return host if self.port == _DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"


@dataclass(frozen=True, slots=True)
class PushPolicy:
    """Decides which webhook URLs and resolved addresses may be contacted.

    Attributes:
        allow_private: For tests and private deployments: admits ``http``, every host name
            and every address (metadata endpoints included). URL syntax rules still apply.
        allow_http: Admit ``http`` as well as ``https``.
        allow: Allow-list hook called as ``allow(host, address)`` before a host name
            (``address`` is ``None``) or an address is refused; ``True`` admits it. It can
            not waive scheme or syntax rules. Exceptions it raises propagate.
        max_url_length: Longest URL accepted, in characters.
    """

    allow_private: bool = False
    allow_http: bool = False
    allow: Callable[[str, IPAddress | None], bool] | None = None
    max_url_length: int = 2048

    def check_url(self, url: str) -> PushTarget:
        """Statically check ``url`` and split it; IP-literal hosts are address-checked.

        Raises:
            UnsafeURLError: Over-long; control characters, whitespace or backslashes;
                scheme not ``https`` (or ``http`` when allowed); no ``//`` authority;
                userinfo; missing or malformed host or port; IPv6 zone id; a refused
                host name or IP literal.
        """
        if not isinstance(url, str):
            raise TypeError(f"push URL must be a str, not {type(url).__name__}")
        if len(url) > self.max_url_length:
            raise UnsafeURLError(url, f"URL is longer than {self.max_url_length} characters")
        if any(c == "\\" or c.isspace() or unicodedata.category(c) in ("Cc", "Cf") for c in url):
            raise UnsafeURLError(url, "URL contains whitespace, control characters or '\\'")
        match = _SCHEME.match(url)
        scheme = match.group(1).lower() if match else ""
        http_ok = self.allow_http or self.allow_private
        if scheme not in _DEFAULT_PORTS or (scheme == "http" and not http_ok):
            raise UnsafeURLError(url, "scheme must be https" + (" or http" if http_ok else ""))
        rest = url[len(scheme) + 1 :]
        if not rest.startswith("//"):
            raise UnsafeURLError(url, "URL must have a //host authority")
        rest = rest[2:].partition("#")[0]
        end = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
        authority = rest[:end]
        path, has_query, query = rest[end:].partition("?")
        if "@" in authority:
            raise UnsafeURLError(url, "credentials (userinfo) are not allowed in the URL")
        host, port = self._split_host(url, scheme, authority)
        if isinstance(host, str):
            host_text, ip = host, None
            if (why := self._name_problem(host_text)) is not None:
                raise UnsafeURLError(url, why)
        else:
            host_text, ip = str(host), host
            self._check(url, host_text, ip)
        request_target = quote(path or "/", safe=_PATH_SAFE)
        if has_query:
            request_target += "?" + quote(query, safe=_PATH_SAFE + "?")
        netloc = f"[{host_text}]" if ip is not None and ip.version == 6 else host_text
        if port != _DEFAULT_PORTS[scheme]:
            netloc += f":{port}"
        full = f"{scheme}://{netloc}{request_target}"
        return PushTarget(full, scheme, host_text, port, ip, request_target)

    def check_address(self, host: str, address: IPAddress) -> None:
        """Refuse ``address`` (resolved for ``host``) unless it is publicly routable.

        Refused: loopback, private, link-local, CGNAT, multicast, broadcast, unspecified,
        reserved, documentation and benchmarking ranges, unique- and site-local IPv6,
        cloud metadata endpoints, IPv6 outside ``2000::/3``, Teredo, IPv4-compatible, and
        IPv4-mapped / NAT64 / 6to4 addresses whose embedded IPv4 is refused (the embedded
        address decides for IPv4-mapped and NAT64 ``64:ff9b::/96``).
        Passes unconditionally under ``allow_private``; else ``allow(host, address)``
        is consulted before refusing.

        Raises:
            UnsafeURLError: The address is refused (its ``url`` is ``host``).
        """
        self._check(host, host, address)

    def check_addresses(self, target: PushTarget, addresses: Iterable[IPAddress]) -> IPAddress:
        """Check every address resolved for ``target`` and return the one to connect to.

        For an IP-literal target pass ``[target.ip]``; other addresses are then refused.

        Returns:
            The first address, unchanged (an IPv6 scope id is kept).

        Raises:
            UnsafeURLError: No addresses, or *any* of them refused (a name resolving to one
                public and one private address is refused outright).
        """
        found = list(addresses)
        if not found:
            raise UnsafeURLError(target.url, f"host {target.host} resolved to no addresses")
        for address in found:
            if target.ip is not None and _unscoped(address) != target.ip:
                raise UnsafeURLError(target.url, f"address {address} is not the URL's host")
            self._check(target.url, target.host, address)
        return found[0]

    def _check(self, url: str, host: str, address: IPAddress) -> None:
        if self.allow_private or (why := _address_problem(address)) is None:
            return
        if self.allow is None or not self.allow(host, address):
            raise UnsafeURLError(url, why)

    def _name_problem(self, host: str) -> str | None:
        if self.allow_private:
            return None
        if "." not in host:
            why = f"host name {host} is a single label (not fully qualified)"
        elif host.endswith(_BLOCKED_SUFFIXES):
            why = f"host name {host} is local, internal or reserved"
        else:
            return None
        return None if self.allow is not None and self.allow(host, None) else why

    @staticmethod
    def _split_host(url: str, scheme: str, authority: str) -> tuple[str | IPAddress, int]:
        """Split ``authority`` into a normalised host name or address, and a port."""
        if authority.startswith("["):
            literal, bracket, port_text = authority[1:].partition("]")
            if not bracket or (port_text and not port_text.startswith(":")):
                raise UnsafeURLError(url, "malformed bracketed IPv6 host")
            port_text = port_text[1:]
        elif authority.count(":") > 1:
            raise UnsafeURLError(url, "IPv6 addresses must be in brackets")
        else:
            literal, _, port_text = authority.partition(":")
        port = _DEFAULT_PORTS[scheme]
        if port_text:
            if not (port_text.isascii() and port_text.isdigit() and len(port_text) <= 5):
                raise UnsafeURLError(url, "port is not a number")
            port = int(port_text)
            if not 1 <= port <= 65535:
                raise UnsafeURLError(url, "port is out of range 1-65535")
        if not literal:
            raise UnsafeURLError(url, "URL has no host")
        if authority.startswith("["):
            addr, pct, _ = literal.partition("%")
            try:
                ip6 = ipaddress.IPv6Address(addr)
            except ValueError:
                raise UnsafeURLError(url, "malformed IPv6 address") from None
            if pct:  # RFC 6874 spells it %25zone; zones only mean something for link-local
                raise UnsafeURLError(url, f"IPv6 zone identifiers are not allowed ({ip6})")
            return ip6, port
        try:
            host = literal if literal.isascii() else literal.encode("idna").decode("ascii")
        except UnicodeError:
            raise UnsafeURLError(url, "malformed internationalised host name") from None
        host = host.lower().removesuffix(".")
        if len(host) > 253 or not _HOST_CHARS.fullmatch(host):
            raise UnsafeURLError(url, "malformed host name")
        if _NUMERIC_LABEL.fullmatch(host.rpartition(".")[2]):
            ip4 = _parse_ipv4(host)
            if ip4 is None:
                raise UnsafeURLError(url, "malformed IPv4 address")
            return ip4, port
        return host, port


def _parse_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """Parse ``host`` as ``inet_aton`` / WHATWG do (hex, octal, 1-4 parts), else ``None``."""
    parts = host.split(".")
    if len(parts) > 4:
        return None
    numbers: list[int] = []
    for part in parts:
        if part.startswith("0x"):
            digits, base, valid = part[2:] or "0", 16, _HEX
        elif len(part) > 1 and part.startswith("0"):
            digits, base, valid = part[1:], 8, _OCT
        else:
            digits, base, valid = part, 10, _DEC
        if not valid.fullmatch(digits):  # int() alone would accept "-1" and "1_0"
            return None
        numbers.append(int(digits, base))
    *head, last = numbers
    if any(not 0 <= n <= 255 for n in head) or not 0 <= last < 256 ** (5 - len(numbers)):
        return None
    value = last
    for i, n in enumerate(head):
        value += n << (8 * (3 - i))
    return ipaddress.IPv4Address(value)


def _unscoped(address: IPAddress) -> IPAddress:
    if isinstance(address, ipaddress.IPv6Address) and address.scope_id:
        return ipaddress.IPv6Address(int(address))
    return address


def _address_problem(address: IPAddress) -> str | None:
    """Return why ``address`` is refused, as ``"address X is ..."``, or ``None``."""
    why = _why(_unscoped(address))
    return None if why is None else f"address {address} {why}"


def _why(address: IPAddress) -> str | None:
    if isinstance(address, ipaddress.IPv6Address):
        nat64 = address in _NAT64
        v4s = [address.ipv4_mapped, address.sixtofour, *(address.teredo or ())]
        if nat64:
            v4s.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
        for v4 in v4s:
            if v4 is not None and (inner := _why(v4)) is not None:
                return f"embeds IPv4 {v4}, which {inner}"
        if nat64 or address.ipv4_mapped is not None:
            return None  # the embedded IPv4 address is the real destination
    why = next((f"is {why}" for why, nets in _BLOCKED for net in nets if address in net), None)
    if why is None and address.version == 6 and address not in _GLOBAL_UNICAST:
        why = "is outside global unicast 2000::/3"
    return why if why is not None or address.is_global else "is not globally routable"


def _redact(url: str) -> str:
    """Strip userinfo, query and fragment; escape controls; truncate (for error messages)."""
    if not isinstance(url, str):
        return f"<{type(url).__name__}>"
    text = re.split(r"[?#]", url, maxsplit=1)[0]
    if "@" in text:
        match = re.match(r"[A-Za-z][A-Za-z0-9+.-]*:(//)?", text)
        prefix = match.group(0) if match else ""
        text = f"{prefix}***@{text.rpartition('@')[2]}"
    text = "".join(c if c.isprintable() and not c.isspace() else f"\\u{ord(c):04x}" for c in text)
    return text if len(text) <= 200 else text[:200] + "..."
