"""Push over real HTTPS: a local TLS receiver with a throwaway CA (both backends).

Delivery connects to the address it resolved and checked (the pinned address, 127.0.0.1
here), never to what the URL's name might resolve to later, while TLS still verifies the
certificate against the URL's *host name* (SNI and hostname check). The names used
(``hooks.test``) are not resolvable by the system at all: only the test's resolver knows
them, so a delivery that arrives went to the pinned address. A certificate for another
name, for the pinned IP address only, or from an unknown CA is refused: the TCP connection
is made, the handshake fails, nothing is posted and the event is given up.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from a2a_actors.protocol import codec
from a2a_actors.protocol._models import (
    StreamResponse,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_actors.protocol._requests import TaskPushNotificationConfig
from a2a_actors.push._delivery import PushDelivery, Resolver
from a2a_actors.push._policy import IPAddress, PushPolicy
from a2a_actors.server import ServerConfig
from tests.server.agents import scenario_agent
from tests.server.helpers import JSON_HEADERS as V1, envelope, send_params, served

from .receiver import Received, Receiver, receiver

pytestmark = pytest.mark.anyio

TIMEOUT = 10.0
TOKEN = "tok-tls-3c9a"
LOOPBACK = ipaddress.ip_address("127.0.0.1")


@pytest.fixture(params=["trio", "asyncio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend


# -- a throwaway PKI -----------------------------------------------------------------------


@dataclass(frozen=True)
class Authority:
    """A CA of one test: issues server certificates; ``client_context`` trusts only it."""

    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey
    folder: Path

    @classmethod
    def create(cls, folder: Path, name: str = "a2a-actors test CA") -> Authority:
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    key_cert_sign=True,
                    crl_sign=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False
            )
            .sign(key, hashes.SHA256())
        )
        folder.mkdir(parents=True, exist_ok=True)
        return cls(cert, key, folder)

    @property
    def ca_file(self) -> Path:
        path = self.folder / "ca.pem"
        if not path.exists():
            path.write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))
        return path

    def client_context(self) -> ssl.SSLContext:
        """What a delivery trusts: this CA only, hostname checking on (the default)."""
        context = ssl.create_default_context(cafile=str(self.ca_file))
        assert context.check_hostname
        return context

    def server_context(
        self, *, names: Sequence[str] = (), addresses: Sequence[IPAddress] = ()
    ) -> ssl.SSLContext:
        """A TLS server context with a certificate for exactly ``names`` and ``addresses``."""
        key = ec.generate_private_key(ec.SECP256R1())
        alt: list[x509.GeneralName] = [x509.DNSName(n) for n in names]
        alt += [x509.IPAddress(a) for a in addresses]
        label = names[0] if names else str(addresses[0])
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, label)]))
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(alt), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()),
                critical=False,
            )
            .sign(self.key, hashes.SHA256())
        )
        stem = self.folder / f"server-{x509.random_serial_number()}"
        cert_file, key_file = stem.with_suffix(".pem"), stem.with_suffix(".key")
        cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key_file.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert_file, key_file)
        return context


@pytest.fixture
def ca(tmp_path: Path) -> Authority:
    return Authority.create(tmp_path / "pki")


# -- delivery over a real transport ----------------------------------------------------------


class Configs:
    """The push configs of one task."""

    def __init__(self, task_id: str, url: str) -> None:
        self.task_id = task_id
        self.config = TaskPushNotificationConfig(url=url, id="hook", task_id=task_id, token=TOKEN)

    def configs_for(self, task_id: str) -> Sequence[TaskPushNotificationConfig]:
        return [self.config] if task_id == self.task_id else []


def loopback_resolver(*names: str) -> Resolver:
    """Resolves ``names`` (only) to 127.0.0.1; any other name is an error."""

    async def resolve(host: str, port: int) -> Sequence[IPAddress]:
        if host not in names:
            raise OSError(f"{host} does not resolve")
        return [LOOPBACK]

    return resolve


def loopback_policy(*names: str) -> PushPolicy:
    """https only; loopback admitted for ``names`` and nothing else."""

    def allow(host: str, address: IPAddress | None) -> bool:
        return host in names and (address is None or address.is_loopback)

    return PushPolicy(allow=allow)


def events(task_id: str) -> list[StreamResponse]:
    return [
        StreamResponse(
            task=Task(id=task_id, context_id="ctx", status=TaskStatus(state=TaskState.SUBMITTED))
        ),
        StreamResponse(
            status_update=TaskStatusUpdateEvent(
                task_id=task_id, context_id="ctx", status=TaskStatus(state=TaskState.COMPLETED)
            )
        ),
    ]


@asynccontextmanager
async def delivering(url: str, name: str, trust: ssl.SSLContext) -> AsyncIterator[PushDelivery]:
    """A PushDelivery of one task's events to ``url`` over a verifying transport."""
    delivery = PushDelivery(
        Configs("t1", url),
        policy=loopback_policy(name),
        resolver=loopback_resolver(name),
        transport=httpx.AsyncHTTPTransport(retries=0, verify=trust),
        max_attempts=1,
        timeout=TIMEOUT,
    )
    async with anyio.create_task_group() as tg:
        await tg.start(delivery.run)
        for event in events("t1"):
            delivery.task_event("t1", None, event, terminal=False)
        await delivery.wait_idle()
        yield delivery
        tg.cancel_scope.cancel()


def assert_delivered(hooks: Receiver, delivery: PushDelivery, name: str) -> None:
    assert [codec.decode(r.body, StreamResponse) for r in hooks.requests] == events("t1")
    for request in hooks.requests:
        assert request.target == "/a2a?x=1"
        assert request.headers["host"] == f"{name}:{hooks.port}"
        assert request.headers["x-a2a-notification-token"] == TOKEN
    assert hooks.handshake_failures == 0
    stats = delivery.statistics()
    assert (stats.delivered, stats.gave_up) == (2, 0)


async def assert_refused(hooks: Receiver, delivery: PushDelivery) -> None:
    """Connected to the pinned address, refused the certificate, posted nothing."""
    await hooks.wait_handshake_failures(2)  # one connection per event (one attempt each)
    assert hooks.requests == []
    assert hooks.connections == 0  # no handshake completed
    stats = delivery.statistics()
    assert (stats.delivered, stats.gave_up) == (0, 2)


@pytest.mark.parametrize("name", ["hooks.test", "localhost"])
async def test_a_certificate_for_the_host_name_is_accepted_at_the_pinned_address(
    ca: Authority, name: str
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with (
            receiver(tls=ca.server_context(names=[name])) as hooks,
            delivering(
                f"https://{name}:{hooks.port}/a2a?x=1", name, ca.client_context()
            ) as delivery,
        ):
            assert_delivered(hooks, delivery, name)


@pytest.mark.parametrize(
    ("served_names", "served_addresses"),
    [(["other.test"], []), ([], [LOOPBACK]), (["hooks.test.evil"], [])],
    ids=["another-name", "the-pinned-address-only", "a-longer-name"],
)
async def test_a_certificate_not_for_the_host_name_is_refused(
    ca: Authority, served_names: list[str], served_addresses: list[IPAddress]
) -> None:
    """Even a certificate valid for 127.0.0.1, the address connected to, is refused: the
    check is against the URL's host name."""
    context = ca.server_context(names=served_names, addresses=served_addresses)
    with anyio.fail_after(TIMEOUT):
        async with (
            receiver(tls=context) as hooks,
            delivering(
                f"https://hooks.test:{hooks.port}/a2a?x=1", "hooks.test", ca.client_context()
            ) as delivery,
        ):
            await assert_refused(hooks, delivery)


async def test_a_certificate_from_an_unknown_authority_is_refused(
    ca: Authority, tmp_path: Path
) -> None:
    stranger = Authority.create(tmp_path / "stranger", name="not trusted")
    with anyio.fail_after(TIMEOUT):
        async with (
            receiver(tls=stranger.server_context(names=["hooks.test"])) as hooks,
            delivering(
                f"https://hooks.test:{hooks.port}/a2a?x=1", "hooks.test", ca.client_context()
            ) as delivery,
        ):
            await assert_refused(hooks, delivery)


# -- through a served agent: the server's own transport, trusting the system store ----------


#: What the scenario agent's "x" pushes: its Task, its artifact, its COMPLETED status.
PUSHED = ("task", "artifactUpdate", "statusUpdate")


def _completed(requests: list[Received]) -> bool:
    return any(
        r.json().get("statusUpdate", {}).get("status", {}).get("state") == "TASK_STATE_COMPLETED"
        for r in requests
    )


@pytest.mark.parametrize("certified", [True, False], ids=["right-name", "wrong-name"])
async def test_a_served_agent_pushes_over_verified_https(
    ca: Authority, monkeypatch: pytest.MonkeyPatch, certified: bool
) -> None:
    """The server's default delivery verifies against the trust store (here only our CA,
    through ``SSL_CERT_FILE``) and the URL's host name, and connects to the pinned address."""
    monkeypatch.setenv("SSL_CERT_FILE", str(ca.ca_file))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    config = ServerConfig(
        push_notifications=True,
        push_allow=loopback_policy("hooks.test").allow,
        push_resolver=loopback_resolver("hooks.test"),
        push_max_attempts=1,
    )
    served_name = "hooks.test" if certified else "other.test"
    with anyio.fail_after(TIMEOUT):
        async with (
            receiver(tls=ca.server_context(names=[served_name])) as hooks,
            served(scenario_agent, config) as url,
            httpx.AsyncClient(base_url=url, timeout=TIMEOUT) as http,
        ):
            hook = {"id": "hook", "url": f"https://hooks.test:{hooks.port}/a2a", "token": TOKEN}
            params = send_params("x", configuration={"taskPushNotificationConfig": hook})
            reply = await http.post("/", content=envelope("SendMessage", params), headers=V1)
            task = reply.json()["result"]["task"]
            assert task["status"]["state"] == "TASK_STATE_COMPLETED"
            if certified:
                await hooks.wait_until(_completed)
                kinds = [next(iter(r.json())) for r in hooks.requests]
                assert kinds == list(PUSHED)
                assert {r.headers["host"] for r in hooks.requests} == {f"hooks.test:{hooks.port}"}
                assert hooks.handshake_failures == 0
            else:  # every event was tried once, and refused
                await hooks.wait_handshake_failures(len(PUSHED))
                assert hooks.requests == []
