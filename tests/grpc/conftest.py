"""Fixtures of the gRPC tests (shared by the server and client tests: add, never reshape)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.grpc.grpc_servers import (
    FakeService,
    GrpcServer,
    run_fake_grpc_server,
    run_our_grpc_server,
    run_sdk_grpc_server,
)


@pytest.fixture(scope="session")
def sdk_grpc() -> Iterator[GrpcServer]:
    """The official SDK's gRPC server serving the interop scenario agent."""
    with run_sdk_grpc_server() as server:
        yield server


@pytest.fixture
def fake_grpc() -> Iterator[tuple[GrpcServer, FakeService]]:
    """A fresh :class:`~tests.grpc.grpc_servers.FakeService` and its server."""
    with run_fake_grpc_server() as served:
        yield served


@pytest.fixture(scope="session")
def ours_grpc() -> Iterator[str]:
    """Our server serving the client suite's scenario agent over HTTP and gRPC; its URL."""
    with run_our_grpc_server() as url:
        yield url
