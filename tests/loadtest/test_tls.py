"""https targets: real TLS, a certificate from a test CA, trusted through ``SSL_CERT_FILE``."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest
import trio

from .helpers import QUICK, TIMEOUT, Request, bench, raw_server, rpc_result, task

trustme = pytest.importorskip("trustme")


async def _completed(request: Request) -> bytes:
    return rpc_result({"task": task("COMPLETED")})


@pytest.fixture
def tls(tmp_path: Path) -> tuple[ssl.SSLContext, Path]:
    ca = trustme.CA()
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server)
    ca_file = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    return server, ca_file


async def test_https_target(tls: tuple[ssl.SSLContext, Path]) -> None:
    server, ca_file = tls
    with trio.fail_after(TIMEOUT):
        async with raw_server(_completed, server) as url:
            assert url.startswith("https://")
            run = await bench(
                url, "--binding", "jsonrpc", "--json", *QUICK, env={"SSL_CERT_FILE": str(ca_file)}
            )
    assert run.status == 0, run
    result = run.only()
    assert result["errors"] == 0
    assert result["ops"] > 0


async def test_an_untrusted_certificate_is_a_clear_error(tls: tuple[ssl.SSLContext, Path]) -> None:
    server, _ = tls
    with trio.fail_after(TIMEOUT):
        async with raw_server(_completed, server) as url:
            run = await bench(url, "--binding", "jsonrpc", *QUICK)
    assert run.status == 1
    assert run.stderr.startswith(f"a2a-actors bench: cannot reach {url}: ")
