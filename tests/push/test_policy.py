"""Tests for the push-notification SSRF policy (pure, synchronous)."""

from __future__ import annotations

import ipaddress
import pickle
from ipaddress import IPv4Address, IPv6Address

import pytest
from hypothesis import given, strategies as st

from a2a_actors.push._policy import IPAddress, PushPolicy, PushTarget, UnsafeURLError

POLICY = PushPolicy()

# Every IPv4 network that must never be contacted (the hypothesis tests sample from these).
REFUSED_V4_NETS = tuple(
    ipaddress.IPv4Network(n)
    for n in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.168.0.0/16",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/4",
        "240.0.0.0/4",
    )
)


def refused(url: str, policy: PushPolicy = POLICY) -> UnsafeURLError:
    with pytest.raises(UnsafeURLError) as info:
        policy.check_url(url)
    return info.value


def is_refused(address: IPAddress) -> bool:
    try:
        POLICY.check_address("example.com", address)
    except UnsafeURLError:
        return True
    return False


# --- accepted URLs and normalisation --------------------------------------------------


def test_accepts_public_https_name() -> None:
    target = POLICY.check_url("https://example.com/hook")
    assert target == PushTarget(
        url="https://example.com/hook",
        scheme="https",
        host="example.com",
        port=443,
        ip=None,
        path_and_query="/hook",
    )
    assert target.authority == "example.com"


def test_accepts_public_ipv4_literal_with_port() -> None:
    target = POLICY.check_url("https://93.184.216.34:8443/x")
    assert target.ip == IPv4Address("93.184.216.34")
    assert (target.host, target.port, target.path_and_query) == ("93.184.216.34", 8443, "/x")
    assert target.authority == "93.184.216.34:8443"
    assert target.url == "https://93.184.216.34:8443/x"


def test_accepts_public_ipv6_literal() -> None:
    target = POLICY.check_url("https://[2606:2800:220:1:248:1893:25c8:1946]/")
    assert target.ip == IPv6Address("2606:2800:220:1:248:1893:25c8:1946")
    assert target.host == "2606:2800:220:1:248:1893:25c8:1946"
    assert target.authority == "[2606:2800:220:1:248:1893:25c8:1946]"
    assert target.url == "https://[2606:2800:220:1:248:1893:25c8:1946]/"


@pytest.mark.parametrize(
    ("url", "host", "port", "path_and_query", "normalised"),
    [
        ("HTTPS://Example.COM./a", "example.com", 443, "/a", "https://example.com/a"),
        ("https://example.com", "example.com", 443, "/", "https://example.com/"),
        ("https://example.com?x=1#frag", "example.com", 443, "/?x=1", "https://example.com/?x=1"),
        ("https://example.com:443/p?q#f", "example.com", 443, "/p?q", "https://example.com/p?q"),
        ("https://example.com:/p", "example.com", 443, "/p", "https://example.com/p"),
        ("https://bücher.de/ä?q=ü", "xn--bcher-kva.de", 443, "/%C3%A4?q=%C3%BC", None),
        ("https://a_b.example.com/{x}", "a_b.example.com", 443, "/%7Bx%7D", None),
        ("https://0x5db8d822/", "93.184.216.34", 443, "/", "https://93.184.216.34/"),
    ],
)
def test_normalisation(
    url: str, host: str, port: int, path_and_query: str, normalised: str | None
) -> None:
    target = POLICY.check_url(url)
    assert (target.host, target.port, target.path_and_query) == (host, port, path_and_query)
    assert target.url == (normalised or f"https://{host}{path_and_query}")


def test_repr_hides_url_and_query() -> None:
    target = POLICY.check_url("https://example.com/hook?token=s3cret")
    assert target.url == "https://example.com/hook?token=s3cret"
    assert "s3cret" not in repr(target)


@pytest.mark.parametrize(
    "url",
    [
        "https://[::ffff:93.184.216.34]/",
        "https://[64:ff9b::8.8.8.8]/",
        "https://[2002:808:808::1]/",
        "https://8.8.8.8/",
        "https://[2001:4860:4860::8888]:8443/",
    ],
)
def test_accepts_public_addresses_in_embedding_forms(url: str) -> None:
    assert POLICY.check_url(url).ip is not None


# --- refused URLs ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("https://127.0.0.1/", "loopback"),
        ("https://127.255.0.9:8443/x", "loopback"),
        ("https://[::1]/", "loopback"),
        ("https://10.0.0.1/", "private"),
        ("https://10.255.255.255/", "private"),
        ("https://172.16.0.1/", "private"),
        ("https://172.31.255.254/", "private"),
        ("https://192.168.1.1/", "private"),
        ("https://169.254.1.1/", "link-local"),
        ("https://169.254.169.254/latest/meta-data/", "metadata"),
        ("https://169.254.170.2/", "metadata"),
        ("https://100.100.100.200/", "metadata"),
        ("https://[fd00:ec2::254]/", "metadata"),
        ("https://100.64.0.1/", "CGNAT"),
        ("https://100.127.255.255/", "CGNAT"),
        ("https://0.0.0.0/", "unspecified"),
        ("https://0/", "unspecified"),
        ("https://[::]/", "unspecified"),
        ("https://255.255.255.255/", "broadcast"),
        ("https://224.0.0.1/", "multicast"),
        ("https://[ff02::1]/", "multicast"),
        ("https://240.0.0.1/", "reserved"),
        ("https://192.0.0.8/", "IETF"),
        ("https://192.0.2.1/", "documentation"),
        ("https://198.51.100.7/", "documentation"),
        ("https://203.0.113.7/", "documentation"),
        ("https://[2001:db8::1]/", "documentation"),
        ("https://198.18.0.1/", "benchmarking"),
        ("https://[fc00::1]/", "unique-local"),
        ("https://[fd12:3456::1]/", "unique-local"),
        ("https://[fe80::1]/", "link-local"),
        ("https://[fec0::1]/", "site-local"),
        # Alternative IPv4 spellings accepted by inet_aton and browsers.
        ("https://2130706433/", "127.0.0.1"),
        ("https://0x7f000001/", "127.0.0.1"),
        ("https://0X7F000001/", "127.0.0.1"),
        ("https://0x7f.0.0.1/", "127.0.0.1"),
        ("https://0177.0.0.1/", "127.0.0.1"),
        ("https://017700000001/", "127.0.0.1"),
        ("https://127.1/", "127.0.0.1"),
        ("https://127.0.1/", "127.0.0.1"),
        ("https://10.1/", "10.0.0.1"),
        ("https://0xa9.0xfe.0xa9.0xfe/", "169.254.169.254"),
        ("https://2852039166/", "169.254.169.254"),
        ("https://127.0.0.1./", "127.0.0.1"),
        ("https://\uff11\uff12\uff17.\uff10.\uff10.\uff11/", "127.0.0.1"),  # fullwidth digits
        # IPv6 forms embedding a refused IPv4 address.
        ("https://[::ffff:127.0.0.1]/", "127.0.0.1"),
        ("https://[::ffff:7f00:1]/", "127.0.0.1"),
        ("https://[::ffff:a9fe:a9fe]/", "169.254.169.254"),
        ("https://[::127.0.0.1]/", "IPv4-compatible"),
        ("https://[::8.8.8.8]/", "IPv4-compatible"),
        ("https://[64:ff9b::10.0.0.1]/", "10.0.0.1"),
        ("https://[64:ff9b:1::a00:1]/", "NAT64"),
        ("https://[2002:a00:1::1]/", "10.0.0.1"),
        ("https://[2002:7f00:1::]/", "127.0.0.1"),
        ("https://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/", "10.0.0.1"),  # Teredo client
        ("https://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/", "Teredo"),  # client 8.8.8.8
        ("https://[100::1]/", "discard"),
    ],
)
def test_refuses_unsafe_addresses(url: str, fragment: str) -> None:
    error = refused(url)
    assert fragment in error.reason
    assert error.reason in str(error)


@pytest.mark.parametrize(
    "url",
    [
        "https://localhost/",
        "https://LOCALHOST/",
        "https://localhost./",
        "https://localhost:8443/x",
        "https://foo.localhost/",
        "https://localhost.localdomain/",
        "https://ip6-localhost/",
        "https://ip6-loopback/",
        "https://metadata/",
        "https://metadata.google.internal/",
        "https://instance-data/",
        "https://instance-data.ec2.internal/",
        "https://anything.internal/",
        "https://printer.local/",
        "https://router.home.arpa/",
        "https://1.0.0.127.in-addr.arpa/",
        "https://intranet/",
        "https://\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54/",  # fullwidth localhost
    ],
)
def test_refuses_local_and_metadata_names(url: str) -> None:
    assert "host name" in refused(url).reason


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("http://example.com/hook", "https"),
        ("ftp://example.com/", "https"),
        ("file:///etc/passwd", "https"),
        ("gopher://example.com/", "https"),
        ("javascript:alert(1)", "https"),
        ("example.com/hook", "https"),
        ("", "https"),
        ("https:example.com", "authority"),
        ("https:/example.com", "authority"),
        ("https://", "no host"),
        ("https:///path", "no host"),
        ("https://:443/", "no host"),
        ("https://user@example.com/", "userinfo"),
        ("https://user:pass@example.com/", "userinfo"),
        ("https://example.com@127.0.0.1/", "userinfo"),
        ("https://:@example.com/", "userinfo"),
        ("https://example.com:99999/", "port"),
        ("https://example.com:0/", "port"),
        ("https://example.com:65536/", "port"),
        ("https://example.com:80a/", "port"),
        ("https://example.com:-1/", "port"),
        ("https://example.com:٤٤٣/", "port"),  # non-ASCII digits
        ("https://example.com:1:2/", "brackets"),
        ("https://::1/", "brackets"),
        ("https://[::1/", "bracketed"),
        ("https://[::1]x/", "bracketed"),
        ("https://[127.0.0.1]/", "IPv6"),
        ("https://[v1.abc]/", "IPv6"),
        ("https://[fe80::1%25eth0]/", "zone"),
        ("https://[fe80::1%eth0]/", "zone"),
        ("https://exa mple.com/", "whitespace"),
        ("https://example.com/a b", "whitespace"),
        ("https://example.com/\t", "whitespace"),
        ("https://example.com/\r\nX-Injected: 1", "whitespace"),
        ("https://example.com/\x00", "control"),
        ("https://example.com/\u200e", "control"),
        (" https://example.com/", "whitespace"),
        ("https://evil.com\\@127.0.0.1/", "'\\'"),
        ("https://127.0.0.1\\.evil.com/", "'\\'"),
        ("https://%31%32%37.0.0.1/", "malformed host"),
        ("https://exa$mple.com/", "malformed host"),
        ("https://example..com/", "malformed host"),
        ("https://example.com../", "malformed host"),
        ("https://127.0.0.1\uff0f.evil.com/", "malformed host"),  # fullwidth solidus
        (f"https://{'a' * 64}.com/", "malformed host"),
        ("https://1.2.3.4.5/", "malformed IPv4"),
        ("https://256.1.1.1/", "malformed IPv4"),
        ("https://1.1.1.256/", "malformed IPv4"),
        ("https://1.16777216/", "malformed IPv4"),
        ("https://4294967296/", "malformed IPv4"),
        ("https://08.1.1.1/", "malformed IPv4"),
        ("https://0x1g.1.1.1/", "malformed IPv4"),
        ("https://example.0x1/", "malformed IPv4"),
        ("https://foo.089/", "malformed IPv4"),
    ],
)
def test_refuses_bad_syntax(url: str, fragment: str) -> None:
    assert fragment in refused(url).reason


def test_refuses_overlong_url() -> None:
    url = "https://example.com/" + "a" * 2100
    assert "longer than 2048" in refused(url).reason
    assert PushPolicy(max_url_length=4096).check_url(url).host == "example.com"
    short = PushPolicy(max_url_length=30)
    assert "longer than 30" in refused("https://example.com/" + "a" * 11, short).reason


def test_non_string_url_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        POLICY.check_url(b"https://example.com/")  # type: ignore[arg-type]


# --- secrets never leak into errors ---------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "https://alice:hunter2@example.com/hook?token=s3cret",
        "https://alice:hunter2@127.0.0.1/?token=s3cret",
        "http://alice:hunter2@example.com/?token=s3cret",
        "ftp://alice:hunter2@example.com/?token=s3cret",
        "https://alice:hunter2/x@example.com/?token=s3cret",
        "https://127.0.0.1/hook?token=s3cret&alice=hunter2",
        "https://localhost/hook?token=s3cret#hunter2",
        "https://example.com/hook?token=s3cret\nhunter2",
        "https://alice:hunter2@example.com:99999/?token=s3cret",
        "https://[::1]/?token=s3cret" + "x" * 3000 + "hunter2",
    ],
)
def test_errors_never_contain_credentials_or_query(url: str) -> None:
    error = refused(url)
    for text in (str(error), repr(error), error.url, error.reason):
        assert "hunter2" not in text
        assert "s3cret" not in text
        assert "alice" not in text
        assert "\n" not in text


def test_error_pickles_without_secrets() -> None:
    error = refused("https://alice:hunter2@example.com/?token=s3cret")
    clone = pickle.loads(pickle.dumps(error))
    assert (str(clone), clone.url, clone.reason) == (str(error), error.url, error.reason)
    assert str(error) == (
        "refused push notification URL 'https://***@example.com/': "
        "credentials (userinfo) are not allowed in the URL"
    )


def test_address_errors_never_contain_query() -> None:
    target = POLICY.check_url("https://hooks.example.com/h?token=s3cret")
    with pytest.raises(UnsafeURLError) as info:
        POLICY.check_addresses(target, [IPv4Address("10.0.0.1")])
    assert "s3cret" not in str(info.value)
    assert "hooks.example.com" in str(info.value)
    assert info.value.reason == "address 10.0.0.1 is private"


# --- check_address / check_addresses --------------------------------------------------


@pytest.mark.parametrize(
    "address",
    [
        "8.8.8.8",
        "1.1.1.1",
        "93.184.216.34",
        "172.15.255.255",
        "172.32.0.0",
        "100.63.255.255",
        "100.128.0.0",
        "2606:4700:4700::1111",
        "2001:4860:4860::8888",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
        "2002:808:808::1",
    ],
)
def test_check_address_accepts_public(address: str) -> None:
    POLICY.check_address("example.com", ipaddress.ip_address(address))


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.20.0.1",
        "192.168.0.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "::1",
        "::",
        "::ffff:10.0.0.1",
        "::ffff:169.254.169.254",
        "::10.0.0.1",
        "64:ff9b::a9fe:a9fe",
        "2002:c0a8:101::1",
        "fe80::1",
        "fe80::1%eth0",
        "fc00::1",
        "fec0::1",
        "fd00:ec2::254",
        "ff02::1",
        "2001:db8::1",
        "3fff::1",
        "4000::1",
        "5f00::1",
    ],
)
def test_check_address_refuses(address: str) -> None:
    parsed = ipaddress.ip_address(address)
    with pytest.raises(UnsafeURLError) as info:
        POLICY.check_address("hooks.example.com", parsed)
    assert info.value.reason.startswith(f"address {parsed} ")


def test_check_addresses_returns_first_when_all_public() -> None:
    target = POLICY.check_url("https://hooks.example.com/h")
    addresses: list[IPAddress] = [IPv6Address("2606:4700:4700::1111"), IPv4Address("1.1.1.1")]
    assert POLICY.check_addresses(target, iter(addresses)) == addresses[0]


@pytest.mark.parametrize(
    "addresses",
    [
        [IPv4Address("93.184.216.34"), IPv4Address("10.0.0.1")],
        [IPv4Address("127.0.0.1"), IPv4Address("93.184.216.34")],
        [IPv6Address("2606:4700:4700::1111"), IPv6Address("::ffff:192.168.0.1")],
    ],
)
def test_check_addresses_refuses_any_unsafe_address(addresses: list[IPAddress]) -> None:
    target = POLICY.check_url("https://hooks.example.com/h")
    with pytest.raises(UnsafeURLError):
        POLICY.check_addresses(target, addresses)


def test_check_addresses_refuses_empty() -> None:
    target = POLICY.check_url("https://hooks.example.com/h")
    with pytest.raises(UnsafeURLError, match="no addresses"):
        POLICY.check_addresses(target, [])


def test_check_addresses_for_ip_literal_target() -> None:
    target = POLICY.check_url("https://8.8.8.8/h")
    assert target.ip is not None
    assert POLICY.check_addresses(target, [target.ip]) == target.ip
    with pytest.raises(UnsafeURLError, match="not the URL's host"):
        POLICY.check_addresses(target, [IPv4Address("1.1.1.1")])


# --- allow_private, allow_http and the allow hook -------------------------------------


def test_allow_private_admits_local_http() -> None:
    policy = PushPolicy(allow_private=True)
    target = policy.check_url("http://127.0.0.1:1234/webhook")
    assert (target.scheme, target.host, target.port) == ("http", "127.0.0.1", 1234)
    assert target.ip == IPv4Address("127.0.0.1")
    assert target.path_and_query == "/webhook"
    assert target.authority == "127.0.0.1:1234"
    assert policy.check_url("http://localhost:8080/").host == "localhost"
    assert policy.check_url("http://webhook-receiver/").host == "webhook-receiver"
    assert policy.check_url("https://[::1]/").ip == IPv6Address("::1")
    assert policy.check_url("http://example.com/").port == 80
    scoped = IPv6Address("fe80::1%eth0")
    assert policy.check_addresses(policy.check_url("http://svc/"), [scoped]) is scoped
    policy.check_address("metadata", IPv4Address("169.254.169.254"))


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("ftp://127.0.0.1/", "https"),
        ("http://user:pw@127.0.0.1/", "userinfo"),
        ("http://127.0.0.1:0/", "port"),
        ("http://[fe80::1%25eth0]/", "zone"),
        ("http://local host/", "whitespace"),
    ],
)
def test_allow_private_keeps_syntax_rules(url: str, fragment: str) -> None:
    assert fragment in refused(url, PushPolicy(allow_private=True)).reason


def test_allow_http_admits_http_but_not_private() -> None:
    policy = PushPolicy(allow_http=True)
    target = policy.check_url("http://example.com/hook")
    assert (target.scheme, target.port, target.authority) == ("http", 80, "example.com")
    assert policy.check_url("http://example.com:443/").authority == "example.com:443"
    assert "loopback" in refused("http://127.0.0.1/", policy).reason
    assert "host name" in refused("http://localhost/", policy).reason


def test_allow_hook_admits_refused_hosts_and_addresses() -> None:
    calls: list[tuple[str, IPAddress | None]] = []

    def allow(host: str, address: IPAddress | None) -> bool:
        calls.append((host, address))
        return host in {"hooks.corp.example.com", "localhost", "10.0.0.7"}

    policy = PushPolicy(allow=allow)
    target = policy.check_url("https://hooks.corp.example.com/h")
    assert calls == []  # a public-looking name is not refused, so the hook is not asked
    address = IPv4Address("10.1.2.3")
    assert policy.check_addresses(target, [address]) == address
    assert calls.pop() == ("hooks.corp.example.com", address)

    assert policy.check_url("https://localhost/").host == "localhost"
    assert calls.pop() == ("localhost", None)
    assert policy.check_url("https://10.0.0.7/").ip == IPv4Address("10.0.0.7")
    assert calls.pop() == ("10.0.0.7", IPv4Address("10.0.0.7"))

    assert "private" in refused("https://10.0.0.8/", policy).reason
    assert calls.pop() == ("10.0.0.8", IPv4Address("10.0.0.8"))
    other = policy.check_url("https://other.example.com/")
    with pytest.raises(UnsafeURLError):
        policy.check_addresses(other, [IPv4Address("10.1.2.3")])
    assert calls == [("other.example.com", IPv4Address("10.1.2.3"))]


def test_allow_hook_cannot_waive_syntax_rules() -> None:
    policy = PushPolicy(allow=lambda host, address: True)
    assert "https" in refused("http://example.com/", policy).reason
    assert "userinfo" in refused("https://u:p@example.com/", policy).reason
    assert policy.check_url("https://127.0.0.1/").ip == IPv4Address("127.0.0.1")


# --- property tests -------------------------------------------------------------------


@st.composite
def refused_ipv4(draw: st.DrawFn) -> IPv4Address:
    net = draw(st.sampled_from(REFUSED_V4_NETS))
    offset = draw(st.integers(0, net.num_addresses - 1))
    return net[offset]


def ipv4_spellings(address: IPv4Address) -> list[str]:
    """Every textual form inet_aton or a browser would read as ``address``."""
    n = int(address)
    a, b, c, d = address.packed
    return [
        str(address),
        f"{address}.",
        str(n),
        hex(n),
        f"0X{n:X}",
        f"0{n:o}",
        f"0x{a:x}.0x{b:x}.0x{c:x}.0x{d:x}",
        f"0{a:o}.0{b:o}.0{c:o}.0{d:o}",
        f"{a:#x}.{b}.0{c:o}.{d}",
        f"{a}.{b}.{(c << 8) | d}",
        f"{a}.{(b << 16) | (c << 8) | d}",
        f"0x{a:02x}.{b}.{c}.{d:#x}",
        f"[::ffff:{address}]",
        f"[::ffff:{n >> 16:x}:{n & 0xFFFF:x}]",
        f"[0:0:0:0:0:FFFF:{address}]",
        f"[64:ff9b::{address}]",
        f"[2002:{n >> 16:x}:{n & 0xFFFF:x}::1]",
    ]


@given(refused_ipv4(), st.sampled_from(["", ":8443", ":443"]))
def test_every_spelling_of_a_refused_ipv4_is_refused(address: IPv4Address, port: str) -> None:
    for spelling in ipv4_spellings(address):
        with pytest.raises(UnsafeURLError):
            POLICY.check_url(f"https://{spelling}{port}/hook")


@given(refused_ipv4())
def test_refused_ipv4_refused_in_every_ipv6_embedding(address: IPv4Address) -> None:
    n = int(address)
    embeddings = [
        IPv6Address((0xFFFF << 32) | n),  # IPv4-mapped
        IPv6Address(n),  # IPv4-compatible
        IPv6Address((0x64FF9B << 96) | n),  # NAT64
        IPv6Address((0x2002 << 112) | (n << 80) | 1),  # 6to4
        IPv6Address((0x20010000 << 96) | (0x08080808 << 64) | (n ^ 0xFFFFFFFF)),  # Teredo
    ]
    for embedded in embeddings:
        with pytest.raises(UnsafeURLError):
            POLICY.check_address("example.com", embedded)


@given(st.integers(0, 2**32 - 1).map(IPv4Address).filter(lambda a: not is_refused(a)))
def test_every_spelling_of_a_public_ipv4_means_the_same_address(address: IPv4Address) -> None:
    for spelling in ipv4_spellings(address)[:12]:  # the IPv4 spellings
        assert POLICY.check_url(f"https://{spelling}/").ip == address
